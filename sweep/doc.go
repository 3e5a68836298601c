// Package sweep runs ablation sweeps: it expands a sweep config (a base training config and a
// grid of config keys — estimators × envs × seeds × any key) into runs with stable names, writes
// them into one sweep directory and runs them, locally on a worker pool or as one Slurm job
// array.
//
// A sweep directory <out_dir>/<name>/ holds:
//
//	manifest.json        the runs in index order (the index `sweep run-one --index` takes)
//	sweep.yaml           the sweep config as given; base.yaml the base training config
//	configs/<run>.yaml   each run's resolved training config (base + grid values + set)
//	runs/<run>/          the run directories (config.yaml, metrics.jsonl, summary.json …)
//	logs/<run>.log       each run's output, appended attempt after attempt
//	state/<run>.json     the last attempt: when, where, exit status
//	slurm/               the batch script, the Slurm output files and the submitted job ids
//
// A run is finished when its directory holds a summary.json whose iterations or env steps reach
// the config's budget and a config.yaml equal to the sweep's resolved config. Every executor
// skips finished runs and resumes the others from their newest checkpoint (`graftrl train
// --resume`; from the beginning when they wrote none), so running the same sweep again after an
// interruption (Ctrl-C, a killed job, a crash) finishes it without redoing finished runs or the
// finished part of the others. Per-run locks keep two executors from running the same run at
// once.
//
// The sweep config's keys are documented in configs/README.md (section Sweeps).
package sweep
