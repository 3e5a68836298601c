package openenv

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/graftrl/graftrl/envs"
)

// parseConfig says which observation fields the client reads (see ClientOptions).
type parseConfig struct {
	textField        string // "" for the default chain
	stateKeyField    string // "" for state_key, else the hash
	instructionField string // "" for instruction
}

// reply is an observation reply as graftrl sees it.
type reply struct {
	obs         envs.Observation
	instruction string
	key         string
}

// parseMessage decodes a server message: an observation reply, or an error reply as a *ServerError.
func parseMessage(raw []byte, cfg parseConfig) (reply, error) {
	typ, data, err := parseEnvelope(raw)
	if err != nil {
		return reply{}, err
	}
	switch typ {
	case "observation":
		return parseResult(data, cfg)
	case "error":
		return reply{}, serverErrorOf(data)
	}
	return reply{}, fmt.Errorf("unexpected reply of type %q", shorten(typ))
}

// parseEnvelope splits a message into its type and data.
func parseEnvelope(raw []byte) (string, json.RawMessage, error) {
	var env struct {
		Type *string         `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return "", nil, fmt.Errorf("malformed reply %s: %w", shorten(string(raw)), err)
	}
	if env.Type == nil {
		return "", nil, fmt.Errorf("reply without a type: %s", shorten(string(raw)))
	}
	return *env.Type, env.Data, nil
}

// serverErrorOf reads the data of an error reply.
func serverErrorOf(data json.RawMessage) *ServerError {
	var fields map[string]json.RawMessage
	json.Unmarshal(data, &fields)
	se := &ServerError{Code: "UNKNOWN", Message: shorten(string(data)), Details: fields}
	if c, ok := fields["code"]; ok {
		json.Unmarshal(c, &se.Code)
		delete(fields, "code")
	}
	if m, ok := fields["message"]; ok {
		json.Unmarshal(m, &se.Message)
		delete(fields, "message")
	}
	if se.Code == "" {
		se.Code = "UNKNOWN"
	}
	return se
}

// parseResult reads the data of an observation reply, {"observation":{...},"reward":r,"done":d}.
//
// From graftrl's server (the observation has a numeric step_reward) the envs.Observation is rebuilt
// exactly: Reward = step_reward, Outcome = outcome, Truncated = truncated, Done = done and not
// truncated, Info = info. From another server: Done = done; at a terminal step the envelope's
// reward is the Outcome (Reward 0) and Success = reward > 0; at other steps it is the Reward;
// Info.Distance is envs.DistUnknown. A reward may be a number, a bool (1 or 0) or null (0).
func parseResult(data json.RawMessage, cfg parseConfig) (reply, error) {
	var res struct {
		Observation json.RawMessage `json:"observation"`
		Reward      json.RawMessage `json:"reward"`
		Done        json.RawMessage `json:"done"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return reply{}, fmt.Errorf("malformed observation reply: %w", err)
	}
	var obs map[string]json.RawMessage
	if err := json.Unmarshal(res.Observation, &obs); err != nil || obs == nil {
		return reply{}, fmt.Errorf("the reply's observation is not an object: %s", shorten(string(res.Observation)))
	}
	done, err := boolOf(res.Done, "done")
	if err != nil {
		return reply{}, err
	}
	reward, err := rewardOf(res.Reward)
	if err != nil {
		return reply{}, err
	}
	var r reply
	if sr, ok := obs[fieldStepReward]; ok && isNumber(sr) {
		if err := graftrlFields(obs, &r.obs); err != nil {
			return reply{}, err
		}
		r.obs.Done = done && !r.obs.Truncated
	} else {
		r.obs.Done = done
		r.obs.Info.Distance = envs.DistUnknown
		if done {
			r.obs.Outcome, r.obs.Info.Success = reward, reward > 0
		} else {
			r.obs.Reward = reward
		}
	}
	if r.obs.Text, err = textOf(obs, cfg.textField); err != nil {
		return reply{}, err
	}
	insField := cmp.Or(cfg.instructionField, fieldInstruction)
	if v, ok := obs[insField]; ok && string(v) != "null" {
		r.instruction = render(v)
	}
	if r.key, err = keyOf(obs, cfg.stateKeyField); err != nil {
		return reply{}, err
	}
	return r, nil
}

