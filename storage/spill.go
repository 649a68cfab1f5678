package storage

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// A Spill holds writes of one epoch that are too many to keep in memory
// until the epoch commits (a table's pipeline applying one commit of
// millions of rows): sorted runs in files. CommitSpilled commits them
// together with the epoch's batch as one atomic ingestion of sstables, so
// Pebble still holds whole epochs, and the memory the epoch takes is one
// run being written plus a read buffer per run at the commit.
type Spill struct {
	dir  string
	runs []string
	n    int
}

// spillSeq names spill directories and ingested files uniquely within
// the process.
var spillSeq atomic.Uint64

// NewSpill returns an empty spill whose runs are files in a new directory
// under the store's directory (the system's temporary directory for the
// memory backend).
func (s *Store) NewSpill() (*Spill, error) {
	parent := s.dir
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "spill-")
	if err != nil {
		return nil, fmt.Errorf("spill an epoch's writes: %w", err)
	}
	return &Spill{dir: dir}, nil
}

// Runs reports how many runs the spill holds.
func (sp *Spill) Runs() int { return len(sp.runs) }

// Close removes the spill's files.
func (sp *Spill) Close() {
	if sp != nil && sp.dir != "" {
		os.RemoveAll(sp.dir)
		sp.dir, sp.runs = "", nil
	}
}

// removeStaleSpills removes the files of spills and ingestions that a
// crash left in the store's directory (their epochs never committed), and
// the statements' key sets (keyset.go) and the scratch stores of the
// transaction blocks that were open then.
func removeStaleSpills(dir string) {
	for _, pat := range []string{"spill-*", "ingest-*.sst", "keyset-*", "scratch-*"} {
		matches, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, m := range matches {
			os.RemoveAll(m)
		}
	}
}

// RunWriter writes one run: keys in strictly increasing order.
type RunWriter struct {
	f   *os.File
	w   *bufio.Writer
	buf []byte
	err error
}

// NewRun starts a run; Finish it to add it to the spill. Runs added later
// are newer: their writes of a key win over earlier runs'.
func (sp *Spill) NewRun() (*RunWriter, error) {
	f, err := os.Create(filepath.Join(sp.dir, fmt.Sprintf("run-%06d", sp.n)))
	if err != nil {
		return nil, fmt.Errorf("spill an epoch's writes: %w", err)
	}
	sp.n++
	return &RunWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Add records key -> val, or the deletion of key.
func (rw *RunWriter) Add(key, val []byte, del bool) error {
	if rw.err != nil {
		return rw.err
	}
	b := rw.buf[:0]
	if del {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(val)))
	b = append(b, val...)
	rw.buf = b
	_, rw.err = rw.w.Write(b)
	return rw.err
}

// Finish closes the run and adds it to sp.
func (sp *Spill) Finish(rw *RunWriter) error {
	err := rw.err
	if err == nil {
		err = rw.w.Flush()
	}
	if cerr := rw.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("spill an epoch's writes: %w", err)
	}
	sp.runs = append(sp.runs, rw.f.Name())
	return nil
}

// mergeSource is one sorted input of the merge: a run, or the batch.
type mergeSource struct {
	age int // higher is newer
	key []byte
	val []byte
	del bool
	ok  bool
	// a run's file
	r *bufio.Reader
	f *os.File
	// the batch's entries, sorted
	ents []batchEntry
	pos  int
}

type batchEntry struct {
	key, val []byte
	del      bool
}

func (m *mergeSource) next() error {
	if m.r == nil {
		if m.pos >= len(m.ents) {
			m.ok = false
			return nil
		}
		e := m.ents[m.pos]
		m.pos++
		m.key, m.val, m.del, m.ok = e.key, e.val, e.del, true
		return nil
	}
	kind, err := m.r.ReadByte()
	if err == io.EOF {
		m.ok = false
		return nil
	}
	if err != nil {
		return err
	}
	if m.key, err = readChunk(m.r, m.key); err != nil {
		return err
	}
	if m.val, err = readChunk(m.r, m.val); err != nil {
		return err
	}
	m.del, m.ok = kind == 1, true
	return nil
}

func readChunk(r *bufio.Reader, buf []byte) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, unexpected(err)
	}
	buf = slices.Grow(buf[:0], int(n))[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, unexpected(err)
	}
	return buf, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// mergeHeap orders sources by key, the newest first among equal keys.
type mergeHeap []*mergeSource

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	return h[i].age > h[j].age
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeSource)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// errBatchKind: the batch holds a kind of write the merge does not take.
var errBatchKind = errors.New("batch holds a write the merge does not take")

// sortedBatch returns b's writes in key order, the newest write of each key.
func sortedBatch(b *pebble.Batch) ([]batchEntry, error) {
	var ents []batchEntry
	r := b.Reader()
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch kind {
		case pebble.InternalKeyKindSet:
			ents = append(ents, batchEntry{key: k, val: v})
		case pebble.InternalKeyKindDelete:
			ents = append(ents, batchEntry{key: k, del: true})
		default:
			return nil, errBatchKind
		}
	}
	slices.SortStableFunc(ents, func(a, c batchEntry) int { return bytes.Compare(a.key, c.key) })
	out := ents[:0]
	for i, e := range ents {
		if i+1 < len(ents) && bytes.Equal(ents[i+1].key, e.key) {
			continue // a later write of the key follows
		}
		out = append(out, e)
	}
	return out, nil
}

