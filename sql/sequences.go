package sql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/storage"
)

// Sequences (CREATE SEQUENCE, serial and identity columns).
//
// A sequence's definition is a catalog object; its values are not. They
// are reserved durably in blocks, as PostgreSQL logs values ahead: before
// nextval hands out a value not covered by the last reservation, the
// sequence publishes a record to the JetStream stream sequenceStream
// (one subject per sequence, newest record kept) saying where it resumes
// after a crash, the first value past the new block, and waits until
// JetStream holds it. A crash loses at most the rest of a block; no value
// is handed out twice. The records live in JetStream, not in Pebble,
// because Pebble is restored from a checkpoint after a crash and by
// ROLLBACK TO: a sequence keeps counting across both. A sequence brought
// back by ROLLBACK TO (dropped after the savepoint) resumes where it was
// when dropped, so even then no value repeats; setval and ALTER SEQUENCE
// RESTART are the only ways to go back, as in PostgreSQL.

// sequenceStream is the JetStream stream of sequences' records.
const sequenceStream = "streamdb-sequences"

// sequenceSubjectPrefix is where each sequence's records go, by its key:
// under tables' subjects, which producers may not publish to.
const sequenceSubjectPrefix = broker.TableSubjectPrefix + "_sequences."

// minSequenceBlock is the fewest values one reservation covers (a
// sequence's CACHE, when larger, sets it): PostgreSQL logs 32 ahead. A
// sequence that needs another reservation within reserveWindow of the
// last doubles its block, up to maxSequenceBlock, so that a bulk load
// into a serial column waits for a durable write every few thousand
// rows, not every 32; a crash can then lose up to that many values, a
// clean shutdown none (flushSequences).
const (
	minSequenceBlock = 32
	maxSequenceBlock = 4096
	reserveWindow    = time.Second
)

// sequences holds the in-memory state of every sequence used since the
// server started, by key. mu is a leaf lock; a sequence's own lock is
// taken after it is released, and held while its record is published.
type sequences struct {
	mu    sync.Mutex
	ready bool
	byKey map[string]*seqState
}

// seqState is where a sequence is: next is the value nextval hands out
// next (exhausted: none is left), avail how many values from next on the
// newest durable record covers.
type seqState struct {
	mu        sync.Mutex
	loaded    bool
	next      int64
	exhausted bool
	avail     uint64
	// last is the value handed out (or set) last, when called.
	last   int64
	called bool
	// block is the size of the last reservation, made at reserved.
	block    uint64
	reserved time.Time
}

// seqRecord is a sequence's durable record: after a restart it resumes
// at Next, or is exhausted.
type seqRecord struct {
	Next      int64 `json:"next"`
	Exhausted bool  `json:"exhausted,omitempty"`
}

func (e *Engine) seqState(ctx context.Context, d *catalog.Descriptor) (*seqState, error) {
	e.seqs.mu.Lock()
	if !e.seqs.ready {
		if err := e.broker.EnsureRecordStream(ctx, sequenceStream, sequenceSubjectPrefix+">"); err != nil {
			e.seqs.mu.Unlock()
			return nil, sqlerr.New(sqlerr.InternalError, "sequence %s: %v", d.Name, err)
		}
		e.seqs.ready = true
	}
	if e.seqs.byKey == nil {
		e.seqs.byKey = map[string]*seqState{}
	}
	st := e.seqs.byKey[d.Sequence.Key]
	if st == nil {
		st = &seqState{}
		e.seqs.byKey[d.Sequence.Key] = st
	}
	e.seqs.mu.Unlock()
	return st, nil
}

// load reads the sequence's record once. The caller holds st.mu.
func (e *Engine) loadSeq(ctx context.Context, d *catalog.Descriptor, st *seqState) error {
	if st.loaded {
		return nil
	}
	data, found, err := e.broker.LastRecord(ctx, sequenceStream, sequenceSubjectPrefix+d.Sequence.Key)
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "sequence %s: %v", d.Name, err)
	}
	st.next, st.exhausted = d.Sequence.Start, false
	if found {
		var rec seqRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return sqlerr.New(sqlerr.DataCorrupted, "sequence %s: its record %q does not decode: %v", d.Name, data, err)
		}
		st.next, st.exhausted = rec.Next, rec.Exhausted
		st.called = rec.Exhausted || rec.Next != d.Sequence.Start
		st.last = rec.Next - d.Sequence.Increment
		if rec.Exhausted {
			st.last = d.Sequence.Max
			if d.Sequence.Increment < 0 {
				st.last = d.Sequence.Min
			}
		}
	}
	st.avail = 0
	st.loaded = true
	return nil
}

