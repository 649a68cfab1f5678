package recovery

import (
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// sums is a table's (or its view's) row count and the sum of a column.
type sums struct{ n, sum int64 }

// summed names a table, the column summed, and a materialized view over
// it defined as SELECT count(*) AS n, sum(col) AS total FROM table.
type summed struct{ table, col, view string }

// read runs FLUSH, so that the view has taken every commit, then reads
// the table's count and sum and the view's.
func (s summed) read(t *testing.T, srv *testutil.Server, what string) (table, view sums) {
	t.Helper()
	conn := srv.Conn(t)
	if err := testutil.ExecSimple(conn, 10*time.Minute, "FLUSH"); err != nil {
		t.Fatalf("%s: FLUSH: %v", what, err)
	}
	for _, q := range []struct {
		sql string
		to  *sums
	}{
		{"SELECT count(*), coalesce(sum(" + s.col + "), 0) FROM " + s.table, &table},
		{"SELECT n, coalesce(total, 0) FROM " + s.view, &view},
	} {
		_, rows, err := queryText(conn, 10*time.Minute, q.sql)
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s: %s: %v %v", what, q.sql, rows, err)
		}
		*q.to = sums{atoi(t, rows[0][0]), atoi(t, rows[0][1])}
	}
	return table, view
}

// allOrNone checks what a write killed part-way left after the restart:
// the table holds before (none of it) or after (all of it), never none of
// a write that was acknowledged (ackErr nil), and the view agrees with
// the table. It returns what the table holds.
func (s summed) allOrNone(t *testing.T, srv *testutil.Server, what string, before, after sums, ackErr error) sums {
	t.Helper()
	table, view := s.read(t, srv, what)
	switch table {
	case before:
		if ackErr == nil {
			t.Fatalf("%s: it was acknowledged, and after the restart nothing of it is there", what)
		}
		t.Logf("%s: absent", what)
	case after:
		t.Logf("%s: all there", what)
	default:
		t.Fatalf("%s: the table holds %+v; want %+v (none of it) or %+v (all of it)", what, table, before, after)
	}
	if view != table {
		t.Fatalf("%s: the view holds %+v, the table %+v", what, view, table)
	}
	return table
}
