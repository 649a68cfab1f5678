package sql

import (
	"context"
	"fmt"
	"io"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/pgcopy"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// COPY ... FROM STDIN and COPY ... TO STDOUT (the only ends streamdb
// offers: the client reads and writes files, as psql's \copy does).
//
// COPY FROM reads and converts every row before it writes any: a bad row
// stops it with its line number and nothing of that COPY is written. Into
// a table the rows are one statement (one transaction outside a block,
// all or nothing at any size); into a stream each row is an event, as with
// INSERT. The session
// needs INSERT on the target, as for INSERT; COPY TO needs what its SELECT
// needs.

// prepareCopy prepares a COPY statement.
func (s *session) prepareCopy(ctx context.Context, n *front.Copy) (*prepared, error) {
	f, err := pgcopy.NewFormat(&pgcopy.Options{From: n.From, Options: n.Options,
		ForceQuote: n.ForceQuote, ForceNotNull: n.ForceNotNull, ForceNull: n.ForceNull})
	if err != nil {
		return nil, err
	}
	if n.Schema != "" && n.Schema != "public" {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", n.Schema, n.Table)
	}
	if n.From {
		return s.prepareCopyFrom(n, f)
	}
	return s.prepareCopyTo(ctx, n, f)
}

// copyConn is the client's end of a COPY.
func copyConn(w pgwire.RowWriter) (pgwire.CopyConn, error) {
	cc, ok := w.(pgwire.CopyConn)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY with STDIN or STDOUT needs a client connection")
	}
	return cc, nil
}

// copyTargets returns the columns of d that a COPY's column list names
// (all of them when it names none), as indexes into cols.
func copyTargets(d *catalog.Descriptor, cols []types.Column, names []string) ([]int, error) {
	if len(names) == 0 {
		// As in PostgreSQL, COPY without a column list leaves out
		// generated columns.
		t := make([]int, 0, len(cols))
		for i := range cols {
			if i >= len(d.Columns) || d.Columns[i].Generated == "" {
				t = append(t, i)
			}
		}
		return t, nil
	}
	var t []int
	for _, name := range names {
		i := columnIndex(cols, name)
		if i < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, d.Name)
		}
		if i < len(d.Columns) && d.Columns[i].Generated != "" {
			return nil, &sqlerr.Error{Code: sqlerr.InvalidColumnReference, Message: "column \"" + name + "\" is a generated column",
				Detail: "Generated columns cannot be used in COPY."}
		}
		for _, j := range t {
			if j == i {
				return nil, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", name)
			}
		}
		t = append(t, i)
	}
	return t, nil
}

func (s *session) prepareCopyFrom(n *front.Copy, f *pgcopy.Format) (*prepared, error) {
	d, ok := s.e.lookup(n.Table)
	if !ok {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", n.Table)
	}
	if d.Kind != catalog.KindStream && d.Kind != catalog.KindTable {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "cannot copy to %s \"%s\"", relKindWord(d), d.Name).
			WithHint("COPY FROM writes to streams and tables; a materialized view is computed from its query.")
	}
	if err := checkStreamWrite(d, "copy to"); err != nil {
		return nil, err
	}
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	target, err := copyTargets(d, cols, n.Columns)
	if err != nil {
		return nil, err
	}
	if target, err = writeTargets(d, cols, target, len(n.Columns) > 0); err != nil {
		return nil, err
	}
	for _, list := range [][]string{n.ForceNotNull, n.ForceNull} {
		for _, c := range list {
			if i := columnIndex(cols, c); i < 0 || !containsInt(target, i) {
				return nil, sqlerr.New(sqlerr.InvalidColumnReference, "FORCE_NOT_NULL or FORCE_NULL column \"%s\" not referenced by COPY", c)
			}
		}
	}
	return (&prepared{}).withRun(func(ctx context.Context, w pgwire.RowWriter) (string, error) {
		if !s.roleSuperuser() && !s.has(d, "INSERT") {
			return "", sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindWord(d), d.Name)
		}
		cc, err := copyConn(w)
		if err != nil {
			return "", err
		}
		in := &copyIn{f: f, d: d, cols: cols, target: target}
		src := cc.CopyIn(f.Kind == pgcopy.Binary, len(target))
		if d.Kind == catalog.KindTable && s.streamsInsert(d) {
			return s.copyIntoTable(ctx, d, cols, in, src)
		}
		rows, err := in.read(src)
		if err != nil {
			return "", err
		}
		if err := s.fillDefaults(d, cols, target, rows); err != nil {
			return "", err
		}
		tag := fmt.Sprintf("COPY %d", len(rows))
		if d.Kind == catalog.KindTable {
			return tag, s.insertIntoTable(ctx, d, rows)
		}
		return tag, s.publishRows(ctx, d, cols, rows)
	}), nil
}

// copyIntoTable streams the rows of an autocommit COPY into table d as one
// commit (bulkInsert).
func (s *session) copyIntoTable(ctx context.Context, d *catalog.Descriptor, cols []types.Column, in *copyIn, src io.Reader) (string, error) {
	fill, err := s.defaultFiller(d, cols, in.target)
	if err != nil {
		return "", err
	}
	n, err := s.bulkInsert(ctx, d, nil, fill, func(emit func([]types.Row) ([]types.Row, error)) error {
		batch := make([]types.Row, 0, bulkBatchRows)
		err := in.each(src, func(row types.Row) error {
			batch = append(batch, row)
			if len(batch) < bulkBatchRows {
				return nil
			}
			_, err := emit(batch)
			batch = batch[:0]
			return err
		})
		if err == nil && len(batch) > 0 {
			_, err = emit(batch)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("COPY %d", n), nil
}

// withRun replaces p's run by one that gets the statement's RowWriter.
func (p *prepared) withRun(run func(ctx context.Context, w pgwire.RowWriter) (string, error)) *prepared {
	p.run = func(ctx context.Context, _ []types.Datum, w pgwire.RowWriter) (string, error) { return run(ctx, w) }
	return p
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// publishRows publishes rows to stream d as INSERT does: at COMMIT inside
// a transaction block, else now, acknowledged before it returns.
func (s *session) publishRows(ctx context.Context, d *catalog.Descriptor, cols []types.Column, rows []types.Row) error {
	msgs := make([][]byte, len(rows))
	for i, row := range rows {
		data, err := encodeStreamRow(d, memberColumns(d, cols), row)
		if err != nil {
			return err
		}
		msgs[i] = data
	}
	if s.tx != nil {
		w := s.tx.stream(d)
		w.msgs = append(w.msgs, msgs...)
		return s.noteTxRows(w, msgs)
	}
	return s.commitWrites(ctx, nil, []*streamWrite{{d: d, msgs: msgs}})
}
