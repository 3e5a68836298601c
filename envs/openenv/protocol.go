package openenv

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/graftrl/graftrl/envs"
)

// The error codes of OpenEnv's WebSocket protocol. After the first four the session stays usable;
// after the last three the server closes the socket.
const (
	CodeInvalidJSON     = "INVALID_JSON"
	CodeUnknownType     = "UNKNOWN_TYPE"
	CodeValidation      = "VALIDATION_ERROR"
	CodeExecution       = "EXECUTION_ERROR"
	CodeCapacityReached = "CAPACITY_REACHED"
	CodeFactory         = "FACTORY_ERROR"
	CodeSession         = "SESSION_ERROR"
)

// ServerError is an error reply of an OpenEnv server: {"type":"error","data":{"message","code",...}}.
type ServerError struct {
	// Code is one of the Code constants (or whatever a foreign server sent).
	Code string
	// Message is the server's text.
	Message string
	// Details holds the other fields of the error data, for example errors (VALIDATION_ERROR) or
	// active_sessions and max_sessions (CAPACITY_REACHED).
	Details map[string]json.RawMessage
}

// Error formats the error as "CODE: message".
func (e *ServerError) Error() string {
	s := e.Code + ": " + e.Message
	if a, m := e.Details["active_sessions"], e.Details["max_sessions"]; a != nil && m != nil {
		s += fmt.Sprintf(" (active_sessions %s, max_sessions %s)", a, m)
	}
	return s
}

// ClosesSession reports whether the server closes the session after this error.
func (e *ServerError) ClosesSession() bool { return closesSession(e.Code) }

// closesSession reports whether the server closes the session after an error of the code.
func closesSession(code string) bool {
	switch code {
	case CodeCapacityReached, CodeFactory, CodeSession:
		return true
	}
	return false
}

// Fields of the observation object that graftrl's server adds for graftrl's client.
const (
	fieldText        = "text"
	fieldInstruction = "instruction"
	fieldStateKey    = "state_key"
	fieldStepReward  = "step_reward"
	fieldOutcome     = "outcome"
	fieldTruncated   = "truncated"
	fieldInfo        = "info"
)

// wireObservation is the observation object graftrl's server sends: the env's envs.Observation in
// snake_case with Reward renamed step_reward (the envelope's reward is the step's total) and Done
// lifted to the envelope, plus the instruction (in reset replies) and the state key. Metadata is
// always the empty object, where OpenEnv's servers (0.10) keep an observation's metadata field.
type wireObservation struct {
	Metadata    struct{} `json:"metadata"`
	Text        string   `json:"text"`
	Instruction *string  `json:"instruction,omitempty"`
	StateKey    string   `json:"state_key"`
	StepReward  float64  `json:"step_reward"`
	Outcome     float64  `json:"outcome"`
	Truncated   bool     `json:"truncated"`
	Info        wireInfo `json:"info"`
}

// wireInfo is envs.Info with every flag spelled out.
type wireInfo struct {
	Success  bool               `json:"success"`
	Invalid  bool               `json:"invalid_action"`
	Distance int                `json:"distance"`
	Extra    map[string]float64 `json:"extra,omitempty"`
}

// wireResult is the data of an observation reply, and the body of HTTP /reset and /step replies.
type wireResult struct {
	Observation wireObservation `json:"observation"`
	Reward      *float64        `json:"reward"`
	Done        bool            `json:"done"`
}

// resultOf builds the wire form of an observation. On reset the envelope's reward is null, as
// OpenEnv servers send it; on a step it is the total the env emitted, step reward plus outcome.
func resultOf(obs envs.Observation, key string, instruction *string) wireResult {
	r := wireResult{
		Observation: wireObservation{
			Text: obs.Text, Instruction: instruction, StateKey: key,
			StepReward: obs.Reward, Outcome: obs.Outcome, Truncated: obs.Truncated,
			Info: wireInfo{Success: obs.Info.Success, Invalid: obs.Info.Invalid, Distance: obs.Info.Distance, Extra: obs.Info.Extra},
		},
		Done: obs.Over(),
	}
	if instruction == nil {
		total := obs.Reward + obs.Outcome
		r.Reward = &total
	}
	return r
}

