package compare

import (
	"bytes"
	"fmt"
	"sort"

	"gopkg.in/yaml.v3"
)

// isPerRunKey reports the config keys expected to differ between the runs of one experiment;
// they are left out when configs are grouped and diffed.
func isPerRunKey(k string) bool {
	switch k {
	case "name", "seed", "out_dir", "label":
		return true
	}
	return false
}

// ConfigGroup is one distinct configuration among the runs, with the per-run keys (name, seed,
// out_dir, label) left out.
type ConfigGroup struct {
	// ID names the group in the report: A, B, C …
	ID string
	// YAML is the configuration without the per-run keys.
	YAML string
	// Runs are the directories of the runs that use it.
	Runs []string
	// Envs and Methods are the environments and methods of those runs.
	Envs, Methods []string
}

// ConfigDiffRow is one key whose value differs between configuration groups.
type ConfigDiffRow struct {
	// Key is the dotted path, e.g. estimator.mode.
	Key string
	// Values holds the value per group, in Configs order ("" when the group lacks the key).
	Values []string
}

// configs groups the runs by configuration and diffs the groups.
func (c *Comparison) configs() {
	index := map[string]int{}
	flat := []map[string]string{}
	for _, r := range c.Runs {
		text, kv := canonicalConfig(r.ConfigYAML)
		i, ok := index[text]
		if !ok {
			i = len(c.Configs)
			index[text] = i
			c.Configs = append(c.Configs, ConfigGroup{ID: groupID(i), YAML: text})
			flat = append(flat, kv)
		}
		g := &c.Configs[i]
		g.Runs = append(g.Runs, r.Dir)
		g.Envs = appendUnique(g.Envs, r.Env)
		g.Methods = appendUnique(g.Methods, r.Method)
	}
	for i := range c.Configs {
		sort.Strings(c.Configs[i].Runs)
		sort.Strings(c.Configs[i].Envs)
		sort.Strings(c.Configs[i].Methods)
	}
	keys := map[string]bool{}
	for _, kv := range flat {
		for k := range kv {
			keys[k] = true
		}
	}
	for _, k := range sortedKeys(keys) {
		row := ConfigDiffRow{Key: k}
		differ := false
		for _, kv := range flat {
			row.Values = append(row.Values, kv[k])
			differ = differ || kv[k] != row.Values[0]
		}
		if differ {
			c.ConfigDiff = append(c.ConfigDiff, row)
		}
	}
}

// configOf returns the ID of the run's configuration group.
func (c *Comparison) configOf(r *Run) string {
	for _, g := range c.Configs {
		for _, d := range g.Runs {
			if d == r.Dir {
				return g.ID
			}
		}
	}
	return "?"
}

func groupID(i int) string {
	id := ""
	for {
		id = string(rune('A'+i%26)) + id
		i = i/26 - 1
		if i < 0 {
			return id
		}
	}
}

// canonicalConfig drops the per-run keys and returns the YAML re-encoded (so that formatting
// differences do not split groups) and flattened to dotted keys.
func canonicalConfig(data []byte) (string, map[string]string) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return string(data), map[string]string{}
	}
	root := doc.Content[0]
	var kept []*yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if !isPerRunKey(root.Content[i].Value) {
			kept = append(kept, root.Content[i], root.Content[i+1])
		}
	}
	root.Content = kept
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	_ = enc.Encode(root)
	kv := map[string]string{}
	flattenNode(root, "", kv)
	return buf.String(), kv
}

func flattenNode(n *yaml.Node, path string, out map[string]string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if path != "" {
				key = path + "." + key
			}
			flattenNode(n.Content[i+1], key, out)
		}
	case yaml.ScalarNode:
		out[path] = n.Value
	default:
		var v any
		_ = n.Decode(&v)
		out[path] = fmt.Sprint(v)
	}
}
