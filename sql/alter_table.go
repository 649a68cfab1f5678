package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// ALTER TABLE and ALTER STREAM change an object's columns (schema
// evolution). Messages are JSON objects whose members map to columns by
// member key (catalog.Column.MemberKey), so history stays readable:
//
//   - ADD COLUMN gives the column a member key no message of a table
//     used yet (a dropped column's stays retired, RetiredKeys), and
//     records its default as Missing: rows written before it read that
//     value, as PostgreSQL's stored missing value. A default PostgreSQL
//     evaluates per existing row (random(), clock_timestamp(),
//     gen_random_uuid(), nextval) is refused; one it evaluates once
//     (constants, now()) is evaluated once, at the ALTER. A stream's new
//     column reads its producers' member of that name, and the default
//     where a message lacks it.
//   - DROP COLUMN is refused while a view reads the column (2BP01), and
//     a table's rows lose it; old messages keep the member, unread.
//   - RENAME COLUMN changes the name, not the member key: a table keeps
//     its history, and a stream keeps reading the member its producers
//     write under the old name.
//   - SET/DROP DEFAULT and SET/DROP NOT NULL change the catalog only.
//
// sql binds the actions onto a copy of the descriptor (columnChange);
// meta applies it (meta.DDL.CommitColumnChange, meta/table_alter.go):
// the catalog write and, when the rows change shape, the rewrite of the
// table's state in the same batch with every dataflow restarted.

