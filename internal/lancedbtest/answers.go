package lancedbtest

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// Answers is what LanceDB reported about one fixture table
// (testdata/fixtures/<name>.answers.json).
type Answers struct {
	Name               string          `json:"name"`
	LanceDB            string          `json:"lancedb"`
	StableRowIDs       bool            `json:"stable_row_ids"`
	DataStorageVersion string          `json:"data_storage_version"`
	ManifestNaming     string          `json:"manifest_naming"`
	Versions           []VersionAnswer `json:"versions"`
	Changes            []ChangeAnswer  `json:"changes"`
}

// VersionAnswer describes one version as LanceDB's scan returned it.
type VersionAnswer struct {
	Version     uint64                       `json:"version"`
	Op          string                       `json:"op"`
	TimestampMS int64                        `json:"timestamp_ms"`
	NumRows     uint64                       `json:"num_rows"`
	Schema      json.RawMessage              `json:"schema"`
	Rows        map[string]Runs              `json:"rows"`
	Data        []map[string]json.RawMessage `json:"data,omitempty"`
}

// ChangeAnswer is the change set between two versions, by definition from
// LanceDB's scans.
type ChangeAnswer struct {
	From     uint64 `json:"from"`
	To       uint64 `json:"to"`
	Inserted Runs   `json:"inserted"`
	Updated  Runs   `json:"updated"`
	Deleted  Runs   `json:"deleted"`
}

// Runs is a u64 sequence encoded as [first, delta, count] triples.
type Runs []uint64

// UnmarshalJSON decodes and expands the triples exactly (no float64).
func (r *Runs) UnmarshalJSON(b []byte) error {
	var triples [][3]json.Number
	if err := json.Unmarshal(b, &triples); err != nil {
		return err
	}
	var out []uint64
	for _, t := range triples {
		first, err := strconv.ParseUint(string(t[0]), 10, 64)
		if err != nil {
			return fmt.Errorf("runs: first %s: %w", t[0], err)
		}
		delta, err := strconv.ParseInt(string(t[1]), 10, 64)
		if err != nil {
			return fmt.Errorf("runs: delta %s: %w", t[1], err)
		}
		count, err := strconv.ParseUint(string(t[2]), 10, 64)
		if err != nil || count == 0 || count > 1<<26 {
			return fmt.Errorf("runs: bad count %s", t[2])
		}
		for i := uint64(0); i < count; i++ {
			out = append(out, first+uint64(int64(i)*delta))
		}
	}
	*r = out
	return nil
}

// LoadAnswers reads an answers file.
func LoadAnswers(path string) (*Answers, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var a Answers
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &a, nil
}
