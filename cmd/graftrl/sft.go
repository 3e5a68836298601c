package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/trainer"
)

// sftOptions are the flags of `graftrl sft`.
type sftOptions struct {
	train trainOptions
	out   string
}

func newSFTCmd() *cobra.Command {
	o := &sftOptions{}
	cmd := &cobra.Command{
		Use:   "sft --config FILE [--set key=value ...] [--out DIR]",
		Short: "Warm-start a policy by supervised fine-tuning on the env's expert demonstrations",
		Long: `Roll out the environment's expert (with the sft section's ε-noise) on fresh tasks outside
every panel and train the config's policy on the expert's actions with token-level cross-entropy:
the same context layout and tokens as RL. The config's sft section sets the demonstrations, ε,
steps, batch and learning rate (configs/README.md, sft).

The result is a folder (policy/, vocab.txt, sft.json), by default the one graftrl train uses for
the same config and seed (<out_dir>/sft/<env>-seed<seed>-<key>), so a later train starts from it
without computing it again. Start any run from it with --set policy.init=DIR. One process at
a time computes a warm start: a second one is refused at once, naming the first.`,
		Example: `  # the warm start keydoor's training config uses (under runs/sft/)
  graftrl sft --config configs/envs/keydoor.yaml

  # another seed, into a folder of its own; then train from it
  graftrl sft --config configs/envs/keydoor.yaml --seed 2 --out warm/keydoor-2
  graftrl train --config configs/envs/keydoor.yaml --seed 2 --set sft.demos=0 --set policy.init=warm/keydoor-2`,
		Args: noArgs("--config"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.train.config == "" {
				return &usageError{"sft: --config FILE is required"}
			}
			o.train.set = changedFlags(cmd)
			if err := o.train.check(); err != nil {
				return err
			}
			o.train.out = cmd.ErrOrStderr()
			o.train.progress = isTerminal(os.Stderr)
			return sftRun(o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.train.config, "config", "c", "", "YAML config file (with an sft section)")
	f.StringArrayVar(&o.train.sets, "set", nil, "override a config key: key.path=value (repeatable)")
	f.Int64Var(&o.train.seed, "seed", 0, "run seed (default: the config's)")
	f.StringVar(&o.train.backend, "backend", "", "GoMLX backend: go (default), xla:cpu, xla:cuda")
	f.StringVar(&o.train.outDir, "out-dir", "", "directory of run directories (the warm start goes under it)")
	f.BoolVarP(&o.train.quiet, "quiet", "q", false, "no per-step log lines")
	f.StringVar(&o.out, "out", "", "write the warm start to this folder instead (it must not exist)")
	return cmd
}

func sftRun(o *sftOptions, stdout io.Writer) error {
	cfg, file, err := o.train.loadConfig()
	if err != nil {
		return err
	}
	if !cfg.SFT.Enabled() {
		return &config.Error{File: file, Msg: "sft.demos: the config has no warm start (set sft.demos > 0; see configs/README.md, sft)"}
	}
	dir := o.out
	if dir == "" {
		dir = trainer.WarmStartDir(cfg)
		if _, err := os.Stat(filepath.Join(dir, rundir.SFTReportFile)); err == nil {
			fmt.Fprintf(stdout, "warm start %s exists already (same config and seed): nothing to do\n", dir)
			return nil
		}
	}
	rep, err := trainer.RunSFT(cfg, dir, trainer.Options{Out: o.train.out, Progress: o.train.progress, Quiet: o.train.quiet})
	if err != nil {
		return o.train.blame(err, file)
	}
	final := 0.0
	if n := len(rep.Loss); n > 0 {
		final = rep.Loss[n-1].Loss
	}
	fmt.Fprintf(stdout, "warm start %s: %d demonstrations (expert success %.2f), %d steps, final cross-entropy %.4f, %.0fs; policy sha256 %s\n",
		dir, rep.Demos, rep.DemoSuccess, cfg.SFT.Steps, final, rep.Seconds["total"], rep.SHA256)
	if o.out == "" {
		fmt.Fprintf(stdout, "graftrl train --config %s (same seed) starts from it\n", file)
	} else {
		fmt.Fprintf(stdout, "train from it: graftrl train --config %s --set sft.demos=0 --set policy.init=%s\n", file, dir)
	}
	return nil
}