// alterTable runs ALTER TABLE / ALTER STREAM ... column actions.
func (s *session) alterTable(ctx context.Context, n *front.AlterTable) (string, error) {
	e := s.e
	tag := "ALTER TABLE"
	if n.Stream {
		tag = "ALTER STREAM"
	}
	if n.Schema != "" && n.Schema != "public" {
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", n.Schema, n.Table)
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	old, ok := e.lookup(n.Table)
	if !ok {
		if n.IfExists {
			pgwire.Notice(ctx, fmt.Sprintf("relation %q does not exist, skipping", n.Table), "")
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", n.Table)
	}
	switch {
	case old.Envelope() != "":
		return "", envelopeWriteError(old)
	case n.Stream && old.Kind != catalog.KindStream:
		return "", sqlerr.New(sqlerr.WrongObjectType, "%q is not a stream", n.Table).
			WithHint("Use ALTER %s.", upperKind(old))
	case old.Kind != catalog.KindStream && old.Kind != catalog.KindTable:
		return "", sqlerr.New(sqlerr.WrongObjectType, "%q is not a table", n.Table).
			WithHint("Use ALTER %s.", upperKind(old))
	case old.Mirror != "" && !s.mirrorWriter:
		return "", mirrorWriteError(old)
	}
	if len(n.Actions) == 1 && n.Actions[0].Kind == front.AlterAddIdentity {
		if err := e.addIdentity(ctx, old, n.Actions[0]); err != nil {
			return "", err
		}
		return tag, nil
	}
	a := &columnChange{s: s, ColumnChange: meta.NewColumnChange(old)}
	for _, act := range n.Actions {
		if err := a.apply(ctx, act); err != nil {
			return "", err
		}
	}
	if !a.changed {
		return tag, nil
	}
	if err := a.checkNotNull(ctx); err != nil {
		return "", err
	}
	if err := a.bindTypeChecks(); err != nil {
		return "", err
	}
	if err := exec.CheckStreamFormat(a.New); err != nil {
		return "", err
	}
	if err := e.dropChildKeys(ctx, a.foreignKeys); err != nil {
		return "", err
	}
	if len(a.Shorten) > 0 {
		// CommitColumnChange needs the table's committed state to hold
		// its whole changelog: the state applies it, and a checkpoint
		// commits it.
		if err := e.waitTableCurrent(ctx, old, "ALTER TABLE"); err != nil {
			return "", err
		}
		if err := e.ddlCheckpoint(ctx); err != nil {
			return "", err
		}
	}
	// The views first: a view that keeps a column's old name while the
	// table does not rename it still binds.
	if err := e.keepViewColumnNames(old, a.viewNames); err != nil {
		return "", err
	}
	if err := e.ddl.CommitColumnChange(&a.ColumnChange); err != nil {
		if se, ok := err.(*sqlerr.Error); ok {
			// A value that does not convert (ALTER COLUMN ... TYPE).
			return "", se
		}
		return "", sqlerr.New(sqlerr.InternalError, "altering %s %s failed: %v", relKindWord(old), old.Name, err)
	}
	e.log.Info("altered columns", "kind", old.Kind, "name", old.Name)
	return tag, e.ddlCheckpoint(ctx)
}

// columnChange is an ALTER being bound onto a copy of the descriptor
// (meta.ColumnChange: New), which meta then applies.
type columnChange struct {
	meta.ColumnChange
	s *session
	// notNull: columns (by name) whose rows must hold no NULL.
	notNull []string
	changed bool
	// foreignKeys are the other tables' foreign keys a DROP COLUMN
	// drops (CASCADE).
	foreignKeys []childKey
	// viewNames are the plain views reading a column a RENAME COLUMN
	// renames, with the names their text keeps using
	// (view_column_names.go).
	viewNames []*catalog.Descriptor
}

func (a *columnChange) column(name string) int {
	return slices.IndexFunc(a.New.Columns, func(c catalog.Column) bool { return c.Name == name })
}

func (a *columnChange) isTable() bool { return a.New.Kind == catalog.KindTable }

func (a *columnChange) noColumn(name string) error {
	return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, a.New.Name)
}

func (a *columnChange) onlyTables(what string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s on a stream is not supported", what).
		WithHint("A stream's columns read its producers' messages; defaults and NOT NULL belong to tables (ADD COLUMN ... DEFAULT gives a stream column the value of messages without it).")
}

func (a *columnChange) apply(ctx context.Context, act front.AlterAction) error {
	switch act.Kind {
	case front.AlterAddColumn:
		return a.addColumn(ctx, act)
	case front.AlterAddPrimaryKey:
		return a.addPrimaryKey(ctx, act)
	case front.AlterAddIdentity:
		return sqlerr.New(sqlerr.FeatureNotSupported, "ALTER COLUMN ... ADD GENERATED ... AS IDENTITY must be the only action of its ALTER TABLE").
			WithHint("Run it as an ALTER TABLE statement of its own.")
	case front.AlterDropColumn:
		return a.dropColumn(ctx, act)
	case front.AlterRenameColumn:
		return a.renameColumn(act)
	case front.AlterColumnType:
		if a.column(act.Column) < 0 {
			return a.noColumn(act.Column)
		}
		if ok, err := a.changeStringType(act); ok || err != nil {
			return err
		}
		return a.alterColumnType(act)
	}
	i := a.column(act.Column)
	if i < 0 {
		return a.noColumn(act.Column)
	}
	c := &a.New.Columns[i]
	switch act.Kind {
	case front.AlterSetDefault:
		if !a.isTable() {
			return a.onlyTables("SET DEFAULT")
		}
		if c.Identity != "" {
			return identityColumnError(a.New, c.Name)
		}
		typ, err := a.columnType(i)
		if err != nil {
			return err
		}
		stored := storedDefault(act.Default, c.Type)
		if stored != "" {
			if _, err := a.s.bindDefault(stored, typ); err != nil {
				return err
			}
		}
		c.Default = stored
	case front.AlterDropDefault:
		if !a.isTable() {
			return a.onlyTables("DROP DEFAULT")
		}
		if c.Identity != "" {
			return identityColumnError(a.New, c.Name)
		}
		c.Default = ""
	case front.AlterSetNotNull:
		if !a.isTable() {
			return a.onlyTables("SET NOT NULL")
		}
		if !c.NotNull {
			c.NotNull = true
			a.notNull = append(a.notNull, c.Name)
		}
	case front.AlterDropNotNull:
		if !a.isTable() {
			return a.onlyTables("DROP NOT NULL")
		}
		if slices.Contains(a.New.PrimaryKey, c.Name) {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "column %q is in a primary key", c.Name)
		}
		if c.Identity != "" {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "column %q of relation %q is an identity column", c.Name, a.New.Name)
		}
		c.NotNull = false
	}
	a.changed = true
	return nil
}

