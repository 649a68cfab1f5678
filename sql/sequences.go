package sql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/sqlerr"
)

// Sequences (CREATE SEQUENCE, serial and identity columns): their
// definitions are catalog objects, made and changed here; their values
// are meta.Sequences', reserved durably outside the Pebble state so that
// a crash or ROLLBACK TO never hands a value out twice.

// lastValue is the value the sequence handed out last
// (pg_sequences.last_value), or false when none was since it was created
// or set.
func (e *Engine) lastValue(ctx context.Context, d *catalog.Descriptor) (int64, bool, error) {
	return e.seqs.Last(ctx, d)
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
	if err := e.ddl.CreateSequence(d); err != nil {
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
// OWNED BY, and RESTART [WITH n] (a setval), bound here and applied by
// meta.DDL.AlterSequence.
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
	alter := meta.SequenceAlter{Object: d, Restart: n.Options.Restart, RestartAt: n.Options.RestartWith}
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
		alter.Definition = &q
	}
	if err := e.ddl.AlterSequence(ctx, alter); err != nil {
		return "", err
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
		d = liveCatalog{e}.withOID(a)
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

// needOnSequence fails unless the session's user holds one of privs on
// the sequence d (an owner and a superuser hold them all): 42501 in
// PostgreSQL's words.
func (s *session) needOnSequence(d *catalog.Descriptor, privs ...string) error {
	if s.roleSuperuser() {
		return nil
	}
	for _, p := range privs {
		if s.has(d, p) {
			return nil
		}
	}
	// A serial sequence made before sequences had owners is the
	// bootstrap user's in the role store: its table's owner keeps the
	// use of it.
	if q := d.Sequence; q != nil && q.OwnedByTable != 0 && s.e.roles.Owner(d) == BootstrapUser {
		for _, t := range s.e.objects(catalog.KindTable) {
			if t.ID == q.OwnedByTable && s.e.roles.Owner(t) == s.user {
				return nil
			}
		}
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for sequence %s", d.Name)
}

// callNextval is nextval(arg) in this session: it needs USAGE or UPDATE
// on the sequence unless checked is false (an identity column's).
func (s *session) callNextval(arg any, checked bool) (int64, error) {
	d, err := s.e.sequenceByArg(arg)
	if err != nil {
		return 0, err
	}
	if checked {
		if err := s.needOnSequence(d, "USAGE", "UPDATE"); err != nil {
			return 0, err
		}
	}
	ctx, cancel := s.seqContext()
	defer cancel()
	v, err := s.e.seqs.Next(ctx, d)
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

// callCurrval is currval(arg); it needs USAGE or SELECT.
func (s *session) callCurrval(arg any) (int64, error) {
	d, err := s.e.sequenceByArg(arg)
	if err != nil {
		return 0, err
	}
	if err := s.needOnSequence(d, "USAGE", "SELECT"); err != nil {
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
	if err := s.needOnSequence(d, "USAGE", "SELECT"); err != nil {
		return 0, err
	}
	return s.seqs.last[d.Sequence.Key], nil
}

// callSetval is setval(arg, v[, called]); it needs UPDATE.
func (s *session) callSetval(arg any, v int64, called bool) (int64, error) {
	d, err := s.e.sequenceByArg(arg)
	if err != nil {
		return 0, err
	}
	if err := s.needOnSequence(d, "UPDATE"); err != nil {
		return 0, err
	}
	ctx, cancel := s.seqContext()
	defer cancel()
	if err := s.e.seqs.Set(ctx, d, v, called); err != nil {
		return 0, err
	}
	if called {
		s.noteSeq(d, v)
	}
	return v, nil
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
		name := catalog.ObjectName(n.Name, c.Name, "seq")
		for k := 1; ; k++ {
			if _, exists := e.lookup(name); !exists && !taken[name] {
				break
			}
			name = catalog.ObjectName(n.Name, c.Name, fmt.Sprintf("seq%d", k))
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
