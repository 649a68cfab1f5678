package sql

import (
	"context"
	"fmt"
	"strings"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// CREATE INDEX and DROP INDEX, bound here (names, columns, the objects
// they are on, the constraints that need an index) and applied by
// meta.DDL (meta/index_ddl.go says how an index is kept).

// maxIndexes bounds the indexes of one object (their state tables and
// OIDs are numbered within it).
const maxIndexes = 1000

// indexOwner returns the object that has an index named name.
func (e *Engine) indexOwner(name string) (*catalog.Descriptor, *catalog.Index, bool) {
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	for _, d := range e.objs {
		for i := range d.Indexes {
			if d.Indexes[i].Name == name {
				return d, &d.Indexes[i], true
			}
		}
	}
	return nil, nil, false
}

// relationNameTaken reports whether name names a relation PostgreSQL
// would count: an object, an index, or a primary key's index.
func (e *Engine) relationNameTaken(name string) bool {
	if _, ok := e.lookup(name); ok {
		return true
	}
	if _, _, ok := e.indexOwner(name); ok {
		return true
	}
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	for _, d := range e.objs {
		if len(d.PrimaryKey) > 0 && catalog.PrimaryKeyName(d.Name) == name {
			return true
		}
	}
	return false
}

// chooseIndexName is PostgreSQL's name for an index the statement does not
// name: table_col1_col2_idx, with a number after the label until it is
// free, cut to 63 bytes as PostgreSQL cuts it (catalog.ObjectName).
func (e *Engine) chooseIndexName(table string, cols []front.IndexColumn) string {
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	colPart := strings.Join(names, "_")
	name := catalog.ObjectName(table, colPart, "idx")
	for i := 1; e.relationNameTaken(name); i++ {
		name = catalog.ObjectName(table, colPart, fmt.Sprintf("idx%d", i))
	}
	return name
}

// createIndex runs CREATE INDEX.
func (e *Engine) createIndex(ctx context.Context, n *front.CreateIndex) (string, error) {
	const tag = "CREATE INDEX"
	for _, s := range []string{n.Schema, n.TableSchema} {
		if s != "" && s != "public" {
			return "", noSuchSchema(s)
		}
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	d, ok := e.lookup(n.Table)
	if !ok {
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", n.Table)
	}
	if d.Kind != catalog.KindTable && d.Kind != catalog.KindView && d.Kind != catalog.KindUnpopulatedView {
		return "", withDetail(sqlerr.New(sqlerr.WrongObjectType, "cannot create index on relation %q", d.Name).
			WithHint("Indexes are kept on tables and materialized views."),
			"This operation is not supported for %ss.", relKindWord(d))
	}
	cols, err := d.Schema()
	if err != nil {
		return "", err
	}
	for _, c := range n.Columns {
		if columnIndex(cols, c.Name) < 0 {
			return "", sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", c.Name)
		}
	}
	name := n.Name
	if name == "" {
		name = e.chooseIndexName(d.Name, n.Columns)
	}
	if e.relationNameTaken(name) {
		if n.IfNotExists {
			pgwire.Notice(ctx, fmt.Sprintf("relation %q already exists, skipping", name), "")
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name)
	}
	if len(d.Indexes) >= maxIndexes {
		return "", sqlerr.New(sqlerr.ProgramLimitExceeded, "%s %s has %d indexes, the most one relation can have", relKindWord(d), d.Name, maxIndexes).
			WithHint("DROP INDEX one you no longer use.")
	}
	ix := catalog.Index{Name: name, Unique: n.Unique}
	for _, c := range n.Columns {
		ix.Columns = append(ix.Columns, catalog.IndexColumn{Name: c.Name, Desc: c.Desc, NullsFirst: c.NullsFirst})
	}
	if d.Kind == catalog.KindTable {
		// The entries are built from the table's stored rows: they must
		// hold every write acknowledged before this statement.
		if err := e.waitTableCurrent(ctx, d, "CREATE INDEX"); err != nil {
			return "", err
		}
	}
	dup, err := e.ddl.CreateIndex(d, ix)
	if err != nil {
		return "", err
	}
	if dup != nil {
		names, vals := indexKeyText(&ix, cols, dup)
		return "", &sqlerr.Error{Code: sqlerr.UniqueViolation, Message: fmt.Sprintf("could not create unique index %q", name),
			Detail: fmt.Sprintf("Key (%s)=(%s) is duplicated.", names, vals)}
	}
	return tag, e.ddlCheckpoint(ctx)
}

// freeIndexSlot returns the lowest index sequence number d's indexes do
// not use, with its state table (meta.FreeIndexSlot).
func freeIndexSlot(d *catalog.Descriptor) (seq, table uint16) { return meta.FreeIndexSlot(d) }

// indexKeyText renders row's indexed columns as PostgreSQL's "Key (a,
// b)=(1, 2)" detail does.
func indexKeyText(ix *catalog.Index, cols []types.Column, row types.Row) (names, vals string) {
	var ns, vs []string
	for _, c := range ix.Columns {
		j := columnIndex(cols, c.Name)
		ns = append(ns, c.Name)
		vs = append(vs, types.FormatText(row[j], cols[j].Type))
	}
	return strings.Join(ns, ", "), strings.Join(vs, ", ")
}

// dropIndex runs DROP INDEX.
func (e *Engine) dropIndex(ctx context.Context, n *front.DropIndex) (string, error) {
	const tag = "DROP INDEX"
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	var targets []meta.IndexDrop
	for i, name := range n.Names {
		if s := n.Schemas[i]; s != "" && s != "public" {
			return "", noSuchSchema(s)
		}
		d, ix, ok := e.indexOwner(name)
		if !ok {
			if n.IfExists {
				pgwire.Notice(ctx, fmt.Sprintf("index %q does not exist, skipping", name), "")
				continue
			}
			if o, isObj := e.lookup(name); isObj {
				return "", sqlerr.New(sqlerr.WrongObjectType, "%q is not an index", name).
					WithHint("%s is a %s: use DROP %s.", name, relKindWord(o), upperKind(o))
			}
			if e.relationNameTaken(name) {
				return "", sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop index %s because constraint %s on its table requires it", name, name).
					WithHint("It is the index of a primary key, which streamdb does not drop.")
			}
			return "", sqlerr.New(sqlerr.UndefinedObject, "index %q does not exist", name)
		}
		if ix.Constraint {
			return "", sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop index %s because constraint %s on table %s requires it", name, name, d.Name).
				WithHint("You can drop constraint %s on table %s instead.", name, d.Name)
		}
		targets = append(targets, meta.IndexDrop{Object: d, Index: *ix})
	}
	if len(targets) == 0 {
		return tag, nil
	}
	if err := e.ddl.DropIndexes(targets); err != nil {
		return "", err
	}
	return tag, e.ddlCheckpoint(ctx)
}

// restartWith stops every dataflow, commits what write puts in a batch,
// reloads the catalog and starts the dataflows again
// (meta.DDL.RestartWith). The caller holds ddlMu.
func (e *Engine) restartWith(write func(b *meta.StateBatch) error) error {
	return e.ddl.RestartWith(write)
}

// explainQuery renders an ad-hoc query's plan as plan.Explain does, with
// the scan under a filter that reads through an index (exec.ChooseIndex,
// when the primary key does not pin the rows) shown as an index scan.
func (e *Engine) explainQuery(root plan.Node) string {
	e.markStoredKeys(root)
	return plan.ExplainAs(root, func(n plan.Node) plan.Node {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n
		}
		s, ok := f.Input.(*plan.Scan)
		if !ok {
			return n
		}
		if _, pinned := exec.PinnedKeys(f.Cond, s); pinned {
			return n
		}
		ir, ok := exec.ChooseIndex(f.Cond, s)
		if !ok {
			return n
		}
		return &explainLine{text: f.Describe(), cols: f.Schema(),
			children: []plan.Node{&explainLine{text: ir.Describe(string(s.Object.Kind) + " " + s.Object.Name), cols: s.Cols}}}
	})
}

// explainLine is a node that only EXPLAIN shows.
type explainLine struct {
	text     string
	cols     []types.Column
	children []plan.Node
}

func (l *explainLine) Schema() []types.Column { return l.cols }
func (l *explainLine) Children() []plan.Node  { return l.children }
func (l *explainLine) Describe() string       { return l.text }

// withCurrentIndexes returns root with each scan of a table or view whose
// indexes changed since root was bound (a prepared statement's plan)
// reading the object's current descriptor, so that no read goes through
// an index dropped since, or misses one created since.
func (e *Engine) withCurrentIndexes(root plan.Node) (plan.Node, error) {
	stale := false
	for _, s := range plan.Scans(root) {
		if cur, ok := e.lookup(s.Object.Name); ok && cur != s.Object && cur.ID == s.Object.ID && !sameIndexes(cur, s.Object) {
			stale = true
		}
	}
	if !stale {
		return root, nil
	}
	return binder.MapPlan(root, nil, func(s *plan.Scan) (plan.Node, error) {
		cur, ok := e.lookup(s.Object.Name)
		if !ok || cur.ID != s.Object.ID || sameIndexes(cur, s.Object) {
			return s, nil
		}
		out := *s
		out.Object = cur
		return &out, nil
	})
}

func sameIndexes(a, b *catalog.Descriptor) bool {
	if len(a.Indexes) != len(b.Indexes) {
		return false
	}
	for i := range a.Indexes {
		x, y := a.Indexes[i], b.Indexes[i]
		if x.Name != y.Name || x.Table != y.Table || len(x.Columns) != len(y.Columns) {
			return false
		}
		for j := range x.Columns {
			if x.Columns[j] != y.Columns[j] {
				return false
			}
		}
	}
	return true
}

// withCurrentIndexesOf returns d, or, if d's indexes changed since d was
// looked up (a prepared statement's descriptor), a copy of d with the
// current ones.
func (e *Engine) withCurrentIndexesOf(d *catalog.Descriptor) *catalog.Descriptor {
	cur, ok := e.lookup(d.Name)
	if !ok || cur == d || cur.ID != d.ID || sameIndexes(cur, d) {
		return d
	}
	out := *d
	out.Indexes = cur.Indexes
	return &out
}

// relationExists reports whether name names an object or an index (a
// CREATE of another relation under it fails with 42P07).
func (e *Engine) relationExists(name string) bool {
	if _, ok := e.lookup(name); ok {
		return true
	}
	_, _, ok := e.indexOwner(name)
	return ok
}
