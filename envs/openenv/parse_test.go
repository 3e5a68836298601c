package openenv

import (
	"reflect"
	"testing"
)

// TestParseIgnoresOpenEnvMetadata parses replies as OpenEnv 0.10's servers send them, the
// observation's metadata kept in the observation and, when not empty, repeated in the envelope
// (scripts/interop/openenv_corridor.py's server sends the first): the text, the hashed state key
// and the observation are those of the same reply without metadata.
func TestParseIgnoresOpenEnvMetadata(t *testing.T) {
	plain := `{"type":"observation","data":{"observation":{"text":"pos 1 goal 4"},"reward":0.0,"done":false}}`
	want, err := parseMessage([]byte(plain), parseConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// The first 16 hex digits of the SHA-256 of {"text":"pos 1 goal 4"} (Python's hashlib).
	if want.key != "a743e204466aaf34" || want.obs.Text != "pos 1 goal 4" {
		t.Fatalf("plain reply parses as %+v", want)
	}
	for _, raw := range []string{
		`{"type":"observation","data":{"observation":{"metadata":{},"text":"pos 1 goal 4"},"reward":0.0,"done":false}}`,
		`{"type":"observation","data":{"observation":{"metadata":{"turn":3},"text":"pos 1 goal 4"},"reward":0.0,"done":false,"metadata":{"turn":3}}}`,
	} {
		got, err := parseMessage([]byte(raw), parseConfig{})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s parses as %+v, %v; want %+v", raw, got, err, want)
		}
	}
}
