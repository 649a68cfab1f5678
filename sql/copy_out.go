package sql

import (
	"context"
	"fmt"
	"io"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/front"
	"streamdb/pgcopy"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareCopyTo prepares COPY relation TO STDOUT (a SELECT of the relation)
// and COPY (query) TO STDOUT.
func (s *session) prepareCopyTo(ctx context.Context, n *front.Copy, f *pgcopy.Format) (*prepared, error) {
	q := n.Query
	if q == nil {
		d, ok := s.e.lookup(n.Table)
		if !ok {
			return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", n.Table)
		}
		cols, err := d.Schema()
		if err != nil {
			return nil, err
		}
		target, err := copyTargets(d, cols, n.Columns)
		if err != nil {
			return nil, err
		}
		list := "*"
		if len(n.Columns) > 0 || len(target) < len(cols) {
			// A list, or no list on a relation with generated columns,
			// which COPY leaves out.
			names := make([]string, len(target))
			for i, t := range target {
				names[i] = cols[t].Name
			}
			list = quoteIdents(names)
		}
		if q, err = front.Parse("SELECT " + list + " FROM " + quoteIdent(d.Name)); err != nil {
			return nil, err
		}
	}
	if q.NumParams > 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY (query) TO STDOUT cannot have parameters").
			WithHint("Write the values into the query.")
	}
	if node, ok := q.Node.(ast.Node); ok {
		binder.NumberParamMarkers(node)
	}
	inner, err := s.prepare(ctx, q, s.params(q))
	if err != nil {
		return nil, err
	}
	s.applyFloatDigits(inner)
	cols := inner.cols
	for _, c := range n.ForceQuote {
		if c != "*" && columnIndex(cols, c) < 0 {
			return nil, sqlerr.New(sqlerr.InvalidColumnReference, "FORCE_QUOTE column \"%s\" not referenced by COPY", c)
		}
	}
	return (&prepared{}).withRun(func(ctx context.Context, w pgwire.RowWriter) (string, error) {
		if err := s.permitted(q); err != nil {
			return "", err
		}
		cc, err := copyConn(w)
		if err != nil {
			return "", err
		}
		out := &copyOut{f: f, cols: cols, w: cc.CopyOut(f.Kind == pgcopy.Binary, len(cols))}
		if err := out.start(); err != nil {
			return "", err
		}
		if _, err := inner.run(ctx, nil, out); err != nil {
			return "", err
		}
		if err := out.finish(); err != nil {
			return "", err
		}
		return fmt.Sprintf("COPY %d", out.n), nil
	}), nil
}

// copyOut encodes the rows of a COPY TO, one CopyData message each.
type copyOut struct {
	f    *pgcopy.Format
	cols []types.Column
	w    io.Writer
	buf  []byte
	n    int
}

func (c *copyOut) start() error {
	switch {
	case c.f.Kind == pgcopy.Binary:
		_, err := c.w.Write(pgcopy.AppendBinaryHeader(nil))
		return err
	case c.f.Header:
		names := make([]pgcopy.Field, len(c.cols))
		for i, col := range c.cols {
			names[i] = pgcopy.Field{S: col.Name}
		}
		c.buf = c.f.AppendRecord(c.buf[:0], names)
		_, err := c.w.Write(c.buf)
		return err
	}
	return nil
}

func (c *copyOut) WriteRow(row types.Row) error {
	b := c.buf[:0]
	if c.f.Kind == pgcopy.Binary {
		b = pgcopy.AppendBinaryTuple(b, len(row))
	}
	for i, d := range row {
		col := c.cols[i]
		if c.f.Kind == pgcopy.Binary {
			if d.IsNull() {
				b = pgcopy.AppendBinaryNull(b)
				continue
			}
			if col.Mod.Fixed && d.K == types.KindString {
				d = types.NewString(types.PadFixed(d.S, col.Mod))
			}
			var at int
			b, at = pgcopy.StartBinaryField(b)
			var err error
			if b, err = pgwire.AppendBinary(b, d, col.Type); err != nil {
				return err
			}
			b = pgcopy.FinishBinaryField(b, at)
			continue
		}
		if i > 0 {
			b = append(b, c.f.Delimiter)
		}
		if d.IsNull() {
			b = append(b, c.f.Null...)
		} else {
			b = c.f.AppendValue(b, types.FormatColumn(d, col), c.f.ForceQuoteAll || c.f.ForceQuote[col.Name])
		}
	}
	if c.f.Kind != pgcopy.Binary {
		b = append(b, '\n')
	}
	c.buf = b
	c.n++
	_, err := c.w.Write(b)
	return err
}

func (c *copyOut) finish() error {
	if c.f.Kind == pgcopy.Binary {
		_, err := c.w.Write(pgcopy.AppendBinaryTrailer(nil))
		return err
	}
	return nil
}
