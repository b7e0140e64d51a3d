package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ModelFile is the file name of a model in a repository's version folder,
// as Triton's TFLite backend names it.
const ModelFile = "model.tflite"

// ConfigFile is the name of a model's optional configuration in its
// repository folder.
const ConfigFile = "config.json"

// A Source is one version of one model to serve.
type Source struct {
	Name    string      // the model's name in the protocol's paths
	Version string      // a positive decimal integer, e.g. "1"
	Path    string      // the .tflite file
	Config  ModelConfig // from the model's config.json; empty for --model
}

// ModelConfig is a model's configuration, read from its config.json; a
// field left out takes the server's default (Options).
type ModelConfig struct {
	// Instances is how many interpreters run the model's requests at once.
	Instances *int `json:"instances,omitempty"`
	// MaxQueue is how many requests may wait for an instance; those beyond
	// are refused with ErrOverloaded.
	MaxQueue *int `json:"max_queue,omitempty"`
}

// ParseModel reads a --model argument, NAME=PATH: the model at PATH served
// as NAME, version 1.
func ParseModel(arg string) (Source, error) {
	name, path, ok := strings.Cut(arg, "=")
	if !ok || path == "" {
		return Source{}, fmt.Errorf("%q: want NAME=PATH, the model's name, '=' and its .tflite file", arg)
	}
	if err := checkName(name); err != nil {
		return Source{}, fmt.Errorf("%q: %w", arg, err)
	}
	return Source{Name: name, Version: "1", Path: path}, nil
}

// checkName checks a model's name: letters, digits, '_', '-' and '.',
// not "." or "..", as it must stand in a URL path unescaped.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." {
		return fmt.Errorf("model name %q: a name needs a letter or digit", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("model name %q: %q is not allowed (letters, digits, '_', '-' and '.' are)", name, r)
		}
	}
	return nil
}

// Repository lists the models of the model repository dir: one folder per
// model (named as the model is served), holding an optional config.json
// (ModelConfig) and one folder per version, named by a positive decimal
// integer, each holding model.tflite. Folders whose names start with '.'
// are skipped; a model folder with no version, a version folder without
// model.tflite or any other folder in a model folder is an error that
// names it.
func Repository(dir string) ([]Source, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("model repository: %w", err)
	}
	var out []Source
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		srcs, err := repositoryModel(filepath.Join(dir, e.Name()), e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, srcs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("model repository %s holds no model: want NAME/1/%s", dir, ModelFile)
	}
	return out, nil
}

// repositoryModel lists the versions of the model folder dir, called name.
func repositoryModel(dir, name string) ([]Source, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	cfg, err := readConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("model repository: %w", err)
	}
	var out []Source
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		vdir := filepath.Join(dir, e.Name())
		if !isVersion(e.Name()) {
			return nil, fmt.Errorf("%s: a model folder holds version folders named by positive numbers (1, 2, ...), not %q", dir, e.Name())
		}
		path := filepath.Join(vdir, ModelFile)
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("model %q version %s: %w", name, e.Name(), err)
		}
		out = append(out, Source{Name: name, Version: e.Name(), Path: path, Config: cfg})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("model %q (%s) has no version folder: want %s", name, dir, filepath.Join(dir, "1", ModelFile))
	}
	return out, nil
}

// isVersion reports whether s names a version: a positive decimal integer
// without leading zeros.
func isVersion(s string) bool {
	v, err := strconv.ParseUint(s, 10, 63)
	return err == nil && v > 0 && strconv.FormatUint(v, 10) == s
}

// readConfig reads a model's config.json; a missing file is an empty
// configuration.
func readConfig(path string) (ModelConfig, error) {
	var cfg ModelConfig
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("model config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%s: %v (it may set %s)", path, err, configFields)
	}
	for _, f := range []struct {
		name string
		v    *int
		min  int
	}{{"instances", cfg.Instances, 1}, {"max_queue", cfg.MaxQueue, 0}} {
		if f.v != nil && *f.v < f.min {
			return cfg, fmt.Errorf("%s: %s must be at least %d, got %d", path, f.name, f.min, *f.v)
		}
	}
	return cfg, nil
}

// configFields are the fields a config.json may set.
const configFields = `"instances" and "max_queue"`