// changeStringType applies ALTER COLUMN ... TYPE from character varying
// (with or without a length) to another varchar or to text, as Django's
// migrations do when a max_length grows (or, unapplied, shrinks), on a
// table. The table's dataflows restart as for a rewrite: they decode its
// changelog with the column's type. Stored values fit a longer type
// unchanged. A lower or new length limit is checked on every row as the
// state is rewritten (22001 for a longer value, as PostgreSQL's
// assignment cast), and needs the table's state to hold its whole
// changelog then (meta.DDL.CommitColumnChange): a message past it could hold a
// longer value that the restarted dataflow could not decode. It reports
// false for any other change of type.
func (a *columnChange) changeStringType(act front.AlterAction) (bool, error) {
	if act.Using != "" || !a.isTable() {
		return false, nil
	}
	i := a.column(act.Column)
	c := &a.New.Columns[i]
	ot, om, err := types.ParseWithModifier(c.Type)
	if err != nil || !ot.IsString() || om.Fixed {
		return false, nil
	}
	nt, nm, err := types.ParseWithModifier(act.TypeName)
	if err != nil || !nt.IsString() || nm.Fixed {
		return false, nil
	}
	name := types.TypeName(nt, nm)
	if name == c.Type {
		return true, nil
	}
	readers, err := a.s.e.columnReaders(a.Old, c.MemberKey())
	if err != nil {
		return true, err
	}
	if len(readers) > 0 {
		err := sqlerr.New(sqlerr.FeatureNotSupported, "cannot alter type of a column used by a view or rule")
		err.Detail = fmt.Sprintf("%s %s depends on column %q", relKindWord(readers[0]), readers[0].Name, c.Name)
		return true, err.WithHint("Drop the view, alter the column, then create the view again.")
	}
	a.ChangeLength(i, name, om, nm)
	a.changed = true
	return true, nil
}

func identityColumnError(d *catalog.Descriptor, col string) error {
	return sqlerr.New(sqlerr.SyntaxError, "column %q of relation %q is an identity column", col, d.Name).
		WithHint("Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead.")
}

func (a *columnChange) columnType(i int) (types.Column, error) {
	c := a.New.Columns[i]
	t, mod, err := types.ParseWithModifier(c.Type)
	if err != nil {
		return types.Column{}, err
	}
	return types.Column{Name: c.Name, Type: t, Mod: mod}, nil
}

// perRowFuncs are the functions PostgreSQL evaluates once per existing row
// in ADD COLUMN's default (volatile ones); now() and its synonyms are
// stable there, evaluated once.
var perRowFuncs = map[string]bool{"random": true, "clock_timestamp": true, "gen_random_uuid": true,
	"timeofday": true, "nextval": true, "setval": true}

func (a *columnChange) addColumn(ctx context.Context, act front.AlterAction) error {
	def := act.Def
	if a.column(def.Name) >= 0 {
		if act.IfNotExists {
			pgwire.Notice(ctx, fmt.Sprintf("column %q of relation %q already exists, skipping", def.Name, a.New.Name), "")
			return nil
		}
		return sqlerr.New(sqlerr.DuplicateColumn, "column %q of relation %q already exists", def.Name, a.New.Name)
	}
	switch {
	case def.PrimaryKey:
		return sqlerr.New(sqlerr.FeatureNotSupported, "ADD COLUMN ... PRIMARY KEY is not supported").
			WithHint("A table's primary key is fixed when it is created.")
	case def.Serial || def.Identity != "":
		return sqlerr.New(sqlerr.FeatureNotSupported, "ADD COLUMN of a serial or identity column is not supported").
			WithHint("Add an integer column, fill it with UPDATE, then SET DEFAULT nextval('a sequence').")
	case !a.isTable() && def.NotNull:
		return a.onlyTables("NOT NULL")
	}
	_, mod, err := types.ParseWithModifier(def.TypeName)
	if err != nil {
		return sqlerr.New(sqlerr.InvalidParameterValue, "column %q: %v", def.Name, err)
	}
	typ := types.Column{Name: def.Name, Type: def.Type, Mod: mod}
	col := catalog.Column{Name: def.Name, Type: types.TypeName(def.Type, mod), NotNull: def.NotNull}
	fill := types.Null
	if def.Default != nil {
		stored := storedDefault(def.DefaultText, def.TypeName)
		if stored != "" {
			bound, err := a.s.bindDefault(stored, typ)
			if err != nil {
				return err
			}
			var perRow string
			expr.Visit(bound, func(x expr.Expr) {
				if f, ok := x.(*expr.Func); ok && perRow == "" && perRowFuncs[f.Name] {
					perRow = f.Name
				}
			})
			if perRow != "" {
				return sqlerr.New(sqlerr.FeatureNotSupported, "ADD COLUMN with a default that calls %s() is not supported: it would differ for each existing row", perRow).
					WithHint("Add the column without a default, UPDATE the existing rows, then ALTER COLUMN ... SET DEFAULT.")
			}
			v, err := expr.BindStatementTime(bound, time.Now()).Eval(nil)
			if err != nil {
				return defaultError(typ, err)
			}
			if a.isTable() {
				col.Default = stored
			}
			fill = v
		}
	}
	if !fill.IsNull() {
		if a.isTable() && (def.Type == types.JSON || def.Type == types.JSONB) {
			// A table's changelog leaves a NULL json member out, which
			// would read as the default.
			return sqlerr.New(sqlerr.FeatureNotSupported, "ADD COLUMN of type %s with a DEFAULT is not supported on a table", def.TypeName).
				WithHint("Add the column without a default, then UPDATE the existing rows and ALTER COLUMN ... SET DEFAULT.")
		}
		text := types.FormatText(fill, def.Type)
		col.Missing = &text
	}
	if err := a.AddColumn(col, fill); err != nil {
		return err
	}
	if def.NotNull {
		a.notNull = append(a.notNull, def.Name)
	}
	a.changed = true
	return nil
}

