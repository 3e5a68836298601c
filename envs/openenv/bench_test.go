package openenv_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/graftrl/graftrl/envs"
	"github.com/graftrl/graftrl/envs/openenv"
)

// BenchmarkOpenEnvStep16Sessions measures 16 client sessions stepping the maze in parallel against
// one server on loopback, as a collector with 16 parallel episodes drives it (Resets included); it
// reports the total steps per second.
func BenchmarkOpenEnvStep16Sessions(b *testing.B) {
	const sessions = 16
	_, url := startServer(b, openenv.ServerOptions{Env: "maze", MaxSessions: sessions})
	clients := make([]envs.Env, sessions)
	for i := range clients {
		e, err := envs.New(openenv.Name, envs.Options{"url": url})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := e.Reset(int64(i)); err != nil {
			b.Fatal(err)
		}
		clients[i] = e
	}
	actions := [...]string{"up", "right", "down", "left", "right", "jump", "down", "down", "left", "up", "right"}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for i, e := range clients {
		wg.Go(func() {
			seed, k := int64(i), i
			for next.Add(1) <= int64(b.N) {
				obs, err := e.Step(actions[k%len(actions)])
				if err != nil {
					b.Error(err)
					return
				}
				k++
				if obs.Over() {
					seed += sessions
					if _, _, err := e.Reset(seed); err != nil {
						b.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	for _, e := range clients {
		e.(interface{ Close() error }).Close()
	}
}
