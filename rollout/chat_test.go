package rollout

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	_ "github.com/graftrl/graftrl/envs/all"
	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/tokens/bpe"
)

func TestParseAction(t *testing.T) {
	grid := []string{"up", "down", "left", "right"}
	calc := []string{"add", "sub", "3", "4", "submit"}
	for _, c := range []struct {
		text  string
		words []string
		want  string
	}{
		{"up", grid, "up"},
		{"Up.", grid, "up"},
		{"  \n\n  Right\nleft", grid, "right"},
		{"I move left, then up", grid, "left"},
		{"\"down\"", grid, "down"},
		{"up up", grid, "up up"},                    // a run of action words is kept whole (and refused by a one-word env)
		{"go north", grid, "go north"},              // no action word: the line, which the env refuses
		{"up-open", grid, "up-open"},                // an observation word is not an action word
		{"Add 3 4 please", calc, "add 3 4"},         // a multi-word action
		{"then submit.", calc, "submit"},            // the first action word starts the run
		{"Anything At All", nil, "anything at all"}, // no action words: the first line, lower case
		{"", grid, ""},
	} {
		if got := ParseAction(c.text, c.words); got != c.want {
			t.Errorf("ParseAction(%q) = %q; want %q", c.text, got, c.want)
		}
	}
}