// putSeq publishes rec for the sequence. The caller holds st.mu.
func (e *Engine) putSeq(ctx context.Context, d *catalog.Descriptor, rec seqRecord) error {
	data, _ := json.Marshal(rec)
	if err := e.broker.PutRecord(ctx, sequenceSubjectPrefix+d.Sequence.Key, data); err != nil {
		return sqlerr.New(sqlerr.InternalError, "sequence %s: reserving values: %v", d.Name, err)
	}
	return nil
}

// remaining is how many values of the sequence there are from v (within
// its bounds) on, up to its last value, v included.
func remaining(q *catalog.Sequence, v int64) uint64 {
	if q.Increment > 0 {
		return (uint64(q.Max)-uint64(v))/uint64(q.Increment) + 1
	}
	return (uint64(v)-uint64(q.Min))/(uint64(-(q.Increment+1))+1) + 1
}

// nextval hands out the sequence's next value.
func (e *Engine) nextval(ctx context.Context, d *catalog.Descriptor) (int64, error) {
	q := d.Sequence
	st, err := e.seqState(ctx, d)
	if err != nil {
		return 0, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := e.loadSeq(ctx, d, st); err != nil {
		return 0, err
	}
	if !st.exhausted && (st.next < q.Min || st.next > q.Max) {
		// ALTER SEQUENCE moved a bound past where the sequence is.
		st.exhausted = q.Increment > 0 && st.next > q.Max || q.Increment < 0 && st.next < q.Min
		if !st.exhausted {
			st.next, st.avail = q.Min, 0
			if q.Increment < 0 {
				st.next = q.Max
			}
		}
	}
	if st.exhausted {
		if !q.Cycle {
			if q.Increment > 0 {
				return 0, sqlerr.New(sqlerr.SequenceGeneratorLimitExceeded, "nextval: reached maximum value of sequence \"%s\" (%d)", d.Name, q.Max)
			}
			return 0, sqlerr.New(sqlerr.SequenceGeneratorLimitExceeded, "nextval: reached minimum value of sequence \"%s\" (%d)", d.Name, q.Min)
		}
		st.next, st.exhausted, st.avail = q.Min, false, 0
		if q.Increment < 0 {
			st.next = q.Max
		}
	}
	if st.avail == 0 {
		block := uint64(max(q.Cache, minSequenceBlock))
		if now := time.Now(); now.Sub(st.reserved) < reserveWindow {
			block = max(block, min(2*st.block, maxSequenceBlock))
		}
		rec := seqRecord{Exhausted: true}
		n := remaining(q, st.next)
		if n > block {
			rec = seqRecord{Next: st.next + q.Increment*int64(block)}
			n = block
		}
		if err := e.putSeq(ctx, d, rec); err != nil {
			return 0, err
		}
		st.avail, st.block, st.reserved = n, block, time.Now()
	}
	v := st.next
	st.avail--
	st.last, st.called = v, true
	if remaining(q, v) == 1 {
		st.exhausted = true
	} else {
		st.next = v + q.Increment
	}
	return v, nil
}

// setval moves the sequence to v: nextval answers v next when called is
// false, the value after v when it is true.
func (e *Engine) setval(ctx context.Context, d *catalog.Descriptor, v int64, called bool) error {
	q := d.Sequence
	if v < q.Min || v > q.Max {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "setval: value %d is out of bounds for sequence \"%s\" (%d..%d)", v, d.Name, q.Min, q.Max)
	}
	st, err := e.seqState(ctx, d)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := seqRecord{Next: v}
	if called {
		if remaining(q, v) == 1 {
			rec = seqRecord{Exhausted: true}
		} else {
			rec.Next = v + q.Increment
		}
	}
	if err := e.putSeq(ctx, d, rec); err != nil {
		return err
	}
	st.loaded, st.next, st.exhausted, st.avail = true, rec.Next, rec.Exhausted, 0
	st.last, st.called = v, called
	return nil
}

