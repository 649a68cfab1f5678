package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestErrorCodesAndPositions checks the SQLSTATE, message and cursor
// position of errors, with the simple and the extended protocol. The
// expected values are what PostgreSQL 15 answers for the same statements
// (with the stream as a table and the view as a view); position 0 means
// PostgreSQL sends none.
func TestErrorCodesAndPositions(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM clicks (user_id BIGINT, page VARCHAR, ms INT) WITH (subject = 'e2e.clicks', format = 'json')",
		"CREATE STREAM other (user_id BIGINT) WITH (subject = 'e2e.other', format = 'json')",
		"CREATE MATERIALIZED VIEW per_page AS SELECT page, count(*) AS n FROM clicks GROUP BY page")

	cases := []struct {
		sql      string
		code     string
		position int32 // checked when >= 0
		message  string
	}{
		// 42601 with the position of the offending token (1-based).
		{"SELEC 1", "42601", 1, `syntax error at or near "SELEC"`},
		{"SELECT * FROM FROM clicks", "42601", 15, `syntax error at or near "FROM"`},
		{"SELECT 1 +", "42601", 11, "syntax error at end of input"},
		{"SELECT page, FROM per_page", "42601", 14, `syntax error at or near "FROM"`},
		{"SELECT * FROM per_page WHERE", "42601", 29, "syntax error at end of input"},
		{"SELECT 'abc", "42601", 8, `unterminated quoted string at or near "'abc"`},
		{"CREATE MATERIALIZED VIEW v AS SELECT page FROM clicks WHERE", "42601", 60, "syntax error at end of input"},
		// 42P01 points at the relation.
		{"SELECT * FROM nosuch", "42P01", 15, `relation "nosuch" does not exist`},
		{"INSERT INTO nosuch VALUES (1)", "42P01", 13, `relation "nosuch" does not exist`},
		{"CREATE MATERIALIZED VIEW v AS SELECT count(*) FROM nosuch", "42P01", 52, `relation "nosuch" does not exist`},
		// 42703 points at the column.
		{"SELECT nosuch FROM per_page", "42703", 8, `column "nosuch" does not exist`},
		{"SELECT page FROM per_page WHERE nosuch > 1", "42703", 33, `column "nosuch" does not exist`},
		{"SELECT page FROM per_page ORDER BY nosuch", "42703", 36, `column "nosuch" does not exist`},
		{"INSERT INTO clicks (user_id, nosuch) VALUES (1, 2)", "42703", 30, `column "nosuch" of relation "clicks" does not exist`},
		{"CREATE MATERIALIZED VIEW v AS SELECT nosuch FROM clicks", "42703", 38, `column "nosuch" does not exist`},
		// 42P07, 0A000, 2BP01, 42803 (positions not checked).
		{"CREATE STREAM clicks (a INT) WITH (subject = 'e2e.x')", "42P07", -1, `relation "clicks" already exists`},
		{"CREATE MATERIALIZED VIEW per_page AS SELECT page FROM clicks", "42P07", -1, `relation "per_page" already exists`},
		{"CREATE MATERIALIZED VIEW o AS SELECT page, row_number() OVER (ORDER BY ms) AS rn FROM clicks", "0A000", -1, "ROW_NUMBER() in a materialized view needs an outer filter rn <= N (top-N)"},
		{"CREATE MATERIALIZED VIEW o AS SELECT page, lag(ms) OVER (ORDER BY ms) FROM clicks", "0A000", -1, "window function lag() is not supported in a materialized view yet; only row_number(), rank() and dense_rank() without a frame are"},
		{"CREATE MATERIALIZED VIEW w AS SELECT window_start, count(*) FROM TUMBLE(clicks, ms, INTERVAL '10' SECOND) GROUP BY window_start", "42804", -1, ""},
		{"DROP STREAM clicks", "2BP01", -1, "cannot drop stream clicks because other objects depend on it"},
		{"CREATE MATERIALIZED VIEW g AS SELECT page, ms, count(*) FROM clicks GROUP BY page", "42803", -1, ""},
		{"SELECT page, n, count(*) FROM per_page GROUP BY page", "42803", -1, ""},
		{"SELECT 1/0", "22012", 0, "division by zero"},
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		for _, c := range cases {
			ctx := testutil.Context(t, 30*time.Second)
			_, err := conn.Exec(ctx, c.sql, mode)
			pe := wantCode(t, err, c.code)
			if pe == nil {
				t.Logf("  (%v) %s", mode, c.sql)
				continue
			}
			if c.message != "" && pe.Message != c.message {
				t.Errorf("(%v) %s: message %q, want %q", mode, c.sql, pe.Message, c.message)
			}
			if c.position >= 0 && pe.Position != c.position {
				t.Errorf("(%v) %s: position %d, want %d", mode, c.sql, pe.Position, c.position)
			}
			if pe.Severity != "ERROR" {
				t.Errorf("(%v) %s: severity %q, want ERROR", mode, c.sql, pe.Severity)
			}
			// The session goes on after every error.
			var one int
			if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("after %q the session is broken: %v", c.sql, err)
			}
		}
	}
	// Nothing was created or dropped by the failed statements.
	if got := namedColumns(t, conn, "SHOW MATERIALIZED VIEWS", "name"); !slices.Equal(got, []string{"per_page"}) {
		t.Errorf("views after the failed statements: %q", got)
	}
	exec(t, conn, "INSERT INTO clicks VALUES (1, 'home', 5)")
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM per_page", "home 1")
}
