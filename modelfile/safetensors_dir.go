package modelfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/graftrl/graftrl/internal/limits"
)

// The file names of a Hugging Face checkpoint's weights: one file, or shards named by an index.
const (
	SafetensorsFile      = "model.safetensors"
	SafetensorsIndexFile = "model.safetensors.index.json"
)

// SafetensorsDir is the tensors of a checkpoint directory: those of model.safetensors, or, when
// the directory has no such file, those model.safetensors.index.json maps to its shards.
type SafetensorsDir struct {
	files []*Safetensors
	where map[string]int // tensor name → index in files
	names []string       // shards in the index's order of first use, each shard's tensors in data order
}

// safetensorsIndex is model.safetensors.index.json.
type safetensorsIndex struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// OpenSafetensorsDir opens the weights of the checkpoint in dir: model.safetensors, else the
// shards of model.safetensors.index.json (each tensor must be in the shard the index names, and
// a shard's name must be a file of dir). Every file is bounded by limits.Model. Close it when
// done.
func OpenSafetensorsDir(dir string) (*SafetensorsDir, error) {
	single := filepath.Join(dir, SafetensorsFile)
	if _, err := os.Stat(single); err == nil {
		s, err := OpenSafetensors(single)
		if err != nil {
			return nil, err
		}
		d := &SafetensorsDir{files: []*Safetensors{s}, where: map[string]int{}}
		for _, t := range s.Tensors {
			d.where[t.Name] = 0
			d.names = append(d.names, t.Name)
		}
		return d, nil
	}
	indexPath := filepath.Join(dir, SafetensorsIndexFile)
	b, err := limits.Model.ReadFile(indexPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: neither %s nor %s: not a safetensors checkpoint", dir, SafetensorsFile, SafetensorsIndexFile)
	}
	if err != nil {
		return nil, err
	}
	var idx safetensorsIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w (want {\"weight_map\": {tensor: shard file}})", indexPath, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("%s: weight_map is missing or empty; it names the shard of every tensor", indexPath)
	}
	d := &SafetensorsDir{where: map[string]int{}}
	if err := d.openShards(dir, indexPath, idx.WeightMap); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// openShards opens each shard the index names once, in name order, and checks that it holds
// the tensors the index puts in it.
func (d *SafetensorsDir) openShards(dir, indexPath string, weightMap map[string]string) error {
	byShard := map[string][]string{}
	for tensor, shard := range weightMap {
		byShard[shard] = append(byShard[shard], tensor)
	}
	shards := make([]string, 0, len(byShard))
	for shard := range byShard {
		shards = append(shards, shard)
	}
	slices.Sort(shards)
	for _, shard := range shards {
		if shard == "" || shard != filepath.Base(shard) || shard == "." || shard == ".." || strings.ContainsAny(shard, `/\`) {
			return fmt.Errorf("%s: shard %q is not a file name in the checkpoint's directory", indexPath, shard)
		}
		s, err := OpenSafetensors(filepath.Join(dir, shard))
		if err != nil {
			return err
		}
		d.files = append(d.files, s)
		for _, tensor := range byShard[shard] {
			if _, ok := s.TensorInfo(tensor); !ok {
				return fmt.Errorf("%s: names tensor %q in %s, which does not hold it", indexPath, tensor, shard)
			}
			d.where[tensor] = len(d.files) - 1
		}
		for _, t := range s.Tensors {
			if i, ok := d.where[t.Name]; ok && i == len(d.files)-1 {
				d.names = append(d.names, t.Name)
			}
		}
	}
	return nil
}

// Names are the checkpoint's tensors: by shard, each shard's in the order of its data.
func (d *SafetensorsDir) Names() []string { return slices.Clone(d.names) }

// TensorInfo is the header entry of the tensor called name and the file holding it.
func (d *SafetensorsDir) TensorInfo(name string) (SafetensorsInfo, string, bool) {
	i, ok := d.where[name]
	if !ok {
		return SafetensorsInfo{}, "", false
	}
	t, _ := d.files[i].TensorInfo(name)
	return t, d.files[i].Name(), true
}

// Tensor reads the tensor called name as float32 (see Safetensors.Tensor).
func (d *SafetensorsDir) Tensor(name string) ([]float32, error) {
	i, ok := d.where[name]
	if !ok {
		return nil, fmt.Errorf("no tensor %q in the checkpoint (it has %d)", name, len(d.names))
	}
	return d.files[i].Tensor(name)
}

// Close closes every file.
func (d *SafetensorsDir) Close() error {
	var errs []error
	for _, f := range d.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