func (a *columnChange) dropColumn(ctx context.Context, act front.AlterAction) error {
	i := a.column(act.Column)
	if i < 0 {
		if act.IfExists {
			pgwire.Notice(ctx, fmt.Sprintf("column %q of relation %q does not exist, skipping", act.Column, a.New.Name), "")
			return nil
		}
		return a.noColumn(act.Column)
	}
	c := a.New.Columns[i]
	if slices.Contains(a.New.PrimaryKey, c.Name) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "dropping column %q of the primary key of %q is not supported", c.Name, a.New.Name).
			WithHint("A table's primary key is fixed when it is created.")
	}
	if a.New.Watermark != "" && strings.HasPrefix(a.New.Watermark, c.Name+" AS ") {
		return sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop column %q of stream %q: its WATERMARK is on it", c.Name, a.New.Name)
	}
	if len(a.New.Columns) == 1 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "dropping the only column of %q is not supported", a.New.Name)
	}
	if c.Identity != "" || slices.ContainsFunc(a.s.e.ownedSequences(a.Old), func(q *catalog.Descriptor) bool { return q.Sequence.OwnedByColumn == c.Name }) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "dropping column %q, which owns a sequence, is not supported", c.Name)
	}
	readers, err := a.s.e.columnReaders(a.Old, c.MemberKey())
	if err != nil {
		return err
	}
	if len(readers) > 0 {
		var detail []string
		for _, r := range readers {
			detail = append(detail, fmt.Sprintf("%s %s depends on column %s of %s %s", relKindWord(r), r.Name, c.Name, relKindWord(a.New), a.New.Name))
		}
		if act.Cascade {
			err := sqlerr.New(sqlerr.FeatureNotSupported, "DROP COLUMN ... CASCADE would drop %s %s, which is not supported", relKindWord(readers[0]), readers[0].Name).
				WithHint("Drop the dependent objects first.")
			err.Detail = strings.Join(detail, "\n")
			return err
		}
		err := sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop column %s of %s %s because other objects depend on it", c.Name, relKindWord(a.New), a.New.Name).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
		err.Detail = strings.Join(detail, "\n")
		return err
	}
	if err := a.dropColumnDependents(ctx, c.Name, act.Cascade); err != nil {
		return err
	}
	a.DropColumn(i)
	a.notNull = slices.DeleteFunc(a.notNull, func(n string) bool { return n == c.Name })
	a.changed = true
	return nil
}

