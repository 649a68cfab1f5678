package sql

import (
	"context"
	"fmt"
	"io"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/pgcopy"
	"streamdb/pgwire"
	"streamdb/sql/front"
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
		numberParamMarkers(node)
	}
	inner, err := s.prepare(ctx, q, &boundParams{order: q.Params, stmt: q, sess: s})
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
		out := &copyOut{f: f, cols: cols, w: cc.CopyOut(f.Kind == "binary", len(cols))}
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
	case c.f.Kind == "binary":
		_, err := c.w.Write(pgcopy.AppendBinaryHeader(nil))
		return err
	case c.f.Header:
		b := c.buf[:0]
		for i, col := range c.cols {
			if i > 0 {
				b = append(b, c.f.Delimiter)
			}
			if c.f.Kind == "csv" {
				b = pgcopy.AppendCSV(b, col.Name, c.f, false)
			} else {
				b = pgcopy.AppendText(b, col.Name, c.f.Delimiter)
			}
		}
		c.buf = append(b, '\n')
		_, err := c.w.Write(c.buf)
		return err
	}
	return nil
}

func (c *copyOut) WriteRow(row types.Row) error {
	b := c.buf[:0]
	if c.f.Kind == "binary" {
		b = append(b, byte(len(row)>>8), byte(len(row)))
	}
	for i, d := range row {
		col := c.cols[i]
		if c.f.Kind == "binary" {
			if d.IsNull() {
				b = append(b, 0xff, 0xff, 0xff, 0xff)
				continue
			}
			if col.Mod.Fixed && d.K == types.KindString {
				d = types.NewString(types.PadFixed(d.S, col.Mod))
			}
			at := len(b)
			b = append(b, 0, 0, 0, 0)
			var err error
			if b, err = pgwire.AppendBinary(b, d, col.Type); err != nil {
				return err
			}
			size := len(b) - at - 4
			b[at], b[at+1], b[at+2], b[at+3] = byte(size>>24), byte(size>>16), byte(size>>8), byte(size)
			continue
		}
		if i > 0 {
			b = append(b, c.f.Delimiter)
		}
		switch {
		case d.IsNull():
			b = append(b, c.f.Null...)
		case c.f.Kind == "csv":
			b = pgcopy.AppendCSV(b, types.FormatColumn(d, col), c.f, c.f.ForceQuoteAll || c.f.ForceQuote[col.Name])
		default:
			b = pgcopy.AppendText(b, types.FormatColumn(d, col), c.f.Delimiter)
		}
	}
	if c.f.Kind != "binary" {
		b = append(b, '\n')
	}
	c.buf = b
	c.n++
	_, err := c.w.Write(b)
	return err
}

func (c *copyOut) finish() error {
	if c.f.Kind == "binary" {
		_, err := c.w.Write([]byte{0xff, 0xff})
		return err
	}
	return nil
}
