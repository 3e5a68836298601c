package spec

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/graftrl/graftrl/policy/pretrained"
)

// The defaults are valid, and each bad setting is refused with an error naming its key (and,
// for a target, the bad entry and the allowed ones).
func TestLoRAValidate(t *testing.T) {
	if err := DefaultLoRA().Validate(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	d := DefaultLoRA()
	if d.Rank != 8 || d.Alpha != 16 || !reflect.DeepEqual(d.Targets, LoRATargets) {
		t.Errorf("defaults %+v, want rank 8, alpha 16, every target", d)
	}
	for _, tc := range []struct {
		name string
		edit func(*LoRA)
		want []string
	}{
		{"rank 0", func(l *LoRA) { l.Rank = 0 }, []string{"policy.lora.rank", "1..256"}},
		{"rank -1", func(l *LoRA) { l.Rank = -1 }, []string{"policy.lora.rank: -1"}},
		{"rank 257", func(l *LoRA) { l.Rank = 257 }, []string{"policy.lora.rank: 257"}},
		{"alpha 0", func(l *LoRA) { l.Alpha = 0 }, []string{"policy.lora.alpha: 0"}},
		{"alpha -1", func(l *LoRA) { l.Alpha = -1 }, []string{"policy.lora.alpha"}},
		{"alpha NaN", func(l *LoRA) { l.Alpha = math.NaN() }, []string{"policy.lora.alpha"}},
		{"alpha Inf", func(l *LoRA) { l.Alpha = math.Inf(1) }, []string{"policy.lora.alpha"}},
		{"no targets", func(l *LoRA) { l.Targets = nil }, []string{"policy.lora.targets", "attn_q"}},
		{"bad target", func(l *LoRA) { l.Targets = []string{"attn_q", "attn_x"} },
			[]string{"policy.lora.targets", `"attn_x"`, "attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down"}},
		{"duplicate", func(l *LoRA) { l.Targets = []string{"attn_v", "ffn_up", "attn_v"} },
			[]string{"policy.lora.targets", `"attn_v" given twice`}},
	} {
		l := DefaultLoRA()
		tc.edit(&l)
		err := l.Validate()
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tc.name, err, w)
			}
		}
	}
}

// LoRAParams lists, block by block and in the targets' order, A [rank, in] then B [out, rank]
// of each base matrix [out, in] of LlamaParams.
func TestLoRAParams(t *testing.T) {
	c := pretrained.Config{Layers: 2, DModel: 16, Hidden: 24, Heads: 4, KVHeads: 2, HeadDim: 4, Vocab: 30,
		RopeBase: 10000, NormEps: 1e-5}
	got := LoRAParams(c, LoRA{Rank: 3, Alpha: 1, Targets: []string{"ffn_down", "attn_k"}})
	want := []Param{
		{"blk.0.ffn_down.lora_a", []int{3, 24}, InitUniformFanIn},
		{"blk.0.ffn_down.lora_b", []int{16, 3}, InitZeros},
		{"blk.0.attn_k.lora_a", []int{3, 16}, InitUniformFanIn},
		{"blk.0.attn_k.lora_b", []int{8, 3}, InitZeros},
		{"blk.1.ffn_down.lora_a", []int{3, 24}, InitUniformFanIn},
		{"blk.1.ffn_down.lora_b", []int{16, 3}, InitZeros},
		{"blk.1.attn_k.lora_a", []int{3, 16}, InitUniformFanIn},
		{"blk.1.attn_k.lora_b", []int{8, 3}, InitZeros},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoRAParams = %v, want %v", got, want)
	}
	// Every target's [out, in] is its base matrix's shape in LlamaParams.
	base := map[string][]int{}
	for _, p := range LlamaParams(c) {
		base[p.Name] = p.Shape
	}
	for _, p := range LoRAParams(c, DefaultLoRA()) {
		stem, ab := p.Name[:strings.LastIndex(p.Name, ".")], p.Name[strings.LastIndex(p.Name, ".")+1:]
		w := base[stem]
		if ab == "lora_a" && (p.Shape[0] != 8 || p.Shape[1] != w[1]) || ab == "lora_b" && (p.Shape[0] != w[0] || p.Shape[1] != 8) {
			t.Errorf("%s %v does not fit %s %v", p.Name, p.Shape, stem, w)
		}
	}
	if err := CheckLoRAFits(c, LoRA{Rank: 8, Alpha: 1, Targets: LoRATargets}); err != nil {
		t.Errorf("rank 8 = min of attn_k [8, 16] refused: %v", err)
	}
	err := CheckLoRAFits(c, LoRA{Rank: 9, Alpha: 1, Targets: LoRATargets})
	if err == nil || !strings.Contains(err.Error(), "policy.lora.rank: 9") || !strings.Contains(err.Error(), "attn_k") {
		t.Errorf("rank 9 > 8 of attn_k: error %v", err)
	}
}