// graftrlFields reads the fields graftrl's server adds to the observation.
func graftrlFields(obs map[string]json.RawMessage, o *envs.Observation) error {
	var in struct {
		StepReward float64 `json:"step_reward"`
		Outcome    float64 `json:"outcome"`
		Truncated  bool    `json:"truncated"`
		Info       struct {
			Success  bool               `json:"success"`
			Invalid  bool               `json:"invalid_action"`
			Distance *int               `json:"distance"`
			Extra    map[string]float64 `json:"extra"`
		} `json:"info"`
	}
	for _, k := range []string{fieldStepReward, fieldOutcome, fieldTruncated, fieldInfo} {
		v, ok := obs[k]
		if !ok || string(v) == "null" {
			continue
		}
		// Field by field, so that an error names the field.
		wrapped := append(append([]byte(`{"`+k+`":`), v...), '}')
		if err := json.Unmarshal(wrapped, &in); err != nil {
			return fmt.Errorf("observation field %s: %s: %w", k, shorten(string(v)), err)
		}
	}
	o.Reward, o.Outcome, o.Truncated = in.StepReward, in.Outcome, in.Truncated
	o.Info = envs.Info{Success: in.Info.Success, Invalid: in.Info.Invalid, Distance: envs.DistUnknown, Extra: in.Info.Extra}
	if in.Info.Distance != nil {
		o.Info.Distance = *in.Info.Distance
	}
	return nil
}

// rewardOf reads the envelope's reward as the environment set it: a number, a bool or null.
func rewardOf(raw json.RawMessage) (float64, error) {
	switch s := string(bytes.TrimSpace(raw)); s {
	case "", "null", "false":
		return 0, nil
	case "true":
		return 1, nil
	}
	var f float64
	if !isNumber(raw) || json.Unmarshal(raw, &f) != nil {
		return 0, fmt.Errorf("the reply's reward %s is not a number, a bool or null", shorten(string(raw)))
	}
	return f, nil
}

// boolOf reads a flag; absent or null is false.
func boolOf(raw json.RawMessage, name string) (bool, error) {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, fmt.Errorf("the reply's %s %s is not a bool", name, shorten(string(raw)))
}

func isNumber(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9')
}

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// textOf picks the observation text: text_field when set, else the first string of the fields
// text, prompt, observation, message and content, else the content of the last entry of a
// "messages" list, else the observation as canonical JSON.
func textOf(obs map[string]json.RawMessage, field string) (string, error) {
	if field != "" {
		v, ok := obs[field]
		if !ok {
			return "", fmt.Errorf("the observation has no field %q (text_field; it has %s)", field, strings.Join(sortedKeys(obs), ", "))
		}
		return render(v), nil
	}
	for _, f := range [...]string{"text", "prompt", "observation", "message", "content"} {
		if v, ok := obs[f]; ok && isString(v) {
			return render(v), nil
		}
	}
	if v, ok := obs["messages"]; ok {
		if s, ok := lastContent(v); ok {
			return s, nil
		}
	}
	return canonical(obs), nil
}

// render turns a field into text: a string as it is, a list of chat messages as the content of
// the last one, anything else as canonical JSON.
func render(v json.RawMessage) string {
	if isString(v) {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	if s, ok := lastContent(v); ok {
		return s
	}
	var x any
	if err := decodeNumbers(v, &x); err != nil {
		return string(v)
	}
	return marshalCanonical(x)
}

// lastContent reads a list of messages ({"content": "...", ...}) and returns the last content.
func lastContent(v json.RawMessage) (string, bool) {
	var msgs []struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(v, &msgs) != nil || len(msgs) == 0 || msgs[len(msgs)-1].Content == nil {
		return "", false
	}
	return *msgs[len(msgs)-1].Content, true
}

// keyOf picks the state key: state_key_field when set, else a string state_key, else the hash of
// the canonical observation.
func keyOf(obs map[string]json.RawMessage, field string) (string, error) {
	if field != "" {
		v, ok := obs[field]
		if !ok {
			return "", fmt.Errorf("the observation has no field %q (state_key_field; it has %s)", field, strings.Join(sortedKeys(obs), ", "))
		}
		return render(v), nil
	}
	if v, ok := obs[fieldStateKey]; ok && isString(v) {
		return render(v), nil
	}
	return hashKey(obs), nil
}

// hashKey is the default state key of a foreign server: the first 16 hex digits of the SHA-256 of
// the canonical JSON of the observation (keys sorted at every depth, numbers as sent, no HTML
// escaping), without reward, done and metadata.
func hashKey(obs map[string]json.RawMessage) string {
	sum := sha256.Sum256([]byte(canonical(obs)))
	return hex.EncodeToString(sum[:8])
}

// canonical is the canonical JSON of an observation without the envelope's fields (should a server
// repeat reward and done in the observation) and OpenEnv's metadata.
func canonical(obs map[string]json.RawMessage) string {
	m := make(map[string]any, len(obs))
	for k := range obs {
		if k == "reward" || k == "done" || k == "metadata" {
			continue
		}
		var x any
		if err := decodeNumbers(obs[k], &x); err != nil {
			x = string(obs[k])
		}
		m[k] = x
	}
	return marshalCanonical(m)
}

// decodeNumbers decodes JSON keeping numbers as written.
func decodeNumbers(v json.RawMessage, dst *any) error {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// marshalCanonical encodes with sorted keys (encoding/json sorts map keys) and without HTML escaping.
func marshalCanonical(x any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return fmt.Sprint(x)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
