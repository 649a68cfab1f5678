package sql

import (
	"fmt"

	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
)

// A query cursor holds its rows and a position, as a PostgreSQL portal:
// pos is 0 before the first row, i (1..n) on row i, n+1 after the last.
// FETCH and MOVE move it as PostgreSQL does (FETCH 5 from a 5-row cursor
// stays on row 5, one more FETCH goes past the end; ABSOLUTE and RELATIVE
// land on one row or past either end). A cursor declared NO SCROLL can
// only go forward (55000, as PostgreSQL refuses a backward step); it
// gives up the rows it has passed, so their memory counts no more
// against query_max_memory. Other cursors keep all their rows and scroll
// both ways: PostgreSQL allows that without SCROLL for plans that can run
// backward, and streamdb's rows are all held anyway.

// errForwardOnly is PostgreSQL's refusal of a backward step.
func errForwardOnly(hint string) error {
	return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cursor can only scan forward").WithHint("%s", hint)
}

// scrollRows returns the row numbers (1-based) FETCH n reads from c, in
// the order it returns them, and the position after it. It refuses a
// backward step on a NO SCROLL cursor.
func (c *feedCursor) scrollRows(n *front.Fetch) (rows []int64, pos int64, err error) {
	total := c.base + int64(len(c.buf.rows))
	pos = c.pos
	backward := false
	switch n.Dir {
	case front.FetchForward, front.FetchBackward:
		k := n.Count
		if k == 0 {
			// Zero fetches the current row again, if on one (a step back
			// and one forward in PostgreSQL).
			if pos >= 1 && pos <= total {
				return []int64{pos}, pos, c.checkScroll(true, n)
			}
			return nil, pos, nil
		}
		if k < 0 {
			k = total + 1 // ALL
		}
		if n.Dir == front.FetchForward {
			for r := pos + 1; r <= total && r <= pos+k; r++ {
				rows = append(rows, r)
			}
			return rows, min(pos+k, total+1), nil
		}
		for r := pos - 1; r >= 1 && r >= pos-k; r-- {
			rows = append(rows, r)
		}
		return rows, max(pos-k, 0), c.checkScroll(true, n)
	case front.FetchAbsolute:
		target := n.Count
		switch {
		case target < 0:
			backward = true
			target = total + 1 + target
		case target == 0:
			backward = pos != 0
		default:
			backward = target <= pos
		}
		return c.land(target, total, backward, n)
	case front.FetchRelative:
		if n.Count == 0 {
			return c.scrollRows(&front.Fetch{Dir: front.FetchForward, Count: 0, Move: n.Move})
		}
		return c.land(pos+n.Count, total, n.Count < 0, n)
	}
	return nil, pos, sqlerr.New(sqlerr.FeatureNotSupported, "this FETCH direction is not supported")
}

// land is ABSOLUTE and RELATIVE: row target, or before the first or after
// the last one when it is out of range.
func (c *feedCursor) land(target, total int64, backward bool, n *front.Fetch) ([]int64, int64, error) {
	if err := c.checkScroll(backward, n); err != nil {
		return nil, c.pos, err
	}
	switch {
	case target < 1:
		return nil, 0, nil
	case target > total:
		return nil, total + 1, nil
	}
	return []int64{target}, target, nil
}

// checkScroll refuses a backward step of a NO SCROLL cursor.
func (c *feedCursor) checkScroll(backward bool, n *front.Fetch) error {
	if !backward || c.scroll != front.ScrollNo || n.Move && n.Count == 0 && n.Dir != front.FetchAbsolute {
		return nil
	}
	return errForwardOnly("Declare it with SCROLL option to enable backward scan.")
}

// scrollFetch runs FETCH or MOVE on a query cursor.
func (c *feedCursor) scrollFetch(n *front.Fetch, w pgwire.RowWriter) (string, error) {
	rows, pos, err := c.scrollRows(n)
	if err != nil {
		return "", err
	}
	if n.Move {
		c.moveTo(pos)
		return fmt.Sprintf("MOVE %d", len(rows)), nil
	}
	for _, r := range rows {
		if err := w.WriteRow(c.buf.rows[r-1-c.base]); err != nil {
			return "", err
		}
	}
	c.moveTo(pos)
	return fmt.Sprintf("FETCH %d", len(rows)), nil
}

// moveTo sets the position; a NO SCROLL cursor drops the rows it passed.
func (c *feedCursor) moveTo(pos int64) {
	c.pos = pos
	if c.scroll != front.ScrollNo {
		return
	}
	if drop := min(pos-c.base, int64(len(c.buf.rows))); drop > 0 {
		c.take(int(drop))
		c.base += drop
	}
}

// cursorSeq is the savepoint counter of the transaction block when a
// cursor is declared: ROLLBACK TO a savepoint made before it (whose
// number is at most this) closes the cursor, as PostgreSQL drops the
// portals of the subtransactions it rolls back.
func (s *session) cursorSeq() int {
	if s.tx == nil {
		return 0
	}
	return s.tx.spSeq
}

// rollbackToCursors closes the cursors declared in block tx since the
// savepoint numbered seq.
func (s *session) rollbackToCursors(tx *txn, seq int) {
	m, ok := feedCursors.Load(s)
	if !ok {
		return
	}
	cs := m.(map[string]*feedCursor)
	for name, c := range cs {
		if c.tx == tx && c.spSeq >= seq {
			c.close()
			delete(cs, name)
		}
	}
}