// lastValue is the value last handed out (pg_sequences.last_value), or
// false when none was since the sequence was created or set.
func (e *Engine) lastValue(ctx context.Context, d *catalog.Descriptor) (int64, bool, error) {
	st, err := e.seqState(ctx, d)
	if err != nil {
		return 0, false, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := e.loadSeq(ctx, d, st); err != nil {
		return 0, false, err
	}
	return st.last, st.called, nil
}

// sequenceDef checks sequence options as PostgreSQL does and gives the
// definition they make. typ is the type of an identity or serial column
// (the default type otherwise bigint).
func sequenceDef(o *front.SequenceOptions, typ string) (*catalog.Sequence, error) {
	q := &catalog.Sequence{Type: "bigint", Increment: 1, Cache: 1}
	if typ != "" {
		q.Type = typ
	}
	if o.As != "" {
		q.Type = o.As
	}
	if o.Increment != nil {
		q.Increment = *o.Increment
	}
	_, hi := typeBounds(q.Type)
	q.Min, q.Max = 1, hi
	if q.Increment < 0 {
		q.Min, q.Max = -hi-1, -1
	}
	q.Start = math.MinInt64 // the bound nextval starts from, once the bounds are known
	if err := applySequenceOptions(q, o); err != nil {
		return nil, err
	}
	var key [12]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, sqlerr.New(sqlerr.InternalError, "sequence key: %v", err)
	}
	q.Key = hex.EncodeToString(key[:])
	return q, nil
}

// typeBounds are the smallest and largest values of a sequence type.
func typeBounds(typ string) (lo, hi int64) {
	switch typ {
	case "smallint":
		return math.MinInt16, math.MaxInt16
	case "integer":
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// applySequenceOptions applies the options of CREATE or ALTER SEQUENCE
// to q (a new sequence's defaults, or an existing definition) and checks
// the result. A Start of math.MinInt64 is "not set": the sequence starts
// at its lower bound, or its upper one when it counts down.
func applySequenceOptions(q *catalog.Sequence, o *front.SequenceOptions) error {
	oldLo, oldHi := typeBounds(q.Type)
	if o.As != "" && o.As != q.Type {
		// Bounds that were the old type's defaults follow the type.
		lo, hi := typeBounds(o.As)
		if q.Max == oldHi {
			q.Max = hi
		}
		if q.Min == oldLo {
			q.Min = lo
		}
		q.Type = o.As
	}
	lo, hi := typeBounds(q.Type)
	if o.Increment != nil {
		q.Increment = *o.Increment
	}
	if q.Increment == 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "INCREMENT must not be zero")
	}
	switch {
	case o.MinValue != nil:
		q.Min = *o.MinValue
	case o.NoMinValue && q.Increment > 0:
		q.Min = 1
	case o.NoMinValue:
		q.Min = lo
	}
	switch {
	case o.MaxValue != nil:
		q.Max = *o.MaxValue
	case o.NoMaxValue && q.Increment > 0:
		q.Max = hi
	case o.NoMaxValue:
		q.Max = -1
	}
	if q.Max < lo || q.Max > hi {
		return sqlerr.New(sqlerr.InvalidParameterValue, "MAXVALUE (%d) is out of range for sequence data type %s", q.Max, q.Type)
	}
	if q.Min < lo || q.Min > hi {
		return sqlerr.New(sqlerr.InvalidParameterValue, "MINVALUE (%d) is out of range for sequence data type %s", q.Min, q.Type)
	}
	if q.Min >= q.Max {
		return sqlerr.New(sqlerr.InvalidParameterValue, "MINVALUE (%d) must be less than MAXVALUE (%d)", q.Min, q.Max)
	}
	if o.Start != nil {
		q.Start = *o.Start
	} else if q.Start == math.MinInt64 {
		q.Start = q.Min
		if q.Increment < 0 {
			q.Start = q.Max
		}
	}
	if q.Start < q.Min {
		return sqlerr.New(sqlerr.InvalidParameterValue, "START value (%d) cannot be less than MINVALUE (%d)", q.Start, q.Min)
	}
	if q.Start > q.Max {
		return sqlerr.New(sqlerr.InvalidParameterValue, "START value (%d) cannot be greater than MAXVALUE (%d)", q.Start, q.Max)
	}
	if o.Cache != nil {
		q.Cache = *o.Cache
	}
	if q.Cache <= 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "CACHE (%d) must be greater than zero", q.Cache)
	}
	if o.Cycle != nil {
		q.Cycle = *o.Cycle
	}
	return nil
}