// ingestFileBytes is the size past which the merge starts a new sstable.
const ingestFileBytes = 64 << 20

// ingestSpan is the part of key that the keys of one ingested sstable
// share: its state table (prefixState, object, operator), or for other
// keys their kind. An sstable spanning from the epoch's other writes (its
// epoch record, positions, other views' state) to a table's spilled rows
// would overlap whatever the store holds in between and be ingested into
// L0, and compactions would then rewrite every row of the spill; a file
// per state table lets the rows of a new table, or of keys past its
// largest, go straight to the bottom level.
func ingestSpan(key []byte) []byte {
	if len(key) >= 7 && key[0] == prefixState {
		return key[:7]
	}
	return key[:min(len(key), 1)]
}

// CommitSpilled commits b together with the runs of spills (older than
// b's writes; among spills, each spill's runs in order) as one atomic
// Pebble ingestion. A batch holding writes other than sets and deletions
// (a range deletion) is committed the usual way instead, with the runs
// copied into it first.
func (s *Store) CommitSpilled(b *pebble.Batch, spills []*Spill) error {
	ents, err := sortedBatch(b)
	if errors.Is(err, errBatchKind) {
		return s.commitSpilledInBatch(b, spills)
	}
	if err != nil {
		return err
	}
	var srcs mergeHeap
	defer func() {
		for _, m := range srcs {
			if m.f != nil {
				m.f.Close()
			}
		}
	}()
	age := 0
	for _, sp := range spills {
		for _, path := range sp.runs {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			m := &mergeSource{age: age, f: f, r: bufio.NewReaderSize(f, 256<<10)}
			age++
			srcs = append(srcs, m)
			if err := m.next(); err != nil {
				return err
			}
		}
	}
	bm := &mergeSource{age: age, ents: ents}
	if err := bm.next(); err != nil {
		return err
	}
	srcs = append(srcs, bm)
	live := srcs[:0:0]
	for _, m := range srcs {
		if m.ok {
			live = append(live, m)
		}
	}
	h := live
	heap.Init(&h)

	fs := s.opts.FS // Pebble's view of the files (MemFS for the memory backend)
	wopts := s.opts.MakeWriterOptions(0, s.db.FormatMajorVersion().MaxTableFormat())
	var paths []string
	defer func() {
		for _, p := range paths {
			fs.Remove(p)
		}
	}()
	var w *sstable.Writer
	finish := func() error {
		if w == nil {
			return nil
		}
		err := w.Close()
		w = nil
		return err
	}
	var last []byte
	haveLast := false
	for h.Len() > 0 {
		m := h[0]
		if !haveLast || !bytes.Equal(m.key, last) {
			// The newest write of m.key (heap order puts it first).
			if w != nil && haveLast && !bytes.Equal(ingestSpan(m.key), ingestSpan(last)) {
				if err := finish(); err != nil {
					return err
				}
			}
			if w == nil {
				name := filepath.Join(s.dir, fmt.Sprintf("ingest-%d-%d.sst", os.Getpid(), spillSeq.Add(1)))
				f, err := fs.Create(name, "")
				if err != nil {
					return err
				}
				paths = append(paths, name)
				w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), wopts)
			}
			var err error
			if m.del {
				err = w.Delete(m.key)
			} else {
				err = w.Set(m.key, m.val)
			}
			if err != nil {
				w.Close()
				return err
			}
			last, haveLast = append(last[:0], m.key...), true
			if w.Raw().EstimatedSize() >= ingestFileBytes {
				if err := finish(); err != nil {
					return err
				}
			}
		}
		if err := m.next(); err != nil {
			return err
		}
		if m.ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	if err := finish(); err != nil {
		return err
	}
	if len(paths) == 0 {
		return nil
	}
	return s.db.Ingest(context.Background(), paths)
}

// commitSpilledInBatch copies the runs into a new batch, then b's writes
// after them, and commits it.
func (s *Store) commitSpilledInBatch(b *pebble.Batch, spills []*Spill) error {
	nb := s.db.NewBatch()
	defer nb.Close()
	for _, sp := range spills {
		for _, path := range sp.runs {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			m := &mergeSource{f: f, r: bufio.NewReaderSize(f, 256<<10)}
			for {
				if err := m.next(); err != nil {
					f.Close()
					return err
				}
				if !m.ok {
					break
				}
				if m.del {
					err = nb.Delete(m.key, nil)
				} else {
					err = nb.Set(m.key, m.val, nil)
				}
				if err != nil {
					f.Close()
					return err
				}
			}
			f.Close()
		}
	}
	if err := nb.Apply(b, nil); err != nil {
		return err
	}
	return nb.Commit(pebble.NoSync)
}
