package deps

// table is ARCHITECTURE.md's package table, row for row and in its order (from the ground floor
// up), with what its "must not" column says about imports. The comment beside a row quotes that
// column where the row's fields are only part of it; what is left is checked elsewhere or by
// review (ARCHITECTURE.md, "What the tests keep").
func table() []row {
	envNames := []string{"envs/grid", "envs/maze", "envs/keydoor", "envs/sokoban", "envs/frozenlake", "envs/toolcalc", "envs/shop"}
	flags := []string{"flag", "github.com/spf13/..."}
	return []row{
		{name: "tokens", leaf: true},
		{name: "rundir", leaf: true}, // read or write any file but its lock and the checkpoints listing
		{name: "internal/workers", leaf: true},
		{name: "internal/kernels"}, // allocate
		{name: "internal/gomlxfields", leaf: true, gomlx: true},
		{name: "internal/gradients", gomlx: true, noInit: true},
		{name: "internal/gobackend", gomlx: true, noInit: true}, // be used for XLA backends
		{name: "internal/gradcheck", gomlx: true, use: testsOnly},
		{name: "internal/plotstyle", leaf: true}, // compute statistics
		{name: "internal/limits"},                // read a file past its limit
		{name: "internal/interoptest", use: testsOnly},
		{name: "internal/doccheck", use: nobody},
		{name: "internal/deps", use: nobody},
		{name: "internal/strict", leaf: true},
		{name: "modelfile", only: []string{"internal/limits"}},
		{name: "tokens/bpe", only: []string{"modelfile"}}, // know a model's weights
		{name: "policy/pretrained", only: []string{"modelfile", "internal/limits", "tokens/bpe"}},
		{name: "policy/spec"},
		{name: "envs", not: []string{"policy/...", "trainer", "config", "rollout"}},
		{name: "envs/<name>", pkgs: envNames, not: []string{"policy/..."}},
		{name: "envs/openenv", not: []string{"policy/...", "rollout", "advantage/..."}},
		{name: "envs/all"}, // contain an environment
		{name: "envs/envtest", use: testsOnly},
		{name: "envs/grid/gridtest", use: testsOnly},
		{name: "policy", gomlx: true, not: []string{"envs/...", "rollout"}, noAsm: true}, // hold executors
		{name: "policy/host", not: []string{"policy"}},                                   // train
		{name: "rollout", not: []string{"advantage/...", "grpo", "graft"}},
		{name: "advantage", only: []string{"internal/strict", "rollout"}},
		{name: "grpo"},
		{name: "graft", not: []string{"policy/..."}},
		{name: "advantage/all"}, // contain an estimator
		{name: "config", not: []string{"policy", "trainer"}},
		{name: "trainer", gomlx: true, notOther: flags}, // hold the config schema
		{name: "compare", not: []string{"trainer", "policy", "policy/host"}},
		{name: "audit", gomlx: true, not: []string{"compare"}}, // change anything of a run it reads but its output folder
		{name: "sweep", not: []string{"grpo", "graft"}},
		{name: "bench", gomlx: true},                  // be needed by training (no row before it may import it)
		{name: "study", gomlx: true, notOther: flags}, // compute statistics or write the report
		{name: "cmd/graftrl", gomlx: true},            // hold algorithm code or orchestration
		{name: "examples/sidebyside", gomlx: true, not: []string{"trainer", "internal/..."}},
	}
}
