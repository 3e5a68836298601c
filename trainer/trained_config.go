package trainer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rundir"
)

// The config a checkpoint was trained with. Resume compares the config it is given with the
// run's config.yaml (ConfigDiff), but config.yaml is also where `train --resume DIR` reads the
// config from: an edit of it would pass that comparison and change the task or the method
// halfway through the run. So every checkpoint records what its config computes, and resume
// compares the config with that record too.

// trainedConfig is what a config makes a run compute, as a checkpoint records it: every key of
// the resolved config (flattenConfig) with its value as JSON, less the keys a resumed run may
// change (resumableKeys) and those of the run's location (locationKeys).
func trainedConfig(c *config.Config) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range flattenConfig(c) {
		if resumableKeys[k] || locationKeys[k] {
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			// flattenConfig holds what YAML decoded: scalars, lists and nil, all of which JSON
			// encodes; a value it cannot is recorded by its text so that it still compares.
			data, _ = json.Marshal(fmt.Sprint(v))
		}
		out[k] = data
	}
	return out
}

// configSHA256 is the SHA-256 of a trainedConfig's JSON encoding (keys sorted, values compact).
func configSHA256(m map[string]json.RawMessage) string {
	data, _ := json.Marshal(m)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// trainedConfigDiff lists the keys whose values differ between the trained config a checkpoint
// recorded and now, as "key: recorded → now" lines. A key the record lacks is no difference
// when now holds its default: graftrl gained the key after the checkpoint was written, and
// the default is what the run computed without it.
func trainedConfigDiff(recorded, now map[string]json.RawMessage) []string {
	defaults := config.Defaults()
	def := trainedConfig(&defaults)
	var out []string
	for k := range union(recorded, now) {
		a, inA := recorded[k]
		b, inB := now[k]
		if inA && inB && jsonEqual(a, b) || !inA && inB && jsonEqual(b, def[k]) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s → %s", k, showJSON(a), showJSON(b)))
	}
	sort.Strings(out)
	return out
}

func union(a, b map[string]json.RawMessage) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// jsonEqual compares two JSON values by their compact text (trainer.json is written indented).
func jsonEqual(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// showJSON shows a JSON value as ConfigDiff shows a config value: strings unquoted, numbers as
// written (a seed keeps every digit), "(absent)" for none.
func showJSON(raw json.RawMessage) string {
	if raw == nil {
		return "(absent)"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return string(raw)
	}
	return show(v)
}

// checkTrainedConfig refuses to resume from checkpoint ckpt (its state st) with a config other
// than the one it was trained with, naming the keys that differ. A checkpoint written before
// checkpoints recorded their config is accepted with a note (logf): it can only be checked
// against config.yaml, as ConfigDiff did.
func (t *Trainer) checkTrainedConfig(ckpt string, st trainerState, logf func(format string, args ...any)) error {
	if st.ConfigSHA256 == "" {
		logf("note: checkpoint %s does not record the config it was trained with (written by an older graftrl); the config is checked against %s only",
			ckpt, rundir.ConfigFile)
		return nil
	}
	now := trainedConfig(&t.cfg)
	sum := configSHA256(now)
	if sum == st.ConfigSHA256 {
		return nil
	}
	diff := trainedConfigDiff(st.Config, now)
	if len(diff) == 0 {
		if len(st.Config) > 0 && configSHA256(st.Config) == st.ConfigSHA256 {
			return nil // only keys added since the checkpoint, at their defaults
		}
		diff = []string{fmt.Sprintf("the config's SHA-256 is %s; the checkpoint was trained with %s", sum, st.ConfigSHA256)}
	}
	return &DirError{Dir: t.dir, Msg: fmt.Sprintf("cannot resume %s: the config differs from the one its checkpoint %s was trained with, in keys a resumed run may not change:\n  %s\n(allowed to differ: %s). If %s was edited, give those keys their values before → again; to train the new config, start a new run (another --name)",
		t.dir, ckpt, strings.Join(diff, "\n  "), allowedToDiffer, rundir.ConfigFile)}
}
