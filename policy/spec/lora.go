package spec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/policy/pretrained"
)

// LoRA configures low-rank adapters on a pretrained model's projections (Hu et al. 2021): each
// targeted matrix W [out, in] of every block computes W·x + (Alpha/Rank)·B·(A·x) with A [Rank, in]
// and B [out, Rank] trained and W frozen.
type LoRA struct {
	// Rank is r, the inner width of the adapters (1..256, and at most min(in, out) of every
	// targeted matrix).
	Rank int `yaml:"rank" json:"rank"`
	// Alpha scales the adapters' output by Alpha/Rank.
	Alpha float64 `yaml:"alpha" json:"alpha"`
	// Targets are the adapted projections of every block, by GGUF tensor stem (LoRATargets).
	Targets []string `yaml:"targets" json:"targets"`
}

// LoRATargets are the projections of a Llama block an adapter may target, by the stem of their
// GGUF tensor names ("blk.<i>.<stem>").
var LoRATargets = []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}

// MaxLoRARank is the largest LoRA rank Validate accepts.
const MaxLoRARank = 256

// DefaultLoRA is rank 8, alpha 16, on every projection of every block.
func DefaultLoRA() LoRA {
	return LoRA{Rank: 8, Alpha: 16, Targets: slices.Clone(LoRATargets)}
}

// Validate checks the adapters' settings; errors name the key under policy.lora. Whether the
// rank fits every targeted matrix depends on the model and is checked when the policy is built.
func (l LoRA) Validate() error {
	switch {
	case l.Rank < 1 || l.Rank > MaxLoRARank:
		return fmt.Errorf("policy.lora.rank: %d is out of range (allowed 1..%d)", l.Rank, MaxLoRARank)
	case !(l.Alpha > 0) || math.IsInf(l.Alpha, 0):
		return fmt.Errorf("policy.lora.alpha: %g is out of range (allowed > 0, finite)", l.Alpha)
	case len(l.Targets) == 0:
		return fmt.Errorf("policy.lora.targets: empty (allowed: one or more of %s)", strings.Join(LoRATargets, ", "))
	}
	for i, t := range l.Targets {
		if !slices.Contains(LoRATargets, t) {
			return fmt.Errorf("policy.lora.targets: %q is not a projection (allowed: %s)", t, strings.Join(LoRATargets, ", "))
		}
		if slices.Contains(l.Targets[:i], t) {
			return fmt.Errorf("policy.lora.targets: %q given twice (each projection at most once)", t)
		}
	}
	return nil
}

// Scale is the factor Alpha/Rank of the adapters' output.
func (l LoRA) Scale() float64 { return l.Alpha / float64(l.Rank) }

// LoRAShape is the shape [out, in] of a Llama block's projection target (one of LoRATargets), as
// in LlamaParams.
func LoRAShape(c pretrained.Config, target string) (out, in int, err error) {
	d, f, qd, kd := c.DModel, c.Hidden, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	switch target {
	case "attn_q":
		return qd, d, nil
	case "attn_k", "attn_v":
		return kd, d, nil
	case "attn_output":
		return d, qd, nil
	case "ffn_gate", "ffn_up":
		return f, d, nil
	case "ffn_down":
		return d, f, nil
	}
	return 0, 0, fmt.Errorf("policy.lora.targets: %q is not a projection (allowed: %s)", target, strings.Join(LoRATargets, ", "))
}

// InitUniformFanIn draws U(−1/√in, 1/√in) for a matrix [rows, in]: the Kaiming-uniform
// initialisation (a = √5) that PEFT gives LoRA's A.
const InitUniformFanIn = InitOnes + 1

// LoRAParams lists the adapters of l on a Llama of architecture c in their fixed order: for each
// block i, for each target t in l.Targets' order, "blk.<i>.<t>.lora_a" [Rank, in]
// (InitUniformFanIn) then "blk.<i>.<t>.lora_b" [out, Rank] (zeros), for the base matrix
// "blk.<i>.<t>" [out, in]. Targets that are not projections are skipped (Validate refuses them).
func LoRAParams(c pretrained.Config, l LoRA) []Param {
	var specs []Param
	for i := range c.Layers {
		b := "blk." + strconv.Itoa(i) + "."
		for _, t := range l.Targets {
			out, in, err := LoRAShape(c, t)
			if err != nil {
				continue
			}
			specs = append(specs,
				Param{b + t + ".lora_a", []int{l.Rank, in}, InitUniformFanIn},
				Param{b + t + ".lora_b", []int{out, l.Rank}, InitZeros})
		}
	}
	return specs
}

// CheckLoRAFits checks that l's rank is at most min(in, out) of every matrix it targets on c;
// the error names policy.lora.rank and the first matrix too small.
func CheckLoRAFits(c pretrained.Config, l LoRA) error {
	for _, t := range l.Targets {
		out, in, err := LoRAShape(c, t)
		if err != nil {
			return err
		}
		if l.Rank > min(out, in) {
			return fmt.Errorf("policy.lora.rank: %d exceeds min(out, in) = %d of %s [%d, %d] (allowed 1..%d for these targets)",
				l.Rank, min(out, in), t, out, in, maxRankOf(c, l.Targets))
		}
	}
	return nil
}

// maxRankOf is the largest rank every target of c fits.
func maxRankOf(c pretrained.Config, targets []string) int {
	r := MaxLoRARank
	for _, t := range targets {
		if out, in, err := LoRAShape(c, t); err == nil {
			r = min(r, out, in)
		}
	}
	return r
}
