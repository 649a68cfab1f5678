package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestCopyManyBatches compares with PostgreSQL 15 COPYs into a table that
// are converted and checked a part at a time (tens of thousands of rows):
// a COPY with defaults and a generated column lands whole, and one whose
// bad row comes late (a key another part of the same COPY has, or an
// earlier row of the same part, or the row just before, a key twice among
// rows out of order, a key the table has, a failing CHECK, a NULL in a
// NOT NULL column) fails with PostgreSQL's SQLSTATE and message and leaves
// nothing.
func TestCopyManyBatches(t *testing.T) {
	srv := startServer(t)
	conns := map[string]*pgx.Conn{"streamdb": srv.Conn(t), "PostgreSQL": testutil.StartPostgres(t).Conn(t)}
	for _, conn := range conns {
		exec(t, conn, "CREATE TABLE cb (id BIGINT PRIMARY KEY, v INT NOT NULL CHECK (v >= 0), s TEXT DEFAULT 'dflt', g BIGINT GENERATED ALWAYS AS (id * 2) STORED)")
	}
	// rows renders ids from..to as COPY text with v = id % 7, calling
	// edit for each line.
	rows := func(from, to int, edit func(id int) string) string {
		var b strings.Builder
		for id := from; id <= to; id++ {
			if line := edit(id); line != "" {
				b.WriteString(line)
				continue
			}
			fmt.Fprintf(&b, "%d\t%d\n", id, id%7)
		}
		return b.String()
	}
	plain := func(int) string { return "" }
	cases := []copyCase{
		{"lands whole", rows(1, 30000, plain), ""},
		{"a key of an earlier part", rows(40001, 70000, func(id int) string {
			if id == 65000 {
				return "40100\t1\n"
			}
			return ""
		}), "23505"},
		{"a key of the same part", rows(40001, 41000, func(id int) string {
			if id == 40900 {
				return "40100\t1\n"
			}
			return ""
		}), "23505"},
		{"the key of the row before", rows(40001, 70000, func(id int) string {
			if id == 60000 {
				return "59999\t1\n"
			}
			return ""
		}), "23505"},
		{"a key twice after the order breaks", rows(40001, 70000, func(id int) string {
			if id == 50000 || id == 62000 {
				return "35000\t1\n"
			}
			return ""
		}), "23505"},
		{"a key the table has", rows(40001, 70000, func(id int) string {
			if id == 52000 {
				return "777\t1\n"
			}
			return ""
		}), "23505"},
		{"a failing CHECK", rows(40001, 70000, func(id int) string {
			if id == 61000 {
				return "61000\t-1\n"
			}
			return ""
		}), "23514"},
		{"a NULL in a NOT NULL column", rows(40001, 70000, func(id int) string {
			if id == 69999 {
				return "69999\t\\N\n"
			}
			return ""
		}), "23502"},
		{"lands whole after failures", rows(70001, 90000, plain), ""},
	}
	copyCasesMatchPostgres(t, conns, "COPY cb (id, v) FROM STDIN", cases)
	const sum = "SELECT count(*), sum(id), sum(v), count(*) FILTER (WHERE s = 'dflt'), sum(g) FROM cb"
	wantRows(t, conns["streamdb"], sum, textRows(t, conns["PostgreSQL"], sum)...)
}

// copyCase is one COPY of copyCasesMatchPostgres: its rows, and the
// SQLSTATE streamdb must answer ("" for success).
type copyCase struct {
	name, data string
	code       string
}

// copyCasesMatchPostgres runs each case's COPY on PostgreSQL and on
// streamdb (conns by those names) and checks that both answer the same
// tag or error, and that streamdb's is the case's SQLSTATE.
func copyCasesMatchPostgres(t *testing.T, conns map[string]*pgx.Conn, copySQL string, cases []copyCase) {
	t.Helper()
	for _, c := range cases {
		var got []string
		for _, name := range []string{"PostgreSQL", "streamdb"} {
			tag, err := copyIn(t, conns[name], copySQL, c.data)
			var pe *pgconn.PgError
			switch {
			case errors.As(err, &pe):
				got = append(got, pe.Code+" "+pe.Message+" "+pe.Detail)
			case err != nil:
				t.Fatalf("%s: %s: %v", c.name, name, err)
			default:
				got = append(got, tag.String())
			}
		}
		if got[0] != got[1] {
			t.Errorf("%s: PostgreSQL answers %q, streamdb %q", c.name, got[0], got[1])
		}
		if c.code != "" && !strings.HasPrefix(got[1], c.code) {
			t.Errorf("%s: streamdb answers %q, want SQLSTATE %s", c.name, got[1], c.code)
		}
	}
}