// createSequence runs CREATE SEQUENCE.
func (e *Engine) createSequence(ctx context.Context, n *front.CreateSequence) (string, error) {
	const tag = "CREATE SEQUENCE"
	if n.Schema != "" && n.Schema != "public" {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "schema %q does not exist; streamdb has only the public schema", n.Schema)
	}
	if n.Options.Restart {
		return "", sqlerr.New(sqlerr.SyntaxError, "RESTART is allowed only in ALTER SEQUENCE")
	}
	q, err := sequenceDef(&n.Options, "")
	if err != nil {
		return "", err
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if e.relationExists(n.Name) {
		if n.IfNotExists {
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.DuplicateTable, "relation \"%s\" already exists", n.Name)
	}
	if err := e.setOwnedBy(q, n.Options.OwnedBy); err != nil {
		return "", err
	}
	d := &catalog.Descriptor{Name: n.Name, Kind: catalog.KindSequence, CreatedAt: time.Now().UTC(), Sequence: q}
	if err := e.persist(d); err != nil {
		return "", err
	}
	return tag, e.ddlCheckpoint(ctx)
}

func hasColumn(d *catalog.Descriptor, col string) bool {
	for _, c := range d.Columns {
		if c.Name == col {
			return true
		}
	}
	return false
}

// setOwnedBy applies OWNED BY table.column | NONE ("" changes nothing).
func (e *Engine) setOwnedBy(q *catalog.Sequence, owned string) error {
	switch owned {
	case "":
		return nil
	case "none":
		q.OwnedByTable, q.OwnedByColumn = 0, ""
		return nil
	}
	table, col, _ := strings.Cut(owned, ".")
	t, ok := e.lookup(table)
	if !ok {
		return sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", table)
	}
	if t.Kind != catalog.KindTable {
		return sqlerr.New(sqlerr.WrongObjectType, "sequence cannot be owned by relation \"%s\"", table).
			WithHint("A sequence can be owned by a table's column.")
	}
	if !hasColumn(t, col) {
		return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, table)
	}
	q.OwnedByTable, q.OwnedByColumn = t.ID, col
	return nil
}

// alterSequence runs ALTER SEQUENCE: new options (kept in the catalog),
// OWNED BY, and RESTART [WITH n] (a setval). The values a sequence
// reserved ahead are given up when its options change, so that the next
// reservation follows the new ones.
func (e *Engine) alterSequence(ctx context.Context, n *front.AlterSequence) (string, error) {
	const tag = "ALTER SEQUENCE"
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	d, ok := e.lookup(n.Name)
	if !ok {
		if n.IfExists {
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", n.Name)
	}
	if d.Kind != catalog.KindSequence {
		return "", sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a sequence", n.Name)
	}
	o := n.Options
	o.Restart, o.RestartWith = false, nil
	if o != (front.SequenceOptions{}) {
		q := *d.Sequence
		if err := applySequenceOptions(&q, &o); err != nil {
			return "", err
		}
		if err := e.setOwnedBy(&q, o.OwnedBy); err != nil {
			return "", err
		}
		next := *d
		next.Sequence = &q
		b := e.store.NewBatch()
		defer b.Close()
		if err := storage.PutDescriptor(b, &next); err != nil {
			return "", err
		}
		if err := e.store.Commit(b, true); err != nil {
			return "", err
		}
		e.catMu.Lock()
		if e.objs[d.Name] == d {
			e.objs[d.Name] = &next
		}
		e.catMu.Unlock()
		st, err := e.seqState(ctx, &next)
		if err != nil {
			return "", err
		}
		st.mu.Lock()
		err = e.loadSeq(ctx, &next, st)
		if err == nil && st.called {
			// The next value is the last one plus the new increment.
			v := st.last + q.Increment
			overflow := q.Increment > 0 && v < st.last || q.Increment < 0 && v > st.last
			st.next, st.exhausted = v, overflow || v < q.Min || v > q.Max
		}
		st.avail = 0
		st.mu.Unlock()
		if err != nil {
			return "", err
		}
		d = &next
	}
	if n.Options.Restart {
		q := d.Sequence
		v := q.Start
		if n.Options.RestartWith != nil {
			v = *n.Options.RestartWith
		}
		if v < q.Min {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "RESTART value (%d) cannot be less than MINVALUE (%d)", v, q.Min)
		}
		if v > q.Max {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "RESTART value (%d) cannot be greater than MAXVALUE (%d)", v, q.Max)
		}
		if err := e.setval(ctx, d, v, false); err != nil {
			return "", err
		}
	}
	return tag, e.ddlCheckpoint(ctx)
}

