package sql

import (
	"context"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// DDL around constraints: DROP TABLE of a referenced table, ALTER TABLE
// ... ADD CONSTRAINT (checked against the rows the table holds) and DROP
// CONSTRAINT.

// dropForeignKeysTo handles the foreign keys of other tables that
// reference table d, which DROP TABLE drops (dropping is every table the
// statement drops): refused without CASCADE (2BP01), dropped with it.
// It returns the NOTICE lines of what it dropped. The caller holds ddlMu.
func (e *Engine) dropForeignKeysTo(d *catalog.Descriptor, dropping []string, cascade bool) ([]string, error) {
	if d.Kind != catalog.KindTable {
		return nil, nil
	}
	type ref struct {
		child *catalog.Descriptor
		name  string
	}
	var refs []ref
	for _, c := range e.objects(catalog.KindTable) {
		if c.ID == d.ID || slices.Contains(dropping, c.Name) {
			continue
		}
		for _, con := range c.Constraints {
			if con.Type == "f" && con.RefTable == d.Name {
				refs = append(refs, ref{c, con.Name})
			}
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	var lines []string
	for _, r := range refs {
		lines = append(lines, "drop cascades to constraint "+r.name+" on table "+r.child.Name)
	}
	if !cascade {
		details := make([]string, len(refs))
		for i, r := range refs {
			details[i] = "constraint " + r.name + " on table " + r.child.Name + " depends on table " + d.Name
		}
		return nil, withDetail(sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop table %s because other objects depend on it", d.Name).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too."), "%s", strings.Join(details, "\n"))
	}
	for _, r := range refs {
		cur, ok := e.lookup(r.child.Name)
		if !ok {
			continue
		}
		if err := e.setConstraints(cur, slices.DeleteFunc(slices.Clone(cur.Constraints), func(c catalog.Constraint) bool { return c.Name == r.name })); err != nil {
			return nil, err
		}
	}
	return lines, nil
}

// setConstraints replaces table d's constraints in the catalog
// (meta.DDL.SetConstraints). The caller holds ddlMu.
func (e *Engine) setConstraints(d *catalog.Descriptor, cons []catalog.Constraint) error {
	return e.ddl.SetConstraints(d, cons)
}

// alterConstraint runs ALTER TABLE ... ADD table_constraint and DROP
// CONSTRAINT.
func (s *session) alterConstraint(ctx context.Context, n *front.AlterTableConstraint) (string, error) {
	e := s.e
	if n.Schema != "" && n.Schema != "public" {
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", n.Schema, n.Table)
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	d, ok := e.lookup(n.Table)
	if !ok {
		if n.IfExists {
			return "ALTER TABLE", nil
		}
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", n.Table)
	}
	if d.Kind != catalog.KindTable {
		return "", sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a table", n.Table).
			WithHint("Constraints are kept on tables (CREATE TABLE without APPEND ONLY).")
	}
	if n.Add == nil {
		return s.dropConstraint(ctx, d, n)
	}
	cols, err := d.Schema()
	if err != nil {
		return "", err
	}
	c, err := e.constraintDef(d, cols, n.Add, d)
	if err != nil {
		return "", err
	}
	taken := map[string]bool{catalog.PrimaryKeyName(d.Name): len(d.PrimaryKey) > 0}
	for _, x := range d.Constraints {
		taken[x.Name] = true
	}
	if c.Name == "" {
		c.Name = e.chooseUniqueName(d.Name, c, taken)
	} else if taken[c.Name] {
		if x := d.Constraint(c.Name); c.Type == "u" && (x == nil || x.Type == "u") {
			// The UNIQUE's index takes the name first.
			return "", sqlerr.New(sqlerr.DuplicateTable, "relation \"%s\" already exists", c.Name)
		}
		return "", sqlerr.New(sqlerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", c.Name, d.Name)
	}
	next := *d
	next.Constraints = append(slices.Clone(d.Constraints), c)
	if c.Type == "u" {
		if e.relationNameTaken(c.Name) {
			// The UNIQUE's index is a relation of that name.
			return "", sqlerr.New(sqlerr.DuplicateTable, "relation \"%s\" already exists", c.Name)
		}
		if err := e.addUniqueConstraint(ctx, d, &next, c); err != nil {
			return "", err
		}
		return "ALTER TABLE", e.ddlCheckpoint(ctx)
	}
	if err := e.addConstraint(ctx, d, &next, c); err != nil {
		return "", err
	}
	// The checkpoint comes after the tables' locks are let go (the
	// coordinator comes before them in the lock order).
	return "ALTER TABLE", e.ddlCheckpoint(ctx)
}

// addConstraint validates table d's new constraint c against the rows the
// tables hold now and puts next (d with c) in the catalog, holding the
// locks of the tables involved so that no commit lands in between;
// commits check the constraints of the catalog as it is when they
// commit. The caller holds ddlMu.
func (e *Engine) addConstraint(ctx context.Context, d, next *catalog.Descriptor, c catalog.Constraint) error {
	e.stateMu.RLock()
	defer e.stateMu.RUnlock()
	involved := []*catalog.Descriptor{d}
	if c.Type == "f" && c.RefTable != d.Name {
		p, _ := e.lookup(c.RefTable)
		involved = append(involved, p)
		slices.SortFunc(involved, func(a, b *catalog.Descriptor) int { return int(a.ID) - int(b.ID) })
	}
	logs := make([]*meta.TableLog, len(involved))
	for i, x := range involved {
		logs[i] = e.tables.Log(x.ID)
		logs[i].Lock()
		defer logs[i].Unlock()
		logs[i].WaitIdle()
		if err := e.ensureCurrent(ctx, x, logs[i]); err != nil {
			return err
		}
	}
	if err := e.validateConstraint(ctx, next, c, involved, logs); err != nil {
		return err
	}
	return e.replaceDescriptor(d, next)
}

// validateConstraint checks table d's existing rows against its new
// constraint c, as ALTER TABLE ... ADD does. Holding the logs of involved.
func (e *Engine) validateConstraint(ctx context.Context, d *catalog.Descriptor, c catalog.Constraint, involved []*catalog.Descriptor, logs []*meta.TableLog) error {
	idx := slices.IndexFunc(involved, func(x *catalog.Descriptor) bool { return x.ID == d.ID })
	ts, err := e.openTableState(d, logs[idx])
	if err != nil {
		return err
	}
	defer ts.Close()
	// CHECK and UNIQUE read the rows as they stream by.
	switch c.Type {
	case "c":
		only := *d
		only.Constraints = []catalog.Constraint{c}
		return ts.EachRow(ctx, func(r types.Row) error {
			if err := checkRows(&only, ts.cols, []exec.Change{{Row: r, Sign: exec.Insert}}); err != nil {
				if se, ok := err.(*sqlerr.Error); ok {
					out := *se
					out.Message = "check constraint \"" + c.Name + "\" of relation \"" + d.Name + "\" is violated by some row"
					out.Detail = ""
					return &out
				}
				return err
			}
			return nil
		})
	case "f":
		p := d
		if c.RefTable != d.Name {
			p = involved[1-idx]
		}
		l, err := newFKLink(d, p, c)
		if err != nil {
			return err
		}
		f := &fkRun{links: []fkLink{l}, check: true, descs: map[uint32]*catalog.Descriptor{},
			changes: map[uint32][]exec.Change{}, derived: map[uint32][]exec.Change{}}
		states := map[uint32]*tableState{d.ID: ts}
		f.state = func(x *catalog.Descriptor) (*tableState, error) {
			if st, ok := states[x.ID]; ok {
				return st, nil
			}
			st, err := e.openTableState(x, logs[slices.IndexFunc(involved, func(y *catalog.Descriptor) bool { return y.ID == x.ID })])
			if err == nil {
				states[x.ID] = st
			}
			return st, err
		}
		defer func() {
			for id, st := range states {
				if id != d.ID {
					st.Close()
				}
			}
		}()
		// Every row checked as if inserted, as they stream by, in
		// batches; the table itself is empty before, so a table
		// referencing itself finds its own rows.
		var keys []string
		var rows []types.Row
		check := func() error {
			err := f.checkReferences(ctx, l, keys, rows)
			keys, rows = keys[:0], rows[:0]
			if se, ok := err.(*sqlerr.Error); ok && se.Code == sqlerr.ForeignKeyViolation {
				out := *se
				out.Message = "insert or update on table \"" + d.Name + "\" violates foreign key constraint \"" + c.Name + "\""
				return &out
			}
			return err
		}
		err = ts.EachRow(ctx, func(r types.Row) error {
			k, ok, err := fkKey(pick(r, l.ccols), l.ptypes)
			if err != nil || !ok {
				return err
			}
			keys, rows = append(keys, k), append(rows, r)
			if len(keys) < fkCheckBatch {
				return nil
			}
			return check()
		})
		if err == nil {
			err = check()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dropConstraint runs ALTER TABLE ... DROP CONSTRAINT. The caller holds
// ddlMu.
func (s *session) dropConstraint(ctx context.Context, d *catalog.Descriptor, n *front.AlterTableConstraint) (string, error) {
	e := s.e
	c := d.Constraint(n.Drop)
	if c == nil {
		if n.Drop == catalog.PrimaryKeyName(d.Name) && len(d.PrimaryKey) > 0 {
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "dropping a table's primary key is not supported").
				WithHint("A table's rows are kept by their primary key.")
		}
		if n.DropIfExists {
			pgwire.Notice(ctx, "constraint \""+n.Drop+"\" of relation \""+d.Name+"\" does not exist, skipping", "")
			return "ALTER TABLE", nil
		}
		return "", sqlerr.New(sqlerr.UndefinedObject, "constraint \"%s\" of relation \"%s\" does not exist", n.Drop, d.Name)
	}
	name := c.Name
	if c.Type == "u" {
		// Foreign keys referencing the UNIQUE's columns depend on it.
		var lines []string
		for _, x := range e.objects(catalog.KindTable) {
			var keep []catalog.Constraint
			for _, fk := range x.Constraints {
				if fk.Type == "f" && fk.RefTable == d.Name && referencesKey(&catalog.Descriptor{PrimaryKey: c.Columns}, fk.RefColumns) {
					if !n.DropCascade {
						return "", withDetail(sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop constraint %s on table %s because other objects depend on it", c.Name, d.Name).
							WithHint("Use DROP ... CASCADE to drop the dependent objects too."),
							"constraint %s on table %s depends on index %s", fk.Name, x.Name, c.Name)
					}
					lines = append(lines, "drop cascades to constraint "+fk.Name+" on table "+x.Name)
					continue
				}
				keep = append(keep, fk)
			}
			if len(keep) != len(x.Constraints) && x.ID != d.ID {
				if err := e.setConstraints(x, keep); err != nil {
					return "", err
				}
			}
			if x.ID == d.ID {
				d = &catalog.Descriptor{}
				*d = *x
				d.Constraints = keep
			}
		}
		cascadeNotice(ctx, lines)
		cur, _ := e.lookup(n.Table)
		next := *cur
		next.Constraints = d.Constraints // without the foreign keys on itself dropped
		if err := e.dropUniqueConstraint(&next, name); err != nil {
			return "", err
		}
		return "ALTER TABLE", e.ddlCheckpoint(ctx)
	}
	if err := e.setConstraints(d, slices.DeleteFunc(slices.Clone(d.Constraints), func(x catalog.Constraint) bool { return x.Name == name })); err != nil {
		return "", err
	}
	return "ALTER TABLE", e.ddlCheckpoint(ctx)
}

// truncateForeignKeys checks TRUNCATE's tables against the foreign keys
// referencing them, as PostgreSQL does: a referenced table is truncated
// only together with the tables referencing it (0A000 otherwise), which
// CASCADE adds. It returns the tables to truncate, referencing tables
// before the tables they reference (a transaction truncates them one
// statement each, and each statement's foreign keys must hold).
func (e *Engine) truncateForeignKeys(descs []*catalog.Descriptor, cascade bool) ([]*catalog.Descriptor, error) {
	links := e.fkLinks()
	if len(links) == 0 {
		return descs, nil
	}
	in := func(id uint32) bool {
		return slices.ContainsFunc(descs, func(x *catalog.Descriptor) bool { return x.ID == id })
	}
	for changed := true; changed; {
		changed = false
		for _, l := range links {
			if !in(l.parent.ID) || in(l.child.ID) {
				continue
			}
			if !cascade {
				return nil, withDetail(sqlerr.New(sqlerr.FeatureNotSupported, "cannot truncate a table referenced in a foreign key constraint").
					WithHint("Truncate table \"%s\" at the same time, or use TRUNCATE ... CASCADE.", l.child.Name),
					"Table \"%s\" references \"%s\".", l.child.Name, l.parent.Name)
			}
			descs = append(descs, l.child)
			changed = true
		}
	}
	// Referencing tables first.
	var out []*catalog.Descriptor
	placed := map[uint32]bool{}
	for len(out) < len(descs) {
		progress := false
		for _, d := range descs {
			if placed[d.ID] {
				continue
			}
			ready := true
			for _, l := range links {
				if l.parent.ID == d.ID && l.child.ID != d.ID && in(l.child.ID) && !placed[l.child.ID] {
					ready = false
				}
			}
			if ready {
				out = append(out, d)
				placed[d.ID] = true
				progress = true
			}
		}
		if !progress { // a cycle: any order
			for _, d := range descs {
				if !placed[d.ID] {
					out = append(out, d)
					placed[d.ID] = true
				}
			}
		}
	}
	return out, nil
}
