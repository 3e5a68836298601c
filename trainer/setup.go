package trainer

import (
	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/policy"
	"github.com/graftrl/graftrl/rollout"
	"github.com/graftrl/graftrl/tokens"
)

// The set-up a training run (New) and a warm start (RunSFT) share: one probe of the env, the
// policy on the config's backend, and the collector that steps the env's instances for it.

// probeEnv builds one instance of the configured environment, runs check on it when check is
// not nil (its error is returned as it is), describes it (describeEnv) and closes it again. An
// env that cannot be built is a *config.Error.
func probeEnv(c *config.Config, check func(envs.Env) error) (EnvInfo, error) {
	probe, err := envs.New(c.Env.Name, c.Env.Options)
	if err != nil {
		return EnvInfo{}, &config.Error{Msg: err.Error()}
	}
	defer envs.Close(probe)
	if check != nil {
		if err := check(probe); err != nil {
			return EnvInfo{}, err
		}
	}
	return describeEnv(c, probe)
}

// newPolicy builds the backend of c and a policy of options po on it; options the policy
// refuses are a *config.Error.
func newPolicy(c *config.Config, po policy.Options, installPlugin bool) (*policy.Policy, error) {
	backend, err := policy.NewBackend(backendOptions(c, installPlugin))
	if err != nil {
		return nil, err
	}
	pol, err := policy.New(backend, po)
	if err != nil {
		return nil, &config.Error{Msg: err.Error()}
	}
	return pol, nil
}

// newCollector builds the collector of c's rollouts for pol (its action bias): slots instances of
// the configured environment, their text encoded with vocab.
func newCollector(c *config.Config, pol *policy.Policy, vocab *tokens.Vocab, slots int) (*rollout.Collector, error) {
	rc := c.RolloutConfig()
	rc.ActionBias = pol.ActionBias()
	return rollout.NewCollector(rc, vocab, func() (envs.Env, error) {
		return envs.New(c.Env.Name, c.Env.Options)
	}, slots)
}

// backendOptions are the options of the run's backend: its name, the devices the updates are
// split over, and whether a missing plugin may be downloaded.
func backendOptions(c *config.Config, installPlugin bool) policy.BackendOptions {
	return policy.BackendOptions{Name: c.Backend, InstallPlugin: installPlugin, Devices: c.Policy.Devices}
}
