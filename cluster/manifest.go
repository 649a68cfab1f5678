package cluster

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"streamdb/catalog"
)

// A checkpoint of a server describes each view-group's part of it in a
// task manifest, and names every task manifest, with its SHA-256, in one
// global manifest written after all of them (package checkpoint writes
// both). A group is restored elsewhere from its task manifest alone: its
// views, the key spans that hold their state, the files holding exactly
// those keys, and where each of its views' sources stood (the cuts).

// ManifestVersion is the "v" of both manifests; readers refuse others.
const ManifestVersion = 1

// TaskManifest describes one view-group's state in a checkpoint.
type TaskManifest struct {
	V          int    `json:"v"`
	Group      uint32 `json:"group"`
	Checkpoint uint64 `json:"checkpoint"`
	// Epoch is the committed epoch the spans hold.
	Epoch uint64     `json:"epoch"`
	Views []TaskView `json:"views"`
	// Spans are disjoint and sorted; every key of the group's views lies
	// in one of them and no other key does.
	Spans []SpanFile `json:"spans"`
	// Cuts are the group's views' source positions at Epoch.
	Cuts []SourceCut `json:"cuts"`
	// Catalog is the digest of the group's views' layouts (CatalogDigest):
	// the catalog version the state belongs to.
	Catalog string `json:"catalog"`
}

// TaskView is one view of a group: its name, its object id (the prefix
// of its state keys) and the digest of its state layout (LayoutDigest).
type TaskView struct {
	Name   string `json:"name"`
	ID     uint32 `json:"id"`
	Layout string `json:"layout"`
}

// SpanFile is one key span [Start, End) and the sstable holding exactly
// its keys (none when File is empty: the span holds no key).
type SpanFile struct {
	Start  []byte `json:"start"`
	End    []byte `json:"end"`
	File   string `json:"file,omitempty"`
	Keys   int64  `json:"keys"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
}

// SourceCut is where one source of one view stands: the last sequence of
// Subject (in JetStream stream Stream) the view's state holds.
type SourceCut struct {
	View    string `json:"view"`
	Source  int    `json:"source"`
	Stream  string `json:"stream"`
	Subject string `json:"subject"`
	Seq     uint64 `json:"seq"`
}

// GlobalManifest names every task manifest of one checkpoint. It is
// written after all of them, so its presence means they all exist.
type GlobalManifest struct {
	V          int       `json:"v"`
	Checkpoint uint64    `json:"checkpoint"`
	Epoch      uint64    `json:"epoch"`
	Catalog    string    `json:"catalog"`
	Tasks      []TaskRef `json:"tasks"`
}

// TaskRef names one task manifest: its group, views, file and SHA-256.
type TaskRef struct {
	Group  uint32   `json:"group"`
	Views  []string `json:"views"`
	File   string   `json:"file"`
	SHA256 string   `json:"sha256"`
}

// Digest is the hex SHA-256 of data.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// layoutFields are what fixes the keys and values of a view's state:
// its id, columns, plan and the tables its operators own. Names, owners,
// comments and creation times are left out: two servers that ran the same
// DDL agree on a view's layout.
type layoutFields struct {
	ID       uint32                `json:"id"`
	Kind     catalog.ObjectKind    `json:"kind"`
	Columns  []catalog.Column      `json:"columns"`
	Query    string                `json:"query"`
	Plan     json.RawMessage       `json:"plan,omitempty"`
	Dataflow catalog.FormatVersion `json:"dataflow"`
	VNodes   uint16                `json:"vnodes"`
	OpState  map[string][]uint16   `json:"op_state,omitempty"`
	NextOp   uint16                `json:"next_op"`
	Indexes  []catalog.Index       `json:"indexes,omitempty"`
}

// LayoutDigest is the digest of what fixes view d's state layout.
func LayoutDigest(d *catalog.Descriptor) string {
	data, err := json.Marshal(layoutFields{ID: d.ID, Kind: d.Kind, Columns: d.Columns, Query: d.Query, Plan: d.Plan,
		Dataflow: d.Dataflow, VNodes: d.VNodes, OpState: d.OpState, NextOp: d.NextOp, Indexes: d.Indexes})
	if err != nil {
		// Every field is plain data; Marshal cannot fail on it.
		panic(err)
	}
	return Digest(data)
}

// CatalogDigest is the digest of views' layouts, in the order given.
func CatalogDigest(views []TaskView) string {
	var b bytes.Buffer
	for _, v := range views {
		fmt.Fprintf(&b, "%s\x00%d\x00%s\n", v.Name, v.ID, v.Layout)
	}
	return Digest(b.Bytes())
}

// DecodeTaskManifest decodes a task manifest strictly and checks it.
func DecodeTaskManifest(data []byte) (*TaskManifest, error) {
	m := new(TaskManifest)
	if err := decodeStrict(data, m); err != nil {
		return nil, fmt.Errorf("task manifest: %w", err)
	}
	if m.V != ManifestVersion {
		return nil, fmt.Errorf("task manifest version %d: this streamdb reads version %d", m.V, ManifestVersion)
	}
	if len(m.Views) == 0 {
		return nil, fmt.Errorf("task manifest of group %d names no view", m.Group)
	}
	if m.Catalog != CatalogDigest(m.Views) {
		return nil, fmt.Errorf("task manifest of group %d: its catalog digest does not match its views", m.Group)
	}
	for i, s := range m.Spans {
		if bytes.Compare(s.Start, s.End) >= 0 {
			return nil, fmt.Errorf("task manifest of group %d: span %d is empty or reversed", m.Group, i)
		}
		if i > 0 && bytes.Compare(m.Spans[i-1].End, s.Start) > 0 {
			return nil, fmt.Errorf("task manifest of group %d: spans %d and %d overlap or are out of order", m.Group, i-1, i)
		}
		if (s.File == "") != (s.Keys == 0) {
			return nil, fmt.Errorf("task manifest of group %d: span %d has %d keys and file %q", m.Group, i, s.Keys, s.File)
		}
	}
	return m, nil
}

// DecodeGlobalManifest decodes a global manifest strictly.
func DecodeGlobalManifest(data []byte) (*GlobalManifest, error) {
	m := new(GlobalManifest)
	if err := decodeStrict(data, m); err != nil {
		return nil, fmt.Errorf("global manifest: %w", err)
	}
	if m.V != ManifestVersion {
		return nil, fmt.Errorf("global manifest version %d: this streamdb reads version %d", m.V, ManifestVersion)
	}
	return m, nil
}

// Task returns the task manifest reference of the group holding view.
func (m *GlobalManifest) Task(view string) (TaskRef, bool) {
	for _, t := range m.Tasks {
		if slices.Contains(t.Views, view) {
			return t, true
		}
	}
	return TaskRef{}, false
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}
