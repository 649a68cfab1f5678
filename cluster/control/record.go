package control

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Kind names a record's kind; each kind has its own subject.
type Kind string

// The record kinds.
const (
	// KindBarrier: epoch Epoch ends at Cuts (per source stream, the last
	// sequence the epoch takes); with Checkpoint set, every task
	// checkpoints at this barrier.
	KindBarrier Kind = "barrier"
	// KindCommit: every epoch up to Committed is committed everywhere;
	// Epoch is the newest barrier appended then (Committed <= Epoch:
	// epochs may run ahead of commits).
	KindCommit Kind = "commit"
	// KindCheckpoint: checkpoint ID, at committed epoch Epoch, is
	// complete; Digest is the SHA-256 of its manifest.
	KindCheckpoint Kind = "checkpoint"
	// KindRestore: every task reloads checkpoint ID and resumes from its
	// cuts; later epochs still number after every earlier one.
	KindRestore Kind = "restore"
	// KindPlacement: placement map version Version takes effect from the
	// next barrier on.
	KindPlacement Kind = "placement"
)

// FormatVersion is the version every record is written with; Decode
// refuses others.
const FormatVersion = 1

// Record is one entry of the control log. Which fields a kind carries is
// fixed (Encode and Decode check it); Seq and Token are set by the log.
type Record struct {
	Kind Kind
	// Seq is the record's sequence in the control stream (set by the
	// writer and the reader, not encoded).
	Seq uint64
	// Token is the coordinator lease revision of the writer that
	// appended the record (its fencing token).
	Token uint64

	Epoch      uint64            // barrier, commit, checkpoint
	Cuts       map[string]uint64 // barrier: JetStream stream -> sequence
	Checkpoint bool              // barrier
	Committed  uint64            // commit
	// BarrierSeq (commit) is the stream sequence of the barrier of epoch
	// Committed, so that the committed cut is two lookups from the tail.
	BarrierSeq uint64
	ID         uint64 // checkpoint, restore
	Digest     string // checkpoint: hex SHA-256 of the manifest
	Version    uint64 // placement
}

// wire is a record as encoded: JSON with the format version, the kind and
// only the fields of that kind.
type wire struct {
	V          int                `json:"v"`
	Kind       Kind               `json:"kind"`
	Token      uint64             `json:"token"`
	Epoch      *uint64            `json:"epoch,omitempty"`
	Cuts       *map[string]uint64 `json:"cuts,omitempty"`
	Checkpoint *bool              `json:"checkpoint,omitempty"`
	Committed  *uint64            `json:"committed,omitempty"`
	BarrierSeq *uint64            `json:"barrier_seq,omitempty"`
	ID         *uint64            `json:"id,omitempty"`
	Digest     *string            `json:"digest,omitempty"`
	Version    *uint64            `json:"version,omitempty"`
}

// Encode writes r in the current format. It refuses a record that Decode
// would refuse.
func Encode(r Record) ([]byte, error) {
	w := wire{V: FormatVersion, Kind: r.Kind, Token: r.Token}
	switch r.Kind {
	case KindBarrier:
		cuts := r.Cuts
		if cuts == nil {
			cuts = map[string]uint64{}
		}
		w.Epoch, w.Checkpoint, w.Cuts = &r.Epoch, &r.Checkpoint, &cuts
	case KindCommit:
		w.Epoch, w.Committed, w.BarrierSeq = &r.Epoch, &r.Committed, &r.BarrierSeq
	case KindCheckpoint:
		w.ID, w.Epoch, w.Digest = &r.ID, &r.Epoch, &r.Digest
	case KindRestore:
		w.ID = &r.ID
	case KindPlacement:
		w.Version = &r.Version
	}
	if _, err := w.record(); err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// Decode reads a record strictly: an unknown version, kind or field, a
// field another kind carries, a missing field or trailing data is an
// error, never ignored (a server must not act on a record it does not
// fully understand).
func Decode(data []byte) (Record, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w wire
	if err := dec.Decode(&w); err != nil {
		return Record{}, fmt.Errorf("control record: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Record{}, fmt.Errorf("control record: data after the record")
	}
	return w.record()
}

// record checks w and turns it into a Record.
func (w wire) record() (Record, error) {
	if w.V != FormatVersion {
		return Record{}, fmt.Errorf("control record: format version %d, this server reads version %d", w.V, FormatVersion)
	}
	r := Record{Kind: w.Kind, Token: w.Token}
	// want lists the fields the kind carries; every other must be absent.
	var want map[string]bool
	switch w.Kind {
	case KindBarrier:
		want = map[string]bool{"epoch": true, "cuts": true, "checkpoint": true}
	case KindCommit:
		want = map[string]bool{"epoch": true, "committed": true, "barrier_seq": true}
	case KindCheckpoint:
		want = map[string]bool{"id": true, "epoch": true, "digest": true}
	case KindRestore:
		want = map[string]bool{"id": true}
	case KindPlacement:
		want = map[string]bool{"version": true}
	default:
		return Record{}, fmt.Errorf("control record: unknown kind %q", w.Kind)
	}
	present := map[string]bool{
		"epoch": w.Epoch != nil, "cuts": w.Cuts != nil, "checkpoint": w.Checkpoint != nil,
		"committed": w.Committed != nil, "barrier_seq": w.BarrierSeq != nil, "id": w.ID != nil,
		"digest": w.Digest != nil, "version": w.Version != nil,
	}
	for _, f := range []string{"epoch", "cuts", "checkpoint", "committed", "barrier_seq", "id", "digest", "version"} {
		switch {
		case want[f] && !present[f]:
			return Record{}, fmt.Errorf("control record: a %s record needs %q", w.Kind, f)
		case !want[f] && present[f]:
			return Record{}, fmt.Errorf("control record: a %s record has no %q", w.Kind, f)
		}
	}
	val := func(p *uint64) uint64 {
		if p == nil {
			return 0
		}
		return *p
	}
	r.Epoch, r.Committed, r.BarrierSeq, r.ID, r.Version = val(w.Epoch), val(w.Committed), val(w.BarrierSeq), val(w.ID), val(w.Version)
	if w.Cuts != nil {
		r.Cuts = *w.Cuts
	}
	if w.Checkpoint != nil {
		r.Checkpoint = *w.Checkpoint
	}
	if w.Digest != nil {
		r.Digest = *w.Digest
	}
	switch {
	case w.Kind == KindBarrier && r.Epoch == 0:
		return Record{}, fmt.Errorf("control record: a barrier's epoch starts at 1")
	case w.Kind == KindCommit && (r.Committed == 0 || r.Committed > r.Epoch || r.BarrierSeq == 0):
		return Record{}, fmt.Errorf("control record: a commit needs 0 < committed (%d) <= epoch (%d) and the barrier's sequence", r.Committed, r.Epoch)
	case w.Kind == KindCheckpoint && (r.ID == 0 || r.Digest == ""):
		return Record{}, fmt.Errorf("control record: a checkpoint needs its id and manifest digest")
	case w.Kind == KindRestore && r.ID == 0:
		return Record{}, fmt.Errorf("control record: a restore needs a checkpoint id")
	case w.Kind == KindPlacement && r.Version == 0:
		return Record{}, fmt.Errorf("control record: a placement version starts at 1")
	}
	return r, nil
}
