package sokoban

import (
	"testing"

	"github.com/graftrl/graftrl/envs/envtest"
)

// TestGoldenTranscript checks the env as the registry makes it: its option docs name allowed keys,
// and everything it says and does in several configurations (option docs, vocabulary,
// instructions, observations, rewards, state keys, pictures, valid and expert actions) matches the
// hashes of testdata/transcripts.sha256, computed from the code before the grid envs shared their
// episode lifecycle (grid.Episode). See envtest.CheckGolden.
func TestGoldenTranscript(t *testing.T) { envtest.CheckGolden(t, Name, "testdata/transcripts.sha256") }
