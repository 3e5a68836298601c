package graft

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/graftrl/graftrl/rollout"
)

// GraphExport is the JSON form of one task's GRAFT graph: its nodes with their values and its
// distinct edges (source, action, target) with their counts and mean advantages.
type GraphExport struct {
	// Task is the task index in the batch.
	Task int `json:"task"`
	// Gamma, Lambda, Mode, PolicyWeighting and Truncation are the options the values were
	// computed with.
	Gamma           float64    `json:"gamma"`
	Lambda          float64    `json:"lambda"`
	Mode            Mode       `json:"mode"`
	PolicyWeighting Weighting  `json:"policy_weighting"`
	Truncation      Truncation `json:"truncation"`
	// Sweeps is the number of Gauss–Seidel sweeps and Residual the final Bellman residual.
	Sweeps   int     `json:"sweeps"`
	Residual float64 `json:"residual"`
	// Nodes are the graph's nodes; an edge refers to them by ID, their index here.
	Nodes []ExportNode `json:"nodes"`
	// Edges are the distinct (From, Action, To) triples in order of first occurrence.
	Edges []ExportEdge `json:"edges"`
}

// ExportNode is a node of GraphExport.
type ExportNode struct {
	// ID is the node's index in GraphExport.Nodes.
	ID int `json:"id"`
	// Kind is "state" for a state key φ(s) or "sink" for an outcome sink ⊥(R).
	Kind string `json:"kind"`
	// Key is φ(s) for a state and "⊥(R)" for a sink.
	Key string `json:"key"`
	// Value is V(u); R for ⊥(R); 0 for a state that reaches no sink.
	Value float64 `json:"value"`
	// Distance is the number of hops to the nearest sink (the solver's order), -1 when none.
	Distance int `json:"distance"`
	// Visits is N(u), the number of edge instances leaving the node.
	Visits int `json:"visits"`
}

// ExportEdge is a distinct edge of GraphExport: all instances of one action from one node that
// led to the same node.
type ExportEdge struct {
	// From and To are node IDs.
	From int `json:"from"`
	To   int `json:"to"`
	// Action is the action text.
	Action string `json:"action"`
	// Count is the number of edge instances.
	Count int `json:"count"`
	// Reward is the mean per-step reward r_e of the instances (0 when step rewards are off).
	Reward float64 `json:"reward"`
	// TD is the TD advantage δ = r + γV(To) − V(From), the same for every instance.
	TD float64 `json:"td"`
	// Raw is the mean advantage of the mode (td, path or paper) before normalisation.
	Raw float64 `json:"raw"`
	// Advantage is the mean advantage the estimator outputs for the instances.
	Advantage float64 `json:"advantage"`
}

// ExportTask computes GRAFT with opts on the given task of b and writes its graph to w in format
// "dot" (Graphviz: nodes labelled with key and V, edges with action, count and mean advantage,
// green when positive and red when negative) or "json" (GraphExport, indented).
func ExportTask(b *rollout.Batch, task int, opts Options, format string, w io.Writer) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if format != "dot" && format != "json" {
		return fmt.Errorf("graft: export format %q: must be \"dot\" or \"json\"", format)
	}
	if task < 0 || task >= b.Tasks {
		return fmt.Errorf("graft: export task %d: the batch has tasks 0 to %d", task, b.Tasks-1)
	}
	ex := exportTask(b, task, opts)
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ex)
	}
	return writeDOT(ex, w)
}

func exportTask(b *rollout.Batch, task int, opts Options) *GraphExport {
	x := &GRAFT{opts: opts}
	ws := newWorkspace()
	ws.actions = true
	group := b.Groups()[task]
	adv := rollout.NewAdvantages(b)
	st := x.estimateTask(ws, b, group, adv)
	g := ws.g

	ex := &GraphExport{
		Task: task, Gamma: opts.Gamma, Lambda: opts.Lambda, Mode: opts.Mode,
		PolicyWeighting: opts.PolicyWeighting, Truncation: opts.Truncation,
		Sweeps: st.sweeps, Residual: st.residual,
		Nodes: make([]ExportNode, g.nodes()), Edges: []ExportEdge{},
	}
	for u := range ex.Nodes {
		n := ExportNode{ID: u, Kind: "state", Key: g.key[u], Value: ws.V[u],
			Distance: int(g.dist[u]), Visits: int(g.outDegree(int32(u)))}
		if g.kind[u] == kindSink {
			n.Kind, n.Key = "sink", "⊥("+num(g.fixed[u])+")"
		}
		ex.Nodes[u] = n
	}
	index := make(map[[3]int32]int)
	for j, i := range g.trajs {
		t := &b.Trajs[i]
		for k := range t.Steps {
			e := int(g.first[j]) + k
			key := [3]int32{g.src[e], g.act[e], g.dst[e]}
			at, ok := index[key]
			if !ok {
				at = len(ex.Edges)
				index[key] = at
				ex.Edges = append(ex.Edges, ExportEdge{From: int(g.src[e]), To: int(g.dst[e]), Action: t.Steps[k].Action})
			}
			d := &ex.Edges[at]
			d.Count++
			d.Reward += g.rew[e]
			d.TD += ws.delta[e]
			d.Raw += ws.raw[e]
			d.Advantage += adv[i][k]
		}
	}
	for k := range ex.Edges {
		d := &ex.Edges[k]
		c := float64(d.Count)
		d.Reward, d.TD, d.Raw, d.Advantage = d.Reward/c, d.TD/c, d.Raw/c, d.Advantage/c
	}
	return ex
}

func writeDOT(ex *GraphExport, w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph %s {\n", quote(fmt.Sprintf("task %d", ex.Task)))
	fmt.Fprintf(bw, "\tlabel=%s;\n", quote(fmt.Sprintf("task %d  γ=%s λ=%s mode=%s weighting=%s sweeps=%d",
		ex.Task, num(ex.Gamma), num(ex.Lambda), ex.Mode, ex.PolicyWeighting, ex.Sweeps)))
	bw.WriteString("\trankdir=LR;\n\tfontname=\"Helvetica\";\n\tnode [shape=box, style=rounded, fontname=\"Helvetica\"];\n" +
		"\tedge [fontname=\"Helvetica\", fontsize=10];\n")
	for _, n := range ex.Nodes {
		attrs := ""
		if n.Kind == "sink" {
			attrs = ", shape=doublecircle"
		}
		fmt.Fprintf(bw, "\tn%d [label=%s%s];\n", n.ID, quote(n.Key+"\nV="+num(n.Value)), attrs)
	}
	for _, e := range ex.Edges {
		color := "#868e96"
		switch {
		case e.Advantage > 0:
			color = "#2b8a3e"
		case e.Advantage < 0:
			color = "#c92a2a"
		}
		label := fmt.Sprintf("%s ×%d\nA=%s", e.Action, e.Count, num(e.Advantage))
		fmt.Fprintf(bw, "\tn%d -> n%d [label=%s, color=%s];\n", e.From, e.To, quote(label), quote(color))
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// quote makes s a DOT double-quoted string: backslashes and quotes escaped, newlines as \n
// (Graphviz's centred line break).
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
