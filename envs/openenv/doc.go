// Package openenv connects graftrl to OpenEnv, the wire protocol of remote agentic-RL environments
// (see docs/OPENENV.md and README.md in this folder), in both directions:
//
//   - Server serves any registered graftrl environment to OpenEnv clients (TRL among them): one
//     environment instance per WebSocket session on /ws, plus OpenEnv's HTTP routes. Besides the
//     fields OpenEnv expects, its observations carry what graftrl's step-level estimators need
//     (text, state_key, step_reward, outcome, truncated, info), which plain OpenEnv clients ignore.
//   - The client environment, registered as "openenv", plays an episode of any OpenEnv server as an
//     envs.Env: one WebSocket session per instance. Against a graftrl server it rebuilds every
//     envs.Observation exactly; against other servers it maps the envelope's reward and done onto
//     graftrl's Reward, Outcome and Success (see ClientOptions).
//
// Import the package for its side effect of registering "openenv".
package openenv