// smolLM2Tokenizer is SmolLM2's tokenizer as scripts/install-smollm2.sh installs the model; the
// test skips without it, and fails instead when GRAFTRL_SMOLLM2=1 (as .ci/run sets).
func smolLM2Tokenizer(t *testing.T) *bpe.Tokenizer {
	t.Helper()
	path, err := modelfile.InstalledSmolLM2()
	if err != nil {
		if os.Getenv("GRAFTRL_SMOLLM2") == "1" {
			t.Fatalf("GRAFTRL_SMOLLM2=1: %v", err)
		}
		t.Skip(err)
	}
	g, err := modelfile.OpenGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tok, err := bpe.FromGGUF(g)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// A demonstrated episode in the chat format is, token for token, the model's own chat template
// (tokens/bpe's ChatML, an independent rendering) applied to its turns and encoded whole; its
// assistant tokens and their end of turn, and nothing else, are the steps' tokens.
func TestChatLayout(t *testing.T) {
	tok := smolLM2Tokenizer(t)
	for _, layout := range []string{LayoutEpisode, LayoutWindow} {
		f, err := NewChat(tok, ChatOptions{System: "Count to three. Task: {task}. Actions: {actions}.", User: "Now: {observation}",
			ActionWords: []string{"inc", "noop"}, Examples: []ChatExample{{User: "n7", Assistant: "inc"}}})
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Layout: layout, WindowTurns: 1, MaxLen: 512, ActionMaxTokens: 6}
		c, err := NewCollector(cfg, f, func() (envs.Env, error) { return &countEnv{max: 8}, nil }, 1)
		if err != nil {
			t.Fatal(err)
		}
		teacher := func(envs.Env, *rand.Rand) (string, bool, error) { return "inc", true, nil }
		b, _, err := c.Demonstrate(teacher, Request{Tasks: []int64{1}, Group: 1}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		tr := b.Trajs[0]
		if !tr.Success || len(tr.Steps) != 3 {
			t.Fatalf("%s: success %v after %d steps; want success after 3", layout, tr.Success, len(tr.Steps))
		}
		tmpl, err := tok.ChatTemplate()
		if err != nil {
			t.Fatal(err)
		}
		system := bpe.Message{Role: "system", Content: "Count to three. Task: count. Actions: inc, noop."}
		shot := []bpe.Message{{Role: "user", Content: "Now: n7"}, {Role: "assistant", Content: "inc"}}
		turn := func(obs string) []bpe.Message {
			return []bpe.Message{{Role: "user", Content: "Now: " + obs}, {Role: "assistant", Content: "inc"}}
		}
		var want [][]bpe.Message // the chat of each row
		if layout == LayoutEpisode {
			want = [][]bpe.Message{slices.Concat([]bpe.Message{system}, shot, turn("n0"), turn("n1"), turn("n2"))}
		} else { // the last turn before the current one
			want = [][]bpe.Message{slices.Concat([]bpe.Message{system}, shot, turn("n0")),
				slices.Concat([]bpe.Message{system}, shot, turn("n0"), turn("n1")),
				slices.Concat([]bpe.Message{system}, shot, turn("n1"), turn("n2"))}
		}
		if len(tr.Rows) != len(want) {
			t.Fatalf("%s: %d rows; want %d", layout, len(tr.Rows), len(want))
		}
		end, _ := tok.ID("<|im_end|>")
		inc := tok.Encode(nil, "inc")
		for i, r := range tr.Rows {
			text := tmpl.Render(want[i], false)
			if got := tok.Encode(nil, text); !slices.Equal(r.Tokens, got) {
				t.Errorf("%s row %d:\n%q\nwant the template's\n%q", layout, i, tok.Decode(r.Tokens), text)
				continue
			}
			// The steps' tokens: each "inc" of the episode's assistant turns and its <|im_end|>,
			// which are the last tokens of the rendered assistant turns after the example's.
			var trained []int32
			for j, k := range r.StepOf {
				if k >= 0 {
					trained = append(trained, r.Tokens[j])
				}
			}
			turns := len(want[i])/2 - 1 // user/assistant pairs after the system turn and the example
			var wantTrained []int32
			for range turns {
				wantTrained = append(append(wantTrained, inc...), end)
			}
			if layout == LayoutWindow {
				wantTrained = append(inc, end) // one step a row: the earlier turn is context
			}
			if !slices.Equal(trained, wantTrained) {
				t.Errorf("%s row %d: trained tokens %q; want %q", layout, i, tok.Decode(trained), tok.Decode(wantTrained))
			}
		}
	}
}

// chatty is a decoder that always prefers one token: its turns never end by themselves.
type chatty struct {
	tok  int32
	size int
}

func (d chatty) Step(tokens, _ []int32, _ []bool) ([]float32, error) {
	out := make([]float32, len(tokens)*d.size)
	for r := range tokens {
		out[r*d.size+int(d.tok)] = 10
	}
	return out, nil
}

// An assistant turn that reaches the token cap is closed by a forced <|im_end|> (context, not
// trained) and is the empty action, which the env refuses as invalid.
func TestChatCappedTurn(t *testing.T) {
	tok := smolLM2Tokenizer(t)
	f, err := NewChat(tok, ChatOptions{ActionWords: []string{"inc"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(Config{Layout: LayoutEpisode, MaxLen: 400, ActionMaxTokens: 4}, f,
		func() (envs.Env, error) { return &countEnv{max: 2}, nil }, 1)
	if err != nil {
		t.Fatal(err)
	}
	word := tok.Encode(nil, "inc")[0] // "inc" alone, again and again, never ends its turn
	b, _, err := c.Collect(chatty{word, f.Size()}, Request{Tasks: []int64{1}, Group: 1, Greedy: true}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	tr := b.Trajs[0]
	if len(tr.Steps) != 2 || !tr.Steps[0].Invalid || tr.Steps[0].Action != "" {
		t.Fatalf("steps %+v; want two invalid empty actions", tr.Steps)
	}
	r := tr.Rows[0]
	end, _ := tok.ID("<|im_end|>")
	var trained, forced int
	for i, k := range r.StepOf {
		if k >= 0 {
			trained++
			if r.Tokens[i] != word {
				t.Errorf("trained token %q; want only the sampled ones", tok.Decode([]int32{r.Tokens[i]}))
			}
		} else if r.Tokens[i] == end && i > 0 && r.Tokens[i-1] == word {
			forced++
		}
	}
	if trained != 8 || forced != 2 {
		t.Errorf("%d trained tokens and %d forced ends; want 2 turns × 4 tokens and 2", trained, forced)
	}
}

// The empty action, which a capped turn becomes, is invalid in every shipped env (a remote
// env's server decides for itself).
func TestEmptyActionInvalid(t *testing.T) {
	for _, name := range envs.Names() {
		if name == "openenv" {
			continue
		}
		e, err := envs.New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Reset(1); err != nil {
			t.Fatal(err)
		}
		obs, err := e.Step("")
		if err != nil {
			t.Fatalf("%s: Step(\"\"): %v", name, err)
		}
		if !obs.Info.Invalid {
			t.Errorf("%s: the empty action is valid (%+v); a capped chat turn would act", name, obs)
		}
		envs.Close(e)
	}
	if !strings.Contains(DefaultChatUser, "{observation}") {
		t.Error("DefaultChatUser has no {observation}")
	}
}
