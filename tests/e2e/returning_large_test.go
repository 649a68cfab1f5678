package e2e

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestReturningLargeWrites: INSERT ... SELECT, UPDATE and DELETE ...
// RETURNING over tens of thousands of rows (several batches of a
// streaming commit) answer every written row once, in the statement's
// order for INSERT ... SELECT, with generated columns filled in, and the
// table holds what they answered; a statement that fails late answers an
// error and leaves nothing.
func TestReturningLargeWrites(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, `CREATE TABLE rl (k BIGINT PRIMARY KEY, v BIGINT NOT NULL, g BIGINT GENERATED ALWAYS AS (v * 2) STORED)`)
	ctx := testutil.Context(t, 5*time.Minute)
	const n = 30000

	// returned runs sql and gives its (k, v, g) rows.
	returned := func(sql string) [][3]int64 {
		t.Helper()
		rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var out [][3]int64
		for rows.Next() {
			var r [3]int64
			if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
				t.Fatalf("%s: scan: %v", sql, err)
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return out
	}
	sums := func() [3]int64 {
		t.Helper()
		var s [3]int64
		if err := conn.QueryRow(ctx, `SELECT count(*), coalesce(sum(v), 0), coalesce(sum(g), 0) FROM rl`).Scan(&s[0], &s[1], &s[2]); err != nil {
			t.Fatal(err)
		}
		return s
	}

	ins := returned(`INSERT INTO rl (k, v) SELECT g, g FROM generate_series(1, 30000) g RETURNING k, v, g`)
	if len(ins) != n {
		t.Fatalf("INSERT ... SELECT RETURNING answered %d rows, want %d", len(ins), n)
	}
	for i, r := range ins {
		if k := int64(i + 1); r != [3]int64{k, k, 2 * k} {
			t.Fatalf("INSERT ... SELECT RETURNING row %d is %v, want %v", i, r, [3]int64{k, k, 2 * k})
		}
	}

	upd := returned(`UPDATE rl SET v = v + 1 WHERE v % 2 = 0 RETURNING k, v, g`)
	seen := map[int64]bool{}
	for _, r := range upd {
		if r[0]%2 != 0 || r[1] != r[0]+1 || r[2] != 2*r[1] || seen[r[0]] {
			t.Fatalf("UPDATE RETURNING answered %v (twice: %v)", r, seen[r[0]])
		}
		seen[r[0]] = true
	}
	if len(upd) != n/2 {
		t.Fatalf("UPDATE RETURNING answered %d rows, want %d", len(upd), n/2)
	}
	// Every v is now odd: 1, 3, 3, 5, 5, ...
	wantSum := int64(n*(n+1)/2 + n/2)
	if got := sums(); got != [3]int64{n, wantSum, 2 * wantSum} {
		t.Fatalf("after the UPDATE the table holds %v, want %v", got, [3]int64{n, wantSum, 2 * wantSum})
	}

	// A row late in the statement fails: its RETURNING rows so far may
	// have been answered, but nothing of it lands.
	if _, err := conn.Exec(ctx, `UPDATE rl SET v = CASE WHEN k = 29999 THEN v / (k - 29999) ELSE v END WHERE v > 0 RETURNING k, v, g`); err == nil {
		t.Fatal("an UPDATE dividing by zero on its last rows succeeded")
	}
	if got := sums(); got != [3]int64{n, wantSum, 2 * wantSum} {
		t.Fatalf("after a failed UPDATE the table holds %v, want %v", got, [3]int64{n, wantSum, 2 * wantSum})
	}

	del := returned(`DELETE FROM rl WHERE k % 3 = 0 RETURNING k, v, g`)
	var delSum int64
	for _, r := range del {
		if r[0]%3 != 0 || r[2] != 2*r[1] {
			t.Fatalf("DELETE RETURNING answered %v", r)
		}
		delSum += r[1]
	}
	if len(del) != n/3 {
		t.Fatalf("DELETE RETURNING answered %d rows, want %d", len(del), n/3)
	}
	if got := sums(); got != [3]int64{n - n/3, wantSum - delSum, 2 * (wantSum - delSum)} {
		t.Fatalf("after the DELETE the table holds %v, want %v", got, [3]int64{n - n/3, wantSum - delSum, 2 * (wantSum - delSum)})
	}
}
