package trainer

import (
	"github.com/graftrl/graftrl/config"
	"github.com/graftrl/graftrl/policy"
)

// Config is the run configuration a trainer runs (package config: its schema, defaults,
// decoding and validation).
type Config = config.Config

// ConfigError is a configuration problem (config.Error): commands exit with status 2 on it.
type ConfigError = config.Error

// SFTConfig is the sft section of a config (config.SFTConfig).
type SFTConfig = config.SFTConfig

// BackendOptions are the options of the run's backend: its name, the devices the updates are
// split over, and whether a missing plugin may be downloaded.
func BackendOptions(c *Config, installPlugin bool) policy.BackendOptions {
	return policy.BackendOptions{Name: c.Backend, InstallPlugin: installPlugin, Devices: c.Policy.Devices}
}
