package openenv_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/openenv"
)

// fixture is a recorded OpenEnv session (see testdata/README.md).
type fixture struct {
	Server   string          `json:"server"`
	Metadata json.RawMessage `json:"metadata"`
	Options  map[string]any  `json:"options"`
	Turns    []fixtureTurn   `json:"turns"`
}

type fixtureTurn struct {
	Call      string          `json:"call"`
	Seed      int64           `json:"seed"`
	Action    string          `json:"action"`
	Request   json.RawMessage `json:"request"`
	Reply     json.RawMessage `json:"reply"`
	Want      map[string]any  `json:"want"`
	WantError string          `json:"want_error"`
}

// replay serves a fixture: its /metadata, and on /ws the recorded reply to each expected request,
// in order, across connections.
func replay(t *testing.T, f *fixture) string {
	t.Helper()
	var mu sync.Mutex
	var exchanges []fixtureTurn
	for _, tu := range f.Turns {
		if tu.Request != nil {
			exchanges = append(exchanges, tu)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metadata", func(w http.ResponseWriter, _ *http.Request) {
		if string(f.Metadata) == "null" || f.Metadata == nil {
			http.NotFound(w, nil)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(f.Metadata)
	})
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, raw, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if string(raw) == `{"type":"close"}` {
				return // the client's Close: no reply
			}
			mu.Lock()
			if len(exchanges) == 0 {
				mu.Unlock()
				t.Errorf("unexpected request %s", raw)
				return
			}
			ex := exchanges[0]
			exchanges = exchanges[1:]
			mu.Unlock()
			var got, want any
			json.Unmarshal(raw, &got)
			json.Unmarshal(ex.Request, &want)
			if !jsonEqual(got, want) {
				t.Errorf("request %s, want %s", raw, ex.Request)
				return
			}
			if err := c.Write(r.Context(), websocket.MessageText, ex.Reply); err != nil {
				return
			}
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(exchanges) > 0 {
			t.Errorf("%d recorded requests were never sent, the first %s", len(exchanges), exchanges[0].Request)
		}
	})
	return "ws://" + strings.TrimPrefix(srv.URL, "http://")
}

var hexKey = regexp.MustCompile(`^[0-9a-f]{16}$`)

// TestRecordedSessions replays the recorded sessions of testdata: the client must send exactly the
// recorded requests and read every reply as the fixture says (see testdata/README.md).
func TestRecordedSessions(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) < 4 {
		t.Fatalf("found %d fixtures", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var f fixture
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			opts := envs.Options{"url": replay(t, &f)}
			for k, v := range f.Options {
				opts[k] = v
			}
			e, err := envs.New(openenv.Name, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer e.(interface{ Close() error }).Close()
			keys := make([]string, len(f.Turns))
			for i, tu := range f.Turns {
				var obs envs.Observation
				var ins string
				switch tu.Call {
				case "reset":
					ins, obs, err = e.Reset(tu.Seed)
				case "step":
					obs, err = e.Step(tu.Action)
				default:
					t.Fatalf("turn %d: unknown call %q", i, tu.Call)
				}
				if tu.WantError != "" {
					if err == nil || !strings.Contains(err.Error(), tu.WantError) {
						t.Errorf("turn %d %s: error %v, want one containing %q", i, tu.Call, err, tu.WantError)
					}
					continue
				}
				if err != nil {
					t.Fatalf("turn %d %s: %v", i, tu.Call, err)
				}
				keys[i] = e.StateKey()
				checkWant(t, i, tu.Want, ins, obs, keys)
			}
		})
	}
}

// checkWant compares the fields a fixture turn names.
func checkWant(t *testing.T, i int, want map[string]any, ins string, o envs.Observation, keys []string) {
	t.Helper()
	got := map[string]any{"instruction": ins, "text": o.Text, "reward": o.Reward, "outcome": o.Outcome, "done": o.Done,
		"truncated": o.Truncated, "success": o.Info.Success, "invalid": o.Info.Invalid, "distance": float64(o.Info.Distance)}
	for k, w := range want {
		switch k {
		case "state_key":
			ws := w.(string)
			key := keys[i]
			switch {
			case ws == "#hash":
				if !hexKey.MatchString(key) {
					t.Errorf("turn %d: state key %q, want a 16-hex-digit hash", i, key)
				}
			case strings.HasPrefix(ws, "#same:"), strings.HasPrefix(ws, "#differs:"):
				name, n, _ := strings.Cut(ws, ":")
				j, _ := strconv.Atoi(n)
				if (key == keys[j]) != (name == "#same") {
					t.Errorf("turn %d: state key %q vs turn %d's %q, want %s", i, key, j, keys[j], name)
				}
			case key != ws:
				t.Errorf("turn %d: state key %q, want %q", i, key, ws)
			}
		case "extra":
			if !jsonEqual(o.Info.Extra, w) {
				t.Errorf("turn %d: Info.Extra %v, want %v", i, o.Info.Extra, w)
			}
		default:
			g, ok := got[k]
			if !ok {
				t.Fatalf("turn %d: unknown want key %q", i, k)
			}
			if !jsonEqual(g, w) {
				t.Errorf("turn %d: %s = %v, want %v (observation %+v)", i, k, g, w, o)
			}
		}
	}
}
