package envs

// DecodeOptions decodes the options of an env over its defaults and validates the result; every
// env's ConfigFromOptions is one call. Where some defaults depend on other options (the side of a
// grid, the number of calls), byOptions is given: the options are decoded first over defaults to
// read those options, byOptions checks them and returns the defaults they imply, and the options
// are decoded again over these, so that explicit keys win over the defaults of their side. It
// returns the configuration and its validation; on an error before, the zero configuration.
func DecodeOptions[C interface{ Validate() error }](env string, opts Options, defaults C, byOptions func(probe C) (C, error)) (C, error) {
	var zero C
	if err := opts.Decode(env, &defaults); err != nil {
		return zero, err
	}
	cfg := defaults
	if byOptions != nil {
		var err error
		if cfg, err = byOptions(defaults); err != nil {
			return zero, err
		}
		if err := opts.Decode(env, &cfg); err != nil {
			return zero, err
		}
	}
	return cfg, cfg.Validate()
}
