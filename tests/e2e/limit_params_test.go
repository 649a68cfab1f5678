package e2e

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestLimitParameters: LIMIT and OFFSET bound through the extended
// protocol: a parameter described as bigint, an expression of
// parameters (each $n keeping its number wherever it stands), and a
// negative count (2201W).
func TestLimitParameters(t *testing.T) {
	srv := startServer(t)
	ctx := testutil.Context(t, 2*time.Minute)
	conn := srv.Conn(t)
	exec(t, conn, `CREATE TABLE t (a int)`, `INSERT INTO t VALUES (1), (2), (3), (4), (5)`)

	sd, err := conn.Prepare(ctx, "lim", `SELECT a FROM t ORDER BY a LIMIT $1`)
	if err != nil {
		t.Fatal(err)
	}
	if len(sd.ParamOIDs) != 1 || sd.ParamOIDs[0] != 20 {
		t.Errorf("LIMIT $1 is described as %v, want [20] (bigint)", sd.ParamOIDs)
	}
	ints := func(sql string, args ...any) []int {
		t.Helper()
		rows, err := conn.Query(ctx, sql, args...)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		defer rows.Close()
		var out []int
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return out
	}
	if got := ints("lim", 2); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("LIMIT $1 = 2: %v", got)
	}
	if got := ints(`SELECT a FROM t WHERE a <> $3 ORDER BY a LIMIT $1 * 2 OFFSET $2 - 1`, 2, 2, 1); len(got) != 3 || got[0] != 3 || got[2] != 5 {
		t.Errorf("LIMIT $1 * 2 OFFSET $2 - 1 with a <> $3: %v, want [3 4 5]", got)
	}
	rows, err := conn.Query(ctx, "lim", -1)
	if err == nil {
		rows.Close()
		err = rows.Err()
	}
	if pe, ok := err.(*pgconn.PgError); !ok || pe.Code != "2201W" {
		t.Errorf("LIMIT $1 = -1: %v, want 2201W", err)
	}
}
