package envs_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/envs"
	_ "github.com/graftrl/graftrl/envs/all"
)

// play charges no turn for a line that cannot be meant as an action: an empty line, an arrow
// key's escape sequence, help and ?, which print the env's action words and what its picture's
// symbols mean. Only the real action that follows steps the env, as turn 1.
func TestPlayFreeLines(t *testing.T) {
	env, err := envs.New("sokoban", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer envs.Close(env)
	var out bytes.Buffer
	if err := envs.Play(strings.NewReader("\n   \n\x1b[A\nhelp\n?\nleft\n"), &out, env, 0); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n := strings.Count(got, "turn 1/"); n != 6 {
		t.Errorf("%d prompts for turn 1, want 6 (five free lines, then the action):\n%s", n, got)
	}
	if n := len(regexp.MustCompile(`> reward -?[0-9]`).FindAllString(got, -1)); n != 1 {
		t.Errorf("%d steps, want 1 (only the action):\n%s", n, got)
	}
	for _, want := range []string{
		"actions are made of: up down left right (type help for help)",
		"not sent: the line holds control characters (an arrow key?)",
		"type one action per line (actions are made of: up down left right)\nsymbols: '#' wall, '@' player ('+' on a target), '$' box ('*' on a target), '.' target, '-' floor",
		"an empty line, an arrow key or help costs no turn",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("play's output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "symbols: ") != 2 {
		t.Errorf("help and ? should each print the symbols:\n%s", got)
	}
}

// Every grid env explains its picture's symbols, and describe prints them.
func TestLegends(t *testing.T) {
	for _, name := range []string{"maze", "frozenlake", "keydoor", "sokoban"} {
		env, err := envs.New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		l, ok := env.(envs.Legender)
		envs.Close(env)
		if !ok || !strings.Contains(l.Legend(), "'@'") {
			t.Errorf("%s: no legend of its picture's symbols", name)
			continue
		}
		var out bytes.Buffer
		if err := envs.Describe(&out, name, nil, 0); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "symbols of its picture (graftrl play): "+l.Legend()+"\n") {
			t.Errorf("envs describe %s lacks the symbols:\n%s", name, out.String())
		}
	}
}