func (a *columnChange) renameColumn(act front.AlterAction) error {
	i := a.column(act.Column)
	if i < 0 {
		return a.noColumn(act.Column)
	}
	if act.NewName == act.Column {
		return nil
	}
	if a.column(act.NewName) >= 0 {
		return sqlerr.New(sqlerr.DuplicateColumn, "column %q of relation %q already exists", act.NewName, a.New.Name)
	}
	c := &a.New.Columns[i]
	if a.New.Watermark != "" && strings.HasPrefix(a.New.Watermark, c.Name+" AS ") {
		return sqlerr.New(sqlerr.FeatureNotSupported, "renaming column %q of stream %q is not supported: its WATERMARK is on it", c.Name, a.New.Name)
	}
	readers, err := a.s.e.columnReaders(a.Old, c.MemberKey())
	if err != nil {
		return err
	}
	for _, dep := range readers {
		if dep.Kind == catalog.KindPlainView && a.isTable() {
			a.viewNames = append(a.viewNames, keepQueryColumnName(dep, a.Old.ID, c.MemberKey(), c.Name, act.NewName))
			continue
		}
		if dep.Kind == catalog.KindPlainView || dep.Kind == catalog.KindUnpopulatedView {
			// A plain view is its query's text, bound where it is used
			// (a stream's WATERMARK and generated columns are bound by
			// name with it); an unpopulated one's is bound at its REFRESH.
			return sqlerr.New(sqlerr.FeatureNotSupported, "renaming column %q of %q is not supported while %s %s reads it", c.Name, a.New.Name, relKindWord(dep), dep.Name).
				WithHint("Drop %s %s, rename the column, then create it again.", relKindWord(dep), dep.Name)
		}
	}
	renameRefs := func(text, from, to string) (string, error) {
		out, _, err := front.RenameColumnRefs(text, from, to)
		return out, err
	}
	var owned, referencing []*catalog.Descriptor
	if a.isTable() {
		owned, referencing = a.s.e.ownedSequences(a.Old), a.s.e.referencingTables(a.New.Name)
	}
	if err := a.RenameColumn(i, act.NewName, renameRefs, owned, referencing); err != nil {
		return err
	}
	for j, k := range a.notNull {
		if k == act.Column {
			a.notNull[j] = act.NewName
		}
	}
	a.changed = true
	return nil
}

// columnReaders returns the views that read the column of table or
// stream t with member key key: materialized views whose plan reads it,
// plain views whose query, bound now, reads it for the view's columns
// (a * was expanded to the columns t had at CREATE VIEW, so columns
// added since are not read), and any unpopulated view over t (its query
// is bound at its REFRESH). A view over a view over t reads t through
// the view under it, which is checked itself.
func (e *Engine) columnReaders(t *catalog.Descriptor, key string) ([]*catalog.Descriptor, error) {
	var out []*catalog.Descriptor
	for _, v := range e.dependents(t.Name) {
		if !slices.Contains(v.DependsOn, t.Name) {
			continue
		}
		var root plan.Node
		switch v.Kind {
		case catalog.KindView:
			var err error
			if root, err = e.viewPlan(v); err != nil {
				return nil, err
			}
		case catalog.KindPlainView:
			var err error
			if root, err = binder.BindPlainView(bindCatalog{e}, v); err != nil {
				// A view that no longer binds counts as reading every
				// column: nothing about it can be checked.
				out = append(out, v)
				continue
			}
		default:
			out = append(out, v)
			continue
		}
		// A view that names t only where it reads no rows (a LIMIT of
		// zero rows, emptyZeroLimits) has no scan of it: its query may
		// name any column, so it counts as reading each.
		reads, scanned := false, false
		var mark func(n plan.Node, need []bool)
		mark = func(n plan.Node, need []bool) {
			s, ok := n.(*plan.Scan)
			if !ok {
				for i, in := range plan.InputsRead(n, need) {
					mark(n.Children()[i], in)
				}
				return
			}
			if s.Object.ID != t.ID {
				return
			}
			scanned = true
			for i, c := range s.Cols {
				k := c.Name
				if s.Keys != nil {
					k = s.Keys[i]
				}
				used := i < len(need) && need[i]
				if w := s.Watermark; w != nil && w.Col == i {
					used = true
				}
				if used && k == key {
					reads = true
				}
			}
		}
		mark(root, plan.AllColumns(len(root.Schema())))
		if reads || !scanned {
			out = append(out, v)
		}
	}
	return out, nil
}
