package host

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/graftrl/graftrl/internal/interoptest"
	"github.com/graftrl/graftrl/tokens/bpe"
)

// The transformers and llama.cpp checks (scripts/interop/llama_transformers_check.py,
// scripts/interop/llama_cpp_check.py) compare the installed SmolLM2-135M-Instruct as policy/host
// runs it with their own runs of the same GGUF file. TestInteropSmolLM2Export writes graftrl's
// side as smollm2_llama.json into $GRAFTRL_INTEROP_OUT: 20 chats rendered by tokens/bpe's
// ChatML, their ids, the logits of every position and greedy continuations.
//
// The whole logit matrix of the 20 prompts (1,790 positions: 350 MB of float32) would make a
// JSON file of over a gigabyte, so each position carries its 32 largest logits and a rotating
// sixteenth of the vocabulary: position p the ids p mod 16, p mod 16 + 16, …, so that any 16
// consecutive positions cover every id once. The last position of each prompt, the one that
// picks the next token, carries all its logits. Float32 arrays are little-endian bytes (JSON
// base64), so that no value is rounded on the way.

const (
	interopTop    = 32 // largest logits kept per position
	interopStride = 16 // a position keeps every interopStride-th logit
	interopGreedy = 64 // tokens of each greedy continuation
)

// llamaInteropPrompt is one chat of the export and graftrl's values for it.
type llamaInteropPrompt struct {
	Messages            []bpe.Message `json:"messages"`
	AddGenerationPrompt bool          `json:"add_generation_prompt"`
	Text                string        `json:"text"`
	IDs                 []int32       `json:"ids"`
	TopIDs              [][]int32     `json:"top_ids"`    // per position, the largest first
	TopLogits           [][]float32   `json:"top_logits"` // their logits
	LogSumExp           []float64     `json:"logsumexp"`  // per position, over the vocabulary
	Strided             []byte        `json:"strided"`    // [positions][vocab/stride] float32
	Last                []byte        `json:"last"`       // [vocab] float32, the last position
}

// llamaInteropGreedy is a greedy continuation of one of the prompts (no stop token).
type llamaInteropGreedy struct {
	Prompt int     `json:"prompt"`
	Tokens []int32 `json:"tokens"`
}

type llamaInteropExport struct {
	Vocab   int                  `json:"vocab"`
	Top     int                  `json:"top"`
	Stride  int                  `json:"stride"`
	Prompts []llamaInteropPrompt `json:"prompts"`
	Greedy  []llamaInteropGreedy `json:"greedy"`
}

// interopChat is a chat of the export and whether the assistant's turn is opened after it.
type interopChat struct {
	msgs []bpe.Message
	gen  bool // add_generation_prompt
}