// sequenceByArg finds the sequence a nextval, currval or setval argument
// names: a name as text (folded to lower case unless quoted, as a text to
// regclass cast does) or an OID (what 'name'::regclass became).
func (e *Engine) sequenceByArg(arg any) (*catalog.Descriptor, error) {
	var d *catalog.Descriptor
	switch a := arg.(type) {
	case string:
		name := unquoteQualified(a)
		name = strings.TrimPrefix(name, "public.")
		var ok bool
		if d, ok = e.lookup(name); !ok {
			return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", a)
		}
	case int64:
		e.catMu.RLock()
		for _, o := range e.objs {
			if int64(firstUserOID)+int64(o.ID) == a {
				d = o
			}
		}
		e.catMu.RUnlock()
		if d == nil {
			return nil, sqlerr.New(sqlerr.UndefinedTable, "could not open relation with OID %d", a)
		}
	default:
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "a sequence is named by its name (text) or its regclass")
	}
	if d.Kind != catalog.KindSequence {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a sequence", d.Name)
	}
	return d, nil
}

// ownedSequences returns the sequences a table owns.
func (e *Engine) ownedSequences(table *catalog.Descriptor) []*catalog.Descriptor {
	var out []*catalog.Descriptor
	if table.Kind != catalog.KindTable {
		return nil
	}
	for _, d := range e.objects(catalog.KindSequence) {
		if d.Sequence.OwnedByTable == table.ID {
			out = append(out, d)
		}
	}
	return out
}

// sequenceUser returns the table column whose default or identity uses
// the sequence, if one does.
func (e *Engine) sequenceUser(seq *catalog.Descriptor) (table, column string, identity bool) {
	for _, d := range e.objects(catalog.KindTable) {
		for _, c := range d.Columns {
			if c.IdentitySequence == seq.Name {
				return d.Name, c.Name, true
			}
			if c.Default != "" && strings.Contains(c.Default, "nextval('"+seq.Name+"'") {
				return d.Name, c.Name, false
			}
		}
	}
	return "", "", false
}

// checkDropSequence refuses to drop a sequence a column uses.
func (e *Engine) checkDropSequence(d *catalog.Descriptor) error {
	table, col, identity := e.sequenceUser(d)
	switch {
	case table == "":
		return nil
	case identity:
		return sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop sequence %s because column %s of table %s requires it", d.Name, col, table).
			WithHint("You can drop table %s instead.", table)
	}
	return sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop sequence %s because other objects depend on it", d.Name).
		WithHint("default value for column %s of table %s depends on sequence %s; drop the table, or the column's default, first.", col, table, d.Name)
}

// seqSession is a session's memory of sequences: the value nextval (or
// setval) last gave each sequence in it (currval), by key, and the
// sequence nextval was last called on (lastval).
type seqSession struct {
	last    map[string]int64
	lastSeq *catalog.Descriptor
}

func (s *session) seqContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// callNextval is nextval(arg) in this session.
func (s *session) callNextval(arg any) (int64, error) {
	d, err := s.e.sequenceByArg(arg)
	if err != nil {
		return 0, err
	}
	ctx, cancel := s.seqContext()
	defer cancel()
	v, err := s.e.nextval(ctx, d)
	if err != nil {
		return 0, err
	}
	s.noteSeq(d, v)
	s.seqs.lastSeq = d
	return v, nil
}

func (s *session) noteSeq(d *catalog.Descriptor, v int64) {
	if s.seqs.last == nil {
		s.seqs.last = map[string]int64{}
	}
	s.seqs.last[d.Sequence.Key] = v
}

// callCurrval is currval(arg).
func (s *session) callCurrval(arg any) (int64, error) {
	d, err := s.e.sequenceByArg(arg)
	if err != nil {
		return 0, err
	}
	v, ok := s.seqs.last[d.Sequence.Key]
	if !ok {
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "currval of sequence \"%s\" is not yet defined in this session", d.Name)
	}
	return v, nil
}

