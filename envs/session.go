package envs

import "errors"

// ErrSessionLost marks an error of an environment whose instance lives elsewhere (a remote
// server's session) and was lost: the connection dropped, the server restarted or did not answer.
// The instance itself is still usable: its next Reset opens a new session. The rollout collector
// then replays the episode from its task seed on the new session (the env must be deterministic
// given the task and episode seeds) instead of counting it as an error. Match it with errors.Is.
var ErrSessionLost = errors.New("session lost")

// Parallel is implemented by environments whose instances share a limited resource, such as the
// sessions of one remote server. MaxParallel is the most instances that may run episodes at the
// same time (0: no limit); the rollout collector never runs more.
type Parallel interface {
	MaxParallel() int
}
