package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
)

// SET CONSTRAINTS { ALL | name [, ...] } { DEFERRED | IMMEDIATE } changes,
// for the rest of the transaction block, when its deferrable UNIQUE and
// FOREIGN KEY constraints are checked: DEFERRED waits for COMMIT,
// IMMEDIATE checks at each statement, and, as in PostgreSQL, checks the
// block's changes so far at once (Django adds a ForeignKey field with
// ADD COLUMN ... DEFERRABLE INITIALLY DEFERRED then SET CONSTRAINTS name
// IMMEDIATE, and checks fixtures with SET CONSTRAINTS ALL IMMEDIATE).
// Making a constraint that is not deferrable DEFERRED is 42809 (IMMEDIATE
// is accepted: it already is); outside a block
// the statement only warns. ROLLBACK TO SAVEPOINT restores the modes the
// savepoint saw, as in PostgreSQL.

// deferred reports whether constraint c waits for the COMMIT of the
// session's transaction block.
func (s *session) deferred(c catalog.Constraint) bool {
	if s == nil || !c.Deferrable {
		return false
	}
	if s.tx != nil {
		if m, ok := s.tx.constraintModes[c.Name]; ok {
			return !m
		}
		if s.tx.allConstraints != nil {
			return !*s.tx.allConstraints
		}
	}
	return c.Deferred
}

// deferredCheck is deferred inside a transaction block, nil outside one.
func (s *session) deferredCheck() func(catalog.Constraint) bool {
	if s.tx == nil {
		return nil
	}
	return s.deferred
}

func (s *session) setConstraints(ctx context.Context, n *front.SetConstraints) (string, error) {
	const tag = "SET CONSTRAINTS"
	for i, name := range n.Names {
		if sc := n.Schemas[i]; sc != "" && sc != "public" {
			return "", sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", sc)
		}
		// Every constraint of the name counts, as in PostgreSQL: one that
		// is not deferrable (a primary key, a CHECK, a UNIQUE or FOREIGN
		// KEY without DEFERRABLE) may be made IMMEDIATE, which it is
		// already, but not DEFERRED (42809).
		found := false
		for _, d := range s.e.objects(catalog.KindTable) {
			deferrable := false
			switch c := d.Constraint(name); {
			case c != nil:
				deferrable = c.Deferrable
			case len(d.PrimaryKey) > 0 && catalog.PrimaryKeyName(d.Name) == name:
			default:
				continue
			}
			found = true
			if !deferrable && !n.Immediate {
				return "", sqlerr.New(sqlerr.WrongObjectType, "constraint %q is not deferrable", name)
			}
		}
		if !found {
			return "", sqlerr.New(sqlerr.UndefinedObject, "constraint %q does not exist", name)
		}
	}
	if s.tx == nil {
		pgwire.Notice(ctx, "SET CONSTRAINTS can only be used in transaction blocks", "")
		return tag, nil
	}
	if n.All {
		all := n.Immediate
		s.tx.allConstraints = &all
		s.tx.constraintModes = nil
	} else {
		if s.tx.constraintModes == nil {
			s.tx.constraintModes = map[string]bool{}
		}
		for _, name := range n.Names {
			s.tx.constraintModes[name] = n.Immediate
		}
	}
	if !n.Immediate {
		return tag, nil
	}
	return tag, s.checkImmediate(ctx)
}

// checkImmediate checks the block's changes so far against the UNIQUE
// and FOREIGN KEY constraints that are now checked at each statement.
func (s *session) checkImmediate(ctx context.Context) error {
	var written []*tableWrite
	for _, w := range s.tx.tables {
		if len(w.stmts) > 0 {
			written = append(written, w)
		}
	}
	if len(written) == 0 {
		return nil
	}
	snap, err := s.txSnapshot()
	if err != nil {
		return err
	}
	e := s.e
	e.stateMu.RLock()
	defer e.stateMu.RUnlock()
	var descs []*catalog.Descriptor
	for _, w := range written {
		d := e.current(w.d)
		descs = append(descs, d)
		changes := exec.ChangelogOrder(w.stmts)
		ts, err := newTableState(d, snap.Snap, nil)
		if err != nil {
			return err
		}
		if err := e.checkConstraints(ctx, ts, nil, changes, s.deferred); err != nil {
			return err
		}
	}
	links, related := e.fkLinked(descs)
	if related == nil {
		return nil
	}
	f := &fkRun{s: s, links: links, check: true, deferring: true, descs: map[uint32]*catalog.Descriptor{},
		changes: map[uint32][]exec.Change{}, derived: map[uint32][]exec.Change{}}
	f.state = func(x *catalog.Descriptor) (*tableState, error) {
		return newTableState(x, snap.Snap, nil)
	}
	for _, w := range written {
		f.add(e.current(w.d), exec.ChangelogOrder(w.stmts))
	}
	_, err = f.run(ctx)
	return err
}