// callLastval is lastval().
func (s *session) callLastval() (int64, error) {
	d := s.seqs.lastSeq
	if d == nil {
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	if cur, ok := s.e.lookup(d.Name); !ok || cur.Sequence == nil || cur.Sequence.Key != d.Sequence.Key {
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	return s.seqs.last[d.Sequence.Key], nil
}

// callSetval is setval(arg, v[, called]).
func (s *session) callSetval(arg any, v int64, called bool) (int64, error) {
	d, err := s.e.sequenceByArg(arg)
	if err != nil {
		return 0, err
	}
	ctx, cancel := s.seqContext()
	defer cancel()
	if err := s.e.setval(ctx, d, v, called); err != nil {
		return 0, err
	}
	if called {
		s.noteSeq(d, v)
	}
	return v, nil
}

// sequenceFuncNames are the functions of sequences; they are bound only
// where a session runs the statement.
var sequenceFuncNames = map[string]bool{"nextval": true, "currval": true, "setval": true, "lastval": true}

func seqFuncError(name string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s() is not allowed here", name).
		WithHint("Call %s() in a query, an INSERT or a column's DEFAULT; a materialized view cannot use it.", name)
}

// columnSequences makes the sequences of a new table's serial and
// identity columns, named <table>_<column>_seq as PostgreSQL names them
// (with a number added when that name is taken), and points the columns
// at them: a serial column's default becomes nextval of its sequence, an
// identity column records its sequence. They are persisted, owned by the
// table, once the table has its id. The caller holds ddlMu.
func (e *Engine) columnSequences(n *front.CreateSource, d *catalog.Descriptor) ([]*catalog.Descriptor, error) {
	var out []*catalog.Descriptor
	taken := map[string]bool{n.Name: true}
	for i, c := range n.Columns {
		if c.Identity != "" && c.Default != nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "both default and identity specified for column \"%s\" of table \"%s\"", c.Name, n.Name)
		}
		if c.Serial && c.Default != nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "multiple default values specified for column \"%s\" of table \"%s\"", c.Name, n.Name)
		}
		if c.Serial && c.Identity != "" {
			return nil, sqlerr.New(sqlerr.SyntaxError, "both default and identity specified for column \"%s\" of table \"%s\"", c.Name, n.Name)
		}
		if !c.Serial && c.Identity == "" {
			continue
		}
		typ := d.Columns[i].Type
		if typ != "smallint" && typ != "integer" && typ != "bigint" {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
		}
		opts := &front.SequenceOptions{}
		if c.IdentityOptions != nil {
			opts = c.IdentityOptions
		}
		if opts.OwnedBy != "" || opts.Restart {
			return nil, sqlerr.New(sqlerr.SyntaxError, "an identity column's sequence options cannot say OWNED BY or RESTART")
		}
		q, err := sequenceDef(opts, typ)
		if err != nil {
			return nil, err
		}
		q.OwnedByColumn = c.Name
		base := n.Name + "_" + c.Name + "_seq"
		name := base
		for k := 1; ; k++ {
			if _, exists := e.lookup(name); !exists && !taken[name] {
				break
			}
			name = fmt.Sprintf("%s%d", base, k)
		}
		taken[name] = true
		if c.Serial {
			d.Columns[i].Default = "nextval('" + name + "'::regclass)"
		} else {
			d.Columns[i].Identity, d.Columns[i].IdentitySequence = c.Identity, name
		}
		out = append(out, &catalog.Descriptor{Name: name, Kind: catalog.KindSequence, CreatedAt: time.Now().UTC(), Sequence: q})
	}
	return out, nil
}

// flushSequences records, for every sequence used since the start, where
// it is now, so that a clean restart goes on without the gap of the
// values reserved ahead. A nextval after it reserves again.
func (e *Engine) flushSequences(ctx context.Context) {
	e.seqs.mu.Lock()
	states := make(map[string]*seqState, len(e.seqs.byKey))
	for k, st := range e.seqs.byKey {
		states[k] = st
	}
	e.seqs.mu.Unlock()
	for key, st := range states {
		st.mu.Lock()
		if st.loaded && st.avail > 0 {
			data, _ := json.Marshal(seqRecord{Next: st.next, Exhausted: st.exhausted})
			if err := e.broker.PutRecord(ctx, sequenceSubjectPrefix+key, data); err != nil {
				e.log.Warn("recording a sequence's position at shutdown failed; it goes on after its reserved values", "key", key, "err", err)
			}
			st.avail = 0
		}
		st.mu.Unlock()
	}
}
