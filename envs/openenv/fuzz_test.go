package openenv

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	_ "github.com/graftrl/graftrl/envs/maze"
)

// seedMessages are client messages, well-formed and not, for the server's fuzz target.
func seedMessages() []string {
	return []string{
		`{"type":"reset","data":{"seed":7}}`, `{"type":"reset"}`, `{"type":"reset","data":{"seed":-3,"episode_id":"e","episode_seed":5}}`,
		`{"type":"step","data":{"message":"up"}}`, `{"type":"step","data":{"message":"jump","metadata":{}}}`,
		`{"type":"state"}`, `{"type":"close"}`, `{"type":"mcp","data":{}}`, `{"type":"step","data":{"message":1}}`,
		`{"type":"reset","extra":true}`, `{`, `[]`, `null`, `""`, `{"type":null}`, `{"type":"step","data":null}`,
		`{"type":"reset","data":{"seed":1.5}}`, "{\"type\":\"step\",\"data\":{\"message\":\"\xff\"}}",
	}
}

// FuzzServerMessage feeds arbitrary bytes to the message handler of a maze session, after a reset
// or not: it never panics; every reply is a well-formed message the client parses; an error has a
// known code and closes the session exactly when the protocol says so; a session that stays open
// still serves a reset.
func FuzzServerMessage(f *testing.F) {
	srv, err := NewServer(ServerOptions{Env: "maze"})
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range seedMessages() {
		f.Add(false, []byte(m))
		f.Add(true, []byte(m))
	}
	known := map[string]bool{CodeInvalidJSON: true, CodeUnknownType: true, CodeValidation: true, CodeExecution: true,
		CodeCapacityReached: true, CodeFactory: true, CodeSession: true}
	f.Fuzz(func(t *testing.T, started bool, msg []byte) {
		ss := &session{srv: srv}
		if err := ss.build(); err != nil {
			t.Fatal(err)
		}
		if started {
			if r, _ := ss.handle([]byte(`{"type":"reset","data":{"seed":3}}`)); !json.Valid(r) {
				t.Fatalf("reset reply %s", r)
			}
		}
		reply, closeAfter := ss.handle(msg)
		if reply == nil {
			var m map[string]any
			if !closeAfter || json.Unmarshal(msg, &m) != nil || len(m) != 1 || m["type"] != "close" {
				t.Fatalf("%q: no reply (close %v) to a message that is not a close", msg, closeAfter)
			}
			return
		}
		typ, data, err := parseEnvelope(reply)
		if err != nil || !json.Valid(reply) {
			t.Fatalf("%q: malformed reply %s: %v", msg, reply, err)
		}
		switch typ {
		case "error":
			se := serverErrorOf(data)
			if !known[se.Code] || se.Message == "" || closeAfter != se.ClosesSession() {
				t.Fatalf("%q: error reply %s, close %v", msg, reply, closeAfter)
			}
		case "observation":
			r, err := parseMessage(reply, parseConfig{})
			if err != nil || (r.obs.Done && r.obs.Truncated) || r.key == "" {
				t.Fatalf("%q: observation %s parses as %+v, %v", msg, reply, r, err)
			}
		case "state":
		default:
			t.Fatalf("%q: reply of type %q", msg, typ)
		}
		if closeAfter {
			return
		}
		r, _ := ss.handle([]byte(`{"type":"reset","data":{"seed":4}}`))
		if typ, _, err := parseEnvelope(r); err != nil || typ != "observation" {
			t.Fatalf("after %q the session cannot reset: %s", msg, r)
		}
	})
}

// FuzzClientObservation feeds arbitrary replies to the client's parser, with each text and key
// option: it never panics; an observation is never both done and truncated; parsing is
// deterministic (the canonical hash does not depend on map order).
func FuzzClientObservation(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var fx struct {
			Turns []struct {
				Reply json.RawMessage `json:"reply"`
			} `json:"turns"`
		}
		if err := json.Unmarshal(raw, &fx); err != nil {
			f.Fatal(err)
		}
		for i, tu := range fx.Turns {
			if tu.Reply != nil {
				f.Add(uint8(i), []byte(tu.Reply))
			}
		}
	}
	for i, s := range []string{
		`{"type":"observation","data":{"observation":{},"reward":null,"done":false}}`,
		`{"type":"observation","data":{"observation":{"text":"a","step_reward":"x"},"reward":1,"done":true}}`,
		`{"type":"observation","data":{"observation":{"text":"a","step_reward":-0.1,"truncated":true,"info":{"distance":1e3}},"reward":true,"done":true}}`,
		`{"type":"observation","data":{"observation":{"messages":[{"content":"hi"}],"b":{"z":1,"a":[1.0,2]}},"reward":"1","done":"yes"}}`,
		`{"type":"error","data":{"message":"full","code":"CAPACITY_REACHED","active_sessions":1,"max_sessions":1}}`,
		`{"type":"error","data":null}`, `{"type":"state","data":{}}`, `{}`, `[]`, `null`, ``,
	} {
		f.Add(uint8(i), []byte(s))
	}
	configs := []parseConfig{{}, {textField: "prompt"}, {textField: "messages", stateKeyField: "fen"},
		{stateKeyField: "info", instructionField: "text"}}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		cfg := configs[int(which)%len(configs)]
		r, err := parseMessage(raw, cfg)
		r2, err2 := parseMessage(raw, cfg)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(r, r2) {
			t.Fatalf("%q: two parses differ: %+v %v / %+v %v", raw, r, err, r2, err2)
		}
		var se *ServerError
		if errors.As(err, &se) && se.Code == "" {
			t.Fatalf("%q: server error without a code", raw)
		}
		if err == nil && r.obs.Done && r.obs.Truncated {
			t.Fatalf("%q: done and truncated: %+v", raw, r.obs)
		}
	})
}
