package audit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/rundir"
	"github.com/graftrl/graftrl/trainer"
)

// Source is a training run opened for auditing: its resolved config, vocabulary and policy,
// and a host sampler that reads the weights of whichever checkpoint was loaded last.
type Source struct {
	// Dir is the run directory.
	Dir string
	// Config is the run's recorded config (config.yaml).
	Config config.Config

	format rollout.Format
	pol    *policy.Policy
	host   trainer.Sampler
}

// Open reads a run's config.yaml and builds its vocabulary (from one instance of the run's env)
// and its policy (on GoMLX's Go backend whatever backend the run trained on: the audit only reads
// the weights, and samples them with the pure-Go host inference path). No trainer is set up and
// nothing is written into the run directory.
func Open(runDir string) (*Source, error) {
	cfg, err := config.Load(filepath.Join(runDir, rundir.ConfigFile), nil)
	if err != nil {
		return nil, err
	}
	cfg.Backend, cfg.Policy.Devices = "go", 0
	info, err := trainer.ProbeEnv(&cfg)
	if err != nil {
		return nil, err
	}
	backend, err := policy.NewBackend(policy.BackendOptions{Name: cfg.Backend})
	if err != nil {
		return nil, err
	}
	pol, err := policy.New(backend, trainer.PolicyOptions(&cfg, info))
	if err != nil {
		return nil, err
	}
	return &Source{Dir: runDir, Config: cfg, format: info.Format, pol: pol}, nil
}

// Checkpoints returns the run's checkpoints that pass trainer.VerifyCheckpoint, oldest first.
func (s *Source) Checkpoints() ([]string, error) {
	list, err := rundir.ListCheckpoints(s.Dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range list {
		if trainer.VerifyCheckpoint(c) == nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// ResolveCheckpoint turns a --checkpoint argument into a checkpoint directory: an iteration
// number N names checkpoints/iter-00000N of the run, anything else is a path; empty means the
// newest valid checkpoint. The checkpoint must pass trainer.VerifyCheckpoint.
func (s *Source) ResolveCheckpoint(arg string) (string, error) {
	if arg == "" {
		list, err := s.Checkpoints()
		if err != nil {
			return "", err
		}
		if len(list) == 0 {
			return "", fmt.Errorf("run %s: %w", s.Dir, ErrNoCheckpoint)
		}
		return list[len(list)-1], nil
	}
	dir := arg
	if n, err := strconv.Atoi(arg); err == nil && n >= 0 {
		dir = rundir.CheckpointPath(s.Dir, n)
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", arg, err)
	}
	if err := trainer.VerifyCheckpoint(dir); err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return dir, nil
}

// CheckpointIter reads the iteration from a checkpoint directory name (iter-000080 → 80; -1
// when the name is not a checkpoint name, see rundir.ParseCheckpointName).
func CheckpointIter(dir string) int {
	n, err := rundir.ParseCheckpointName(filepath.Base(dir))
	if err != nil {
		return -1
	}
	return n
}

// Setup loads the checkpoint's weights and returns the audit setup of the run: its env, token
// layout and action masking, the host sampler of those weights, and tasks tasks of the training
// panel (0: tasks.per_iter), drawn without replacement with seed, each rolled out
// tasks.group_size times — the shape of one training iteration's batch.
func (s *Source) Setup(ckpt string, tasks int, seed uint64) (Setup, error) {
	cfg := s.Config
	if err := s.pol.Load(rundir.PolicyPath(ckpt)); err != nil {
		return Setup{}, err
	}
	var err error
	if s.host == nil {
		s.host, err = trainer.NewSampler(s.pol)
	} else {
		var w [][]float32
		if w, err = s.pol.Weights(); err == nil {
			err = s.host.SetWeights(w)
		}
	}
	if err != nil {
		return Setup{}, err
	}
	if tasks == 0 {
		tasks = cfg.Tasks.PerIter
	}
	// The tasks audited are training tasks: a draw from the training panel, or, for a run
	// trained on open tasks, a panel of that many open tasks fixed by the seed.
	panel := envs.TaskSeeds(envs.Train, cfg.Tasks.Train.Size, cfg.Tasks.PanelSeed)
	if cfg.Tasks.Train.Open {
		panel = envs.OpenTaskSeeds(rand.New(rand.NewPCG(seed, 0x09e7)), max(tasks, 1))
	}
	if tasks < 1 || tasks > len(panel) {
		return Setup{}, fmt.Errorf("audit: tasks = %d: must be in 1..%d (the training panel)", tasks, len(panel))
	}
	perm := rand.New(rand.NewPCG(seed, 0x7a5c5)).Perm(len(panel))[:tasks]
	chosen := make([]int64, tasks)
	for i, j := range perm {
		chosen[i] = panel[j]
	}
	host := s.host
	rc := cfg.RolloutConfig()
	rc.ActionBias = s.pol.ActionBias()
	return Setup{
		Env:        cfg.Env.Name,
		NewEnv:     func() (envs.Env, error) { return envs.New(cfg.Env.Name, cfg.Env.Options) },
		Format:     s.format,
		Rollout:    rc,
		NewDecoder: func(batch int) rollout.Decoder { return host.NewDecoder(batch) },
		Tasks:      chosen,
		Group:      cfg.Tasks.GroupSize,
	}, nil
}

// ErrNoCheckpoint is returned when a run has no checkpoint to audit.
var ErrNoCheckpoint = errors.New("no valid checkpoint")