// llamaInteropChats are the export's chats: short and long (10 to 300 tokens), digits after
// whitespace (where transformers' GGUF tokenizer splits otherwise, tokenizer_reference.py),
// scripts other than Latin, emoji, code and multi-turn chats.
func llamaInteropChats() []interopChat {
	s := func(c string) bpe.Message { return bpe.Message{Role: "system", Content: c} }
	u := func(c string) bpe.Message { return bpe.Message{Role: "user", Content: c} }
	a := func(c string) bpe.Message { return bpe.Message{Role: "assistant", Content: c} }
	return []interopChat{
		{[]bpe.Message{s("Reply with one word.")}, false},
		{[]bpe.Message{u("Hi")}, true},
		{[]bpe.Message{u("What is 17 × 23? Show the steps.")}, true},
		{[]bpe.Message{s("You are a maze solver."), u("You are at (3, 4). The exit is at (10, 12). Walls block row 7. Which way do you go first?")}, true},
		{[]bpe.Message{u("Explain this Go code:\n```go\nfunc add(a, b int) int {\n\treturn a + b\n}\n```")}, true},
		{[]bpe.Message{u("Fix the bug:\ndef area(r):\n    pi =  3.14159\n    return pi * r **  2\n\nprint(area(  10))")}, true},
		{[]bpe.Message{u("日本語で自己紹介してください。好きな食べ物は何ですか？")}, true},
		{[]bpe.Message{s("Translate into English."), u("中文分词测试。한국어 문장입니다. Привет, мир! Γειά σου Κόσμε.")}, true},
		{[]bpe.Message{u("Describe 👨‍👩‍👧‍👦, 🇫🇷 and 👍🏽 in words. I ❤️ Go 😀")}, true},
		{[]bpe.Message{u("مرحبا بالعالم — שלום עולם — हिन्दी — ไทย. Which languages are these?")}, true},
		{[]bpe.Message{
			u("What is 12 + 30?"), a("12 + 30 = 42."),
			u("And 42 × 2?"), a("42 × 2 = 84."),
			u("Now divide that by 4, then add 1,000."),
		}, true},
		{[]bpe.Message{
			s("You are a careful editor who keeps the author's voice."),
			u("Summarise: The old lighthouse stood at the edge of the cliff for two hundred years. Every night its keeper climbed the ninety-nine steps, trimmed the wick and polished the great lens, so that ships passing in the dark would know where the rocks were. When the electric lamp came in 1921, the keeper stayed on, because the village would not hear of anyone else winding the clock."),
			a("A lighthouse keeper tended the light for decades and stayed on after it was electrified."),
			u("Keep the year and the number of steps, and write it as two sentences."),
			a("For two hundred years a keeper climbed the lighthouse's ninety-nine steps each night to tend its lens. When the electric lamp arrived in 1921, he stayed on to wind the clock."),
			u("Now make it sound like a fairy tale, in at most three sentences, for a six-year-old."),
		}, true},
		{[]bpe.Message{u("Write these in words: 2024-12-06, 3.14159, -42, +1 (555) 010-9999, 1,000,000, 0x1F, 1e-5 and v1.2.3.")}, true},
		{[]bpe.Message{u("Parse this JSON and list its keys:\n{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true},  \"n\":  7}")}, true},
		{[]bpe.Message{u("What does this do?\nSELECT name, COUNT(*) FROM orders WHERE total >  100 GROUP BY name;\n<div class=\"x\">text</div>")}, true},
		{[]bpe.Message{u("naïve café résumé Straße Ünïcödé ÀÉÎÕÜ ﬁ ＡＢＣ ｶﾀｶﾅ — fix the spelling.")}, false},
		{[]bpe.Message{u("Read aloud: ∑∫√∞ → ← ↑ ↓ © ® ™ €100 £5 ¥3 ¼ ½ ①② Ⅻ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟘𝟙𝟚")}, true},
		{[]bpe.Message{
			s("You are in a maze. Answer with one action: move north, move south, move east or move west."),
			u("Walls: north, east. You see a door to the south."), a("move south"),
			u("Walls: west. The key is two steps east."), a("move east"),
			u("Walls: north, south. The key is one step east."),
		}, true},
		{[]bpe.Message{s("Be terse.\tUse tabs\t\tif needed.   "), u("Line one\r\nline two\n\n\n   indented 12 and  34\n\ttabbed 5")}, true},
		{[]bpe.Message{u(interopLongCode)}, true},
	}
}

// interopLongCode is a long prompt (about 300 tokens with the chat around it) of code with
// indentation before digits.
const interopLongCode = "Review this Go function and suggest one improvement:\n```go\n" +
	"// Backoff returns the delay before retry n: 100 ms doubled each time, capped at 30 s.\n" +
	"func Backoff(n int, rng *rand.Rand) time.Duration {\n" +
	"\tif n < 0 {\n\t\tn = 0\n\t}\n" +
	"\td := 100 * time.Millisecond\n" +
	"\tfor i := 0; i < n && d < 30*time.Second; i++ {\n\t\td *= 2\n\t}\n" +
	"\tif d > 30*time.Second {\n\t\td = 30 * time.Second\n\t}\n" +
	"\treturn d - time.Duration(rng.Int63n(int64(d)/5))\n}\n\n" +
	"func TestBackoff(t *testing.T) {\n" +
	"\tif got := Backoff(3, rand.New(rand.NewSource(1))); got > 800*time.Millisecond {\n" +
	"\t\tt.Errorf(\"Backoff(3) = %v, want at most 800 ms\", got)\n" +
	"\t}\n}\n```"

