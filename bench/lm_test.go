package bench

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/modelfile"
	"github.com/graftrl/graftrl/policy/pretrained"
	"github.com/graftrl/graftrl/policy/spec"
)

// TestLlamaSpanFLOPs checks the count on a model small enough to add up by hand: 1 layer, d 4,
// MLP 8, 2 heads of 2 (query width 4), 1 KV head (key width 2), vocabulary 10. A token costs
// 2·(4·(4+2·2) + 4·4 + 3·4·8 + 4·10) = 2·(32+16+96+40) = 368 in products; at position t its
// attention costs 4·(t+1)·4 = 16·(t+1). Positions 2 and 3: 2·368 + 16·3 + 16·4 = 848.
func TestLlamaSpanFLOPs(t *testing.T) {
	c := pretrained.Config{Layers: 1, DModel: 4, Hidden: 8, Heads: 2, KVHeads: 1, HeadDim: 2, Vocab: 10}
	if got := llamaSpanFLOPs(c, 2, 2); got != 848 {
		t.Fatalf("llamaSpanFLOPs = %v, want 848", got)
	}
	// NumParams: embedding 40 + block (norms 8 + q,k,v 4·8 + o 16 + MLP 96) + output norm 4.
	if got := c.NumParams(); got != 40+152+4 {
		t.Fatalf("NumParams = %d, want 196", got)
	}
}

// TestLlamaTrainFLOPs checks the update's count on TestLlamaSpanFLOPs' model, by hand: a token's
// block products 2·(4·8 + 16 + 96) = 288, the output layer 2·4·10 = 80 a position, attention
// 16·(t+1). Two rows of 3 tokens with one output position each: block 864, attention
// 16·(1+2+3) = 96, output 80, so in full 2·3·(864+96+80) = 6240. Rank-1 adapters on attn_q
// (4 × 4) and ffn_down (4 × 8): 2·1·(8+12) = 40 a token, and 2·(2·864 + 3·96 + 2·80 + 3·3·40)
// = 2·(1728+288+160+360) = 5072.
func TestLlamaTrainFLOPs(t *testing.T) {
	c := pretrained.Config{Layers: 1, DModel: 4, Hidden: 8, Heads: 2, KVHeads: 1, HeadDim: 2, Vocab: 10}
	if got := llamaTrainFLOPs(c, 2, 3, 1, nil); got != 6240 {
		t.Fatalf("full: %v, want 6240", got)
	}
	l := spec.LoRA{Rank: 1, Alpha: 2, Targets: []string{"attn_q", "ffn_down"}}
	if got := llamaTrainFLOPs(c, 2, 3, 1, &l); got != 5072 {
		t.Fatalf("LoRA: %v, want 5072", got)
	}
}

// TestRunLMSmolLM2 runs the model benchmark on SmolLM2 at tiny sizes: the report counts the
// tokens it was asked for, and the parameter count is the sum of the file's tensor sizes (the
// output layer is tied, so the file holds each parameter once).
func TestRunLMSmolLM2(t *testing.T) {
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
	var inFile int64
	for _, ti := range g.Tensors {
		inFile += ti.Elements()
	}
	g.Close()
	r, err := RunLM(context.Background(), LMOptions{Path: path, PromptLen: 5, DecodeLen: 2, Batches: []int{1, 3}, Reps: 1,
		TrainRows: 1, TrainLen: 8, GraphSampling: true})
	if err != nil {
		t.Fatal(err)
	}
	if int64(r.Params) != inFile {
		t.Errorf("params %d, the file holds %d", r.Params, inFile)
	}
	if r.Prefill.Tokens != 5 || len(r.Decode) != 2 || r.Decode[1].Batch != 3 || r.Decode[1].Tokens != 6 {
		t.Errorf("report %+v %+v, want a 5-token prefill and decodes of 1×2 and 3×2 tokens", r.Prefill, r.Decode)
	}
	if len(r.DecodeGraph) != 2 || r.DecodeGraph[1].Tokens != 6 || r.Train == nil || r.Train.Tokens != 8 || r.Train.Len != 8 {
		t.Fatalf("graph decode %+v, train %+v: want decodes of 1×2 and 3×2 tokens and a train step of 1×8", r.DecodeGraph, r.Train)
	}
	for _, x := range append(append([]LMResult{r.Prefill, *r.Train}, r.Decode...), r.DecodeGraph...) {
		if !(x.Ms > 0 && x.TokensPerS > 0 && x.GFLOPs > 0) {
			t.Errorf("phase %+v has no time or rate", x)
		}
	}
}

// TestLMOptionsValidate: each bad option is refused naming its flag.
func TestLMOptionsValidate(t *testing.T) {
	ok := DefaultLMOptions()
	ok.Path = "m.gguf"
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for flag, mut := range map[string]func(*LMOptions){
		"--model":          func(o *LMOptions) { o.Path = "" },
		"--prompt-len":     func(o *LMOptions) { o.PromptLen = 0 },
		"--decode-len":     func(o *LMOptions) { o.DecodeLen = -1 },
		"--reps":           func(o *LMOptions) { o.Reps = 0 },
		"--sample-batches": func(o *LMOptions) { o.Batches = []int{1, 0} },
		"--batch":          func(o *LMOptions) { o.TrainRows = -1 },
		"--len":            func(o *LMOptions) { o.TrainLen = 4 },
	} {
		o := ok
		mut(&o)
		if err := o.Validate(); err == nil || !contains(err.Error(), flag) {
			t.Errorf("%s: error %v does not name it", flag, err)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
