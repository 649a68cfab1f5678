package e2e

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestReturningFromLargeWrites: UPDATE ... FROM and DELETE ... USING with
// RETURNING over tens of thousands of rows (several batches of a
// streaming commit, outside and inside a transaction block) answer each
// changed row once, paired with the row of the list it joined, with
// generated columns filled in.
func TestReturningFromLargeWrites(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, 5*time.Minute)
	const n = 30000
	exec(t, conn, `CREATE TABLE rf (k BIGINT PRIMARY KEY, v BIGINT NOT NULL, g BIGINT GENERATED ALWAYS AS (v * 2) STORED)`)
	exec(t, conn, `CREATE TABLE rf_list (sk BIGINT, w BIGINT)`)
	exec(t, conn, `INSERT INTO rf (k, v) SELECT g, 0 FROM generate_series(1, 30000) g`)
	// The list's w is 10 times its key; keys above n join nothing.
	exec(t, conn, `INSERT INTO rf_list SELECT g, g * 10 FROM generate_series(1, 40000) g`)

	// returned runs sql and gives its rows of four columns.
	returned := func(sql string) [][4]int64 {
		t.Helper()
		rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var out [][4]int64
		for rows.Next() {
			var r [4]int64
			if err := rows.Scan(&r[0], &r[1], &r[2], &r[3]); err != nil {
				t.Fatalf("%s: scan: %v", sql, err)
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return out
	}
	// check wants one row per key in 1..n, each (k, v, g, w) with w the
	// list's row for k and v, g as want says.
	check := func(what string, rows [][4]int64, want func(k int64) (v, g int64)) {
		t.Helper()
		seen := map[int64]bool{}
		for _, r := range rows {
			v, g := want(r[0])
			if r[0] < 1 || r[0] > n || seen[r[0]] || r[1] != v || r[2] != g || r[3] != r[0]*10 {
				t.Fatalf("%s answered %v (twice: %v), want (%d, %d, %d, %d)", what, r, seen[r[0]], r[0], v, g, r[0]*10)
			}
			seen[r[0]] = true
		}
		if len(rows) != n {
			t.Fatalf("%s answered %d rows, want %d", what, len(rows), n)
		}
	}

	upd := returned(`UPDATE rf SET v = s.w + 1 FROM rf_list s WHERE s.sk = rf.k RETURNING rf.k, rf.v, rf.g, s.w`)
	check("UPDATE ... FROM RETURNING", upd, func(k int64) (int64, int64) { return k*10 + 1, 2 * (k*10 + 1) })

	exec(t, conn, `BEGIN`)
	upd = returned(`UPDATE rf SET v = s.w + 2 FROM rf_list s WHERE s.sk = rf.k RETURNING rf.k, rf.v, rf.g, s.w`)
	check("UPDATE ... FROM RETURNING in a block", upd, func(k int64) (int64, int64) { return k*10 + 2, 2 * (k*10 + 2) })
	del := returned(`DELETE FROM rf USING rf_list s WHERE s.sk = rf.k RETURNING rf.k, rf.v, rf.g, s.w`)
	check("DELETE ... USING RETURNING in a block", del, func(k int64) (int64, int64) { return k*10 + 2, 2 * (k*10 + 2) })
	exec(t, conn, `ROLLBACK`)

	del = returned(`DELETE FROM rf USING rf_list s WHERE s.sk = rf.k RETURNING rf.k, rf.v, rf.g, s.w`)
	check("DELETE ... USING RETURNING", del, func(k int64) (int64, int64) { return k*10 + 1, 2 * (k*10 + 1) })
	var left int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM rf`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("after the DELETE the table holds %d rows (%v), want 0", left, err)
	}
}