// TestInteropSmolLM2Export writes smollm2_llama.json (above) when $GRAFTRL_INTEROP_OUT is set; the
// installed model is needed. It checks only what the export promises: prompt lengths of 10 to
// 300 tokens, ids that decode back to the rendered text, and full continuations.
func TestInteropSmolLM2Export(t *testing.T) {
	if os.Getenv(interoptest.OutEnv) == "" {
		t.Skipf("%s is not set (scripts/interop/run.sh sets it)", interoptest.OutEnv)
	}
	m, tok := loadSmolLM2(t)
	ct, err := tok.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	ex := llamaInteropExport{Vocab: m.Config().Vocab, Top: interopTop, Stride: interopStride}
	for i, c := range llamaInteropChats() {
		text := ct.Render(c.msgs, c.gen)
		ids := tok.Encode(nil, text)
		t.Logf("chat %d: %d tokens", i, len(ids))
		if len(ids) < 10 || len(ids) > 300 {
			t.Fatalf("chat %d has %d tokens, want 10 to 300", i, len(ids))
		}
		if back := tok.Decode(ids); back != text {
			t.Fatalf("chat %d: ids decode to %q, not the rendered %q", i, back, text)
		}
		rows, err := m.Forward(ids)
		if err != nil {
			t.Fatal(err)
		}
		ex.Prompts = append(ex.Prompts, interopPositions(llamaInteropPrompt{Messages: c.msgs, AddGenerationPrompt: c.gen, Text: text, IDs: ids}, rows))
	}
	for _, p := range []int{1, 3, 4, 10, 17} { // a spread of lengths, languages and turns

		got, err := m.Greedy(ex.Prompts[p].IDs, interopGreedy, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != interopGreedy {
			t.Fatalf("greedy continuation of chat %d has %d tokens, want %d", p, len(got), interopGreedy)
		}
		ex.Greedy = append(ex.Greedy, llamaInteropGreedy{Prompt: p, Tokens: got})
	}
	interoptest.WriteJSON(t, "smollm2_llama.json", ex)
}

// interopPositions fills p's per-position values from the logits rows of its ids.
func interopPositions(p llamaInteropPrompt, rows [][]float32) llamaInteropPrompt {
	for pos, row := range rows {
		top := topLogits(row, interopTop)
		vals := make([]float32, len(top))
		for j, id := range top {
			vals[j] = row[id]
		}
		p.TopIDs = append(p.TopIDs, top)
		p.TopLogits = append(p.TopLogits, vals)
		p.LogSumExp = append(p.LogSumExp, logSumExp(row))
		for id := pos % interopStride; id < len(row); id += interopStride {
			p.Strided = binary.LittleEndian.AppendUint32(p.Strided, math.Float32bits(row[id]))
		}
	}
	for _, v := range rows[len(rows)-1] {
		p.Last = binary.LittleEndian.AppendUint32(p.Last, math.Float32bits(v))
	}
	return p
}

// topLogits returns the ids of the k largest values of row, largest first (the lower id first
// on a tie), by insertion into a sorted list of k.
func topLogits(row []float32, k int) []int32 {
	top := make([]int32, 0, k+1)
	for i, v := range row {
		if len(top) == k && v <= row[top[k-1]] {
			continue
		}
		j := len(top)
		for j > 0 && v > row[top[j-1]] {
			j--
		}
		top = append(top, 0)
		copy(top[j+1:], top[j:])
		top[j] = int32(i)
		top = top[:min(len(top), k)]
	}
	return top
}

// logSumExp is log Σ exp(row), in float64.
func logSumExp(row []float32) float64 {
	m := math.Inf(-1)
	for _, v := range row {
		m = max(m, float64(v))
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}