// message is a server reply on the WebSocket.
type message struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// fieldError is one entry of a VALIDATION_ERROR's errors (and of an HTTP 422 detail), in the shape
// pydantic gives them, which OpenEnv clients print.
type fieldError struct {
	Type  string          `json:"type"`
	Loc   []any           `json:"loc"`
	Msg   string          `json:"msg"`
	Input json.RawMessage `json:"input,omitempty"`
}

func (e fieldError) String() string {
	loc := make([]string, len(e.Loc))
	for i, l := range e.Loc {
		loc[i] = fmt.Sprint(l)
	}
	return strings.Join(loc, ".") + ": " + e.Msg
}

// errorMessage encodes an error reply. extra adds fields to its data (errors, active_sessions ...).
func errorMessage(code, msg string, extra map[string]any) []byte {
	data := map[string]any{"message": msg, "code": code}
	for k, v := range extra {
		data[k] = v
	}
	b, err := json.Marshal(message{Type: "error", Data: data})
	if err != nil {
		// Only the extra fields can fail to encode; the reply must still go out.
		b, _ = json.Marshal(message{Type: "error", Data: map[string]string{"message": msg, "code": code}})
	}
	return b
}

// validationMessage encodes a VALIDATION_ERROR reply with its errors.
func validationMessage(errs []fieldError) []byte {
	return errorMessage(CodeValidation, "Invalid message", map[string]any{"errors": errs})
}

// JSON Schemas of /schema. The action holds the action text in "message", as textarena's
// environments in OpenEnv's catalogue do.
const (
	actionSchema = `{"title":"GraftrlAction","description":"An action of a graftrl environment: its text.",` +
		`"type":"object","properties":{` +
		`"metadata":{"title":"Metadata","description":"Additional metadata for the action","type":"object","additionalProperties":true},` +
		`"message":{"title":"Message","description":"The action text, for example \"up\"","type":"string"}},` +
		`"required":["message"],"additionalProperties":false}`
	observationSchema = `{"title":"GraftrlObservation","description":"An observation of a graftrl environment. reward (step_reward + outcome) and done (terminated or truncated) are lifted to the envelope.",` +
		`"type":"object","properties":{` +
		`"done":{"title":"Done","type":"boolean","default":false},` +
		`"reward":{"title":"Reward","anyOf":[{"type":"boolean"},{"type":"integer"},{"type":"number"},{"type":"null"}],"default":null},` +
		`"metadata":{"title":"Metadata","type":"object","additionalProperties":true},` +
		`"text":{"title":"Text","description":"The observation text, in words of the environment's vocabulary","type":"string"},` +
		`"instruction":{"title":"Instruction","description":"The task instruction (reset replies only)","type":"string"},` +
		`"state_key":{"title":"State Key","description":"Canonical identity of the environment state within the task","type":"string"},` +
		`"step_reward":{"title":"Step Reward","description":"Per-step reward r_t, excluding the outcome","type":"number"},` +
		`"outcome":{"title":"Outcome","description":"Episode outcome R (the success reward or 0), set on the last step","type":"number"},` +
		`"truncated":{"title":"Truncated","description":"The step cap ended the episode","type":"boolean"},` +
		`"info":{"title":"Info","type":"object","properties":{` +
		`"success":{"type":"boolean"},"invalid_action":{"type":"boolean"},` +
		`"distance":{"type":"integer","description":"Optimal steps to success; -1 unknown, -2 success unreachable"},` +
		`"extra":{"type":"object","additionalProperties":{"type":"number"}}}}},` +
		`"required":["text","state_key","step_reward","outcome","truncated","info"]}`
	stateSchema = `{"title":"GraftrlState","type":"object","additionalProperties":true,"properties":{` +
		`"episode_id":{"title":"Episode Id","anyOf":[{"type":"string"},{"type":"null"}],"default":null},` +
		`"step_count":{"title":"Step Count","type":"integer","minimum":0,"default":0},` +
		`"task_seed":{"title":"Task Seed","anyOf":[{"type":"integer"},{"type":"null"}]},` +
		`"state_key":{"title":"State Key","type":"string"},` +
		`"max_turns":{"title":"Max Turns","type":"integer"}}}`
)
