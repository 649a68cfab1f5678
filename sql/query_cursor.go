package sql

import (
	"context"
	"unsafe"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A query cursor (DECLARE c CURSOR FOR SELECT ...) runs its query at
// DECLARE, in the declaring transaction block's view, and keeps the rows
// in the session; FETCH and MOVE take them from the front. The rows all
// cursors of a session hold are bounded by query_max_memory together: a
// DECLARE past it is refused with 53200 and holds nothing. Without WITH
// HOLD a cursor needs a transaction block (25P01) and ends with it; a WITH
// HOLD cursor survives COMMIT but not ROLLBACK of its block, as in
// PostgreSQL. FETCH and MOVE scroll as in PostgreSQL
// (query_cursor_scroll.go).
func (s *session) prepareQueryCursor(n *front.DeclareCursor, outer *binder.Params) (*prepared, error) {
	q := n.Query
	if an, ok := q.Node.(ast.Node); ok {
		binder.NumberParamMarkers(an)
	}
	params := s.params(q)
	var declared []types.Type
	if outer != nil {
		declared = outer.Types()
	}
	params.Declare(declared, types.Unknown)
	inner, err := s.prepare(context.Background(), q, params)
	if err != nil {
		return nil, err
	}
	if inner.cols == nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DECLARE CURSOR needs a query that returns rows")
	}
	s.applyFloatDigits(inner)
	return &prepared{params: inner.params, run: func(ctx context.Context, vals []types.Datum, _ pgwire.RowWriter) (string, error) {
		if s.tx == nil && !n.Hold {
			return "", sqlerr.New(sqlerr.NoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks")
		}
		cs := s.cursors()
		if _, dup := cs[n.Name]; dup {
			return "", sqlerr.New(sqlerr.DuplicateCursor, "cursor %q already exists", n.Name)
		}
		after, err := s.authorize(q)
		if err != nil {
			return "", err
		}
		limit, _ := parseMemory(s.settings["query_max_memory"])
		for _, c := range cs {
			limit -= c.bytes
		}
		w := &boundedRows{limit: limit}
		if _, err := inner.run(ctx, vals, w); err != nil {
			return "", err
		}
		if after != nil {
			after()
		}
		cs[n.Name] = &feedCursor{cols: inner.cols, buf: rowBuffer{rows: w.rows}, hold: n.Hold, tx: s.tx, bytes: w.bytes,
			scroll: n.Scroll, spSeq: s.cursorSeq()}
		return "DECLARE CURSOR", nil
	}}, nil
}

// boundedRows keeps copies of rows up to limit estimated bytes (0 or less:
// unbounded). what names the rows' holder in the error past the limit
// ("" for the session's cursors).
type boundedRows struct {
	rows  []types.Row
	bytes int64
	limit int64
	what  string
}

func (b *boundedRows) WriteRow(r types.Row) error {
	n := int64(unsafe.Sizeof(types.Row{})) + int64(len(r))*int64(unsafe.Sizeof(types.Datum{}))
	for _, d := range r {
		n += int64(len(d.S))
	}
	b.bytes += n
	if b.limit > 0 && b.bytes > b.limit && b.what != "" {
		return sqlerr.New(sqlerr.OutOfMemory, "out of memory: reading %s needs more than query_max_memory for its rows", b.what).
			WithHint("Add a LIMIT, or raise query_max_memory for this session.")
	}
	if b.limit > 0 && b.bytes > b.limit {
		return sqlerr.New(sqlerr.OutOfMemory, "out of memory: the session's cursors need more than query_max_memory for their rows").
			WithHint("Fetch the rows in parts with LIMIT and OFFSET, close other cursors, or raise query_max_memory for this session.")
	}
	b.rows = append(b.rows, append(types.Row(nil), r...))
	return nil
}

// take drops the first k rows of a cursor (fetched or moved over).
func (c *feedCursor) take(k int) {
	if c.sub != nil {
		c.buf.rows = append(c.buf.rows[:0], c.buf.rows[k:]...)
		return
	}
	if len(c.buf.rows) > 0 {
		c.bytes -= c.bytes * int64(k) / int64(len(c.buf.rows))
	}
	clear(c.buf.rows[:k])
	c.buf.rows = c.buf.rows[k:]
}

// endTxCursors closes the cursors the end of block tx ends: those without
// HOLD, and when the block did not commit, the ones it declared.
func (s *session) endTxCursors(tx *txn, committed bool) {
	m, ok := feedCursors.Load(s)
	if !ok || tx == nil {
		return
	}
	cs := m.(map[string]*feedCursor)
	for name, c := range cs {
		if !c.hold || c.tx == tx && !committed {
			c.close()
			delete(cs, name)
		}
	}
}
