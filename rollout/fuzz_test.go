package rollout

import (
	"bytes"
	"compress/gzip"
	"testing"
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// The batch-file reader never panics and never returns a batch that fails validation.
func FuzzReadReplay(f *testing.F) {
	f.Add(gz([]byte(`{"format":"graftrl-batch/1","iter":1,"batch":{"tasks":1,"trajectories":[{"task":0,"steps":[{"key":"a","next_key":"b","reward":-0.1}],"outcome":1,"rows":[{"tokens":[1,2],"logprob":[0,-0.5],"step_of":[-1,0]}]}]}}`)))
	f.Add(gz([]byte(`{"format":"graftrl-batch/1","batch":{"tasks":2,"trajectories":[{"task":3}]}}`)))
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeReplay(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		if err := r.Batch.Validate(); err != nil {
			t.Fatalf("accepted an invalid batch: %v", err)
		}
		r.Batch.Groups()
		r.Batch.NumSteps()
	})
}
