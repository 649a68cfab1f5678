package e2e

import (
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestReturningExtendedProtocol: INSERT, UPDATE and DELETE ... RETURNING
// through pgx's extended protocol (Parse/Describe/Bind/Execute, binary
// results, $n parameters in the statement) and its simple protocol: the
// statement describes its RETURNING columns, answers the written rows and
// keeps its command tag.
func TestReturningExtendedProtocol(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, `CREATE TABLE acct (id BIGINT PRIMARY KEY, owner TEXT NOT NULL, balance INT)`)
	ctx := testutil.Context(t, 60*time.Second)

	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		exec(t, conn, `DELETE FROM acct`)
		rows, err := conn.Query(ctx, `INSERT INTO acct VALUES ($1, $2, $3), ($4, $5, $6) RETURNING id, owner, balance * 2 AS twice`,
			mode, int64(1), "ann", 10, int64(2), "bob", nil)
		if err != nil {
			t.Fatalf("mode %v: INSERT: %v", mode, err)
		}
		fields := rows.FieldDescriptions()
		if len(fields) != 3 || fields[0].Name != "id" || fields[0].DataTypeOID != 20 ||
			fields[1].Name != "owner" || fields[1].DataTypeOID != 25 || fields[2].Name != "twice" || fields[2].DataTypeOID != 23 {
			t.Fatalf("mode %v: RowDescription %+v", mode, fields)
		}
		var got []string
		for rows.Next() {
			var id int64
			var owner string
			var twice *int32
			if err := rows.Scan(&id, &owner, &twice); err != nil || id < 1 {
				t.Fatalf("mode %v: scan: %v", mode, err)
			}
			tw := "NULL"
			if twice != nil {
				tw = strconv.Itoa(int(*twice))
			}
			got = append(got, owner+":"+tw)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		if tag := rows.CommandTag().String(); tag != "INSERT 0 2" {
			t.Errorf("mode %v: tag %q, want INSERT 0 2", mode, tag)
		}
		if len(got) != 2 || got[0] != "ann:20" || got[1] != "bob:NULL" {
			t.Errorf("mode %v: rows %v", mode, got)
		}

		var id int64
		var owner string
		var balance int32
		if err := conn.QueryRow(ctx, `UPDATE acct SET balance = balance + $1 WHERE id = $2 RETURNING *`, mode, 5, int64(1)).
			Scan(&id, &owner, &balance); err != nil || id != 1 || owner != "ann" || balance != 15 {
			t.Errorf("mode %v: UPDATE RETURNING *: %d %q %d, %v", mode, id, owner, balance, err)
		}
		if err := conn.QueryRow(ctx, `DELETE FROM acct WHERE owner = $1 RETURNING id`, mode, "bob").Scan(&id); err != nil || id != 2 {
			t.Errorf("mode %v: DELETE RETURNING: %d, %v", mode, id, err)
		}
		tag, err := conn.Exec(ctx, `DELETE FROM acct WHERE id > $1 RETURNING id`, mode, int64(100))
		if err != nil || tag.String() != "DELETE 0" {
			t.Errorf("mode %v: DELETE of nothing: %q, %v", mode, tag, err)
		}
	}
	wantRows(t, conn, "SELECT * FROM acct", "1 ann 15")

	// INSERT ... SELECT with parameters in the query, RETURNING the rows.
	var newID int64
	var owner string
	if err := conn.QueryRow(ctx, `INSERT INTO acct SELECT id + $1, owner || $2, balance FROM acct WHERE id = $3 RETURNING id, owner`,
		int64(100), "2", int64(1)).Scan(&newID, &owner); err != nil || newID != 101 || owner != "ann2" {
		t.Errorf("INSERT ... SELECT RETURNING: %d %q, %v", newID, owner, err)
	}
	exec(t, conn, `DELETE FROM acct WHERE id = 101`)

	// A parameter inside the RETURNING list (returning_params_test.go
	// compares more with PostgreSQL).
	var plus int64
	if err := conn.QueryRow(ctx, `INSERT INTO acct VALUES (9, 'x', 1) RETURNING id + $1`, int64(1)).Scan(&plus); err != nil || plus != 10 {
		t.Errorf("RETURNING id + $1: %d, %v", plus, err)
	}
	wantRows(t, conn, "SELECT count(*) FROM acct", "2")
}
