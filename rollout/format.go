package rollout

import (
	"fmt"

	"github.com/graftrl/graftrl/tokens"
)

// Format is how an episode's text becomes the policy's tokens and the policy's action tokens
// become an env's action text: the seam between the collector and a vocabulary. The collector
// lays every row out as Instruction, then per turn Turn (an observation and the marker of the
// agent's turn), the action's tokens ended by End, and AfterAction. Words is graftrl's own word
// vocabulary (tokens.Vocab); Chat is a pretrained model's chat template (ChatML).
type Format interface {
	// Size is the number of token ids: the length of a decoder row's logits.
	Size() int
	// Instruction returns the tokens that open every row of an episode: the begin-of-sequence
	// and the task's instruction.
	Instruction(instr string) []int32
	// Turn returns an observation's tokens followed by the marker of the agent's turn.
	Turn(obs string) []int32
	// End is the token that ends an action; the policy samples it (and is trained on it).
	End() int32
	// ForcedEnd says whether an action that reaches the token cap without End is closed by an
	// End token as context. (One-token word actions need no end.)
	ForcedEnd(maxTokens int) bool
	// AfterAction are the context tokens that follow an ended action, before the next turn.
	AfterAction() []int32
	// Action is the env's action text for the action tokens ids (End excluded); capped says the
	// action reached the token cap without End.
	Action(ids []int32, capped bool) string
	// EncodeAction returns the tokens a teacher's action text is sampled as (End excluded), or an
	// error when the policy could never produce it.
	EncodeAction(text string) ([]int32, error)
	// Decode is the text of tokens (for messages and transcripts).
	Decode(ids []int32) string
}

// Words is the Format of graftrl's word vocabulary: <bos> instruction <sep>, observation <act>,
// action words ended by <eoa>.
type Words struct{ V *tokens.Vocab }

// Size is the vocabulary's size.
func (w Words) Size() int { return w.V.Size() }

// Instruction is <bos>, the instruction's words and <sep>.
func (w Words) Instruction(instr string) []int32 {
	return append(w.V.Encode([]int32{tokens.BOSID}, instr), tokens.SepID)
}

// Turn is the observation's words and <act>.
func (w Words) Turn(obs string) []int32 { return append(w.V.Encode(nil, obs), tokens.ActID) }

// End is <eoa>.
func (w Words) End() int32 { return tokens.EOAID }

// ForcedEnd is true for actions of more than one token.
func (w Words) ForcedEnd(maxTokens int) bool { return maxTokens > 1 }

// AfterAction is empty.
func (w Words) AfterAction() []int32 { return nil }

// Action joins the action's words with single spaces.
func (w Words) Action(ids []int32, _ bool) string { return w.V.Decode(ids) }

// EncodeAction is the action's words, each of which must be in the vocabulary.
func (w Words) EncodeAction(text string) ([]int32, error) {
	ids := w.V.Encode(nil, text)
	for _, id := range ids {
		if id == tokens.UnkID {
			return nil, fmt.Errorf("rollout: the teacher's action %q uses a word outside the environment's vocabulary", text)
		}
	}
	return ids, nil
}

// Decode joins the ids' words with single spaces.
func (w Words) Decode(ids []int32) string { return w.V.Decode(ids) }

// ActionRoom is the context an agent's turn takes after its observation's tokens (Format.Turn):
// an action of ActionMaxTokens tokens, its end token where one is sampled or forced, and f's
// AfterAction.
func (c Config) ActionRoom(f Format) int {
	n := c.ActionMaxTokens + len(f.AfterAction())
	if f.ForcedEnd(c.ActionMaxTokens) {
		n++ // the end token, sampled or forced
	}
	return n
}
