package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestCopyManyBatchesKeys compares with PostgreSQL 15 COPYs of tens of
// thousands of rows (several parts of the streaming commit) into a table
// with a UNIQUE constraint, a unique index and a foreign key: a COPY
// lands whole, and one whose bad row comes late (a UNIQUE value of an
// earlier part or of the table, a unique index value twice, a missing
// referenced key, a key violation before a failing CHECK in a later row)
// fails with PostgreSQL's SQLSTATE, message and detail and leaves nothing.
func TestCopyManyBatchesKeys(t *testing.T) {
	srv := startServer(t)
	conns := map[string]*pgx.Conn{"streamdb": srv.Conn(t), "PostgreSQL": testutil.StartPostgres(t).Conn(t)}
	for _, conn := range conns {
		exec(t, conn,
			"CREATE TABLE cbp (id int PRIMARY KEY)",
			"INSERT INTO cbp SELECT generate_series(0, 99)",
			"CREATE TABLE cbk (id bigint PRIMARY KEY, u bigint UNIQUE, x bigint, p int REFERENCES cbp, c int CHECK (c >= 0))",
			"CREATE UNIQUE INDEX cbk_x ON cbk (x)")
	}
	// rows renders ids from..to as COPY text with u = x = id, p = id %
	// 100, c = 1, calling edit for each line.
	rows := func(from, to int, edit func(id int) string) string {
		var b strings.Builder
		for id := from; id <= to; id++ {
			if line := edit(id); line != "" {
				b.WriteString(line)
				continue
			}
			fmt.Fprintf(&b, "%d\t%d\t%d\t%d\t1\n", id, id, id, id%100)
		}
		return b.String()
	}
	at := func(n int, line string) func(int) string {
		return func(id int) string {
			if id == n {
				return line
			}
			return ""
		}
	}
	plain := func(int) string { return "" }
	cases := []copyCase{
		{"lands whole", rows(1, 30000, plain), ""},
		{"a UNIQUE value of an earlier part", rows(40001, 70000, at(65000, "65000\t40100\t65000\t1\t1\n")), "23505"},
		{"a UNIQUE value the table has", rows(40001, 70000, at(69999, "69999\t777\t69999\t1\t1\n")), "23505"},
		{"a unique index value twice", rows(40001, 70000, at(52000, "52000\t52000\t41000\t1\t1\n")), "23505"},
		{"a missing referenced key", rows(40001, 70000, at(70000, "70000\t70000\t70000\t100\t1\n")), "23503"},
		{"a key violation before a failing CHECK", rows(40001, 70000, func(id int) string {
			switch id {
			case 50000:
				return "50000\t3\t50000\t1\t1\n"
			case 60000:
				return "60000\t60000\t60000\t1\t-1\n"
			}
			return ""
		}), "23505"},
		{"NULLs in the unique columns", rows(70001, 90000, func(id int) string {
			return fmt.Sprintf("%d\t\\N\t\\N\t\\N\t1\n", id)
		}), ""},
	}
	copyCasesMatchPostgres(t, conns, "COPY cbk FROM STDIN", cases)
	const sum = "SELECT count(*), sum(id), sum(u), sum(x), count(p) FROM cbk"
	wantRows(t, conns["streamdb"], sum, textRows(t, conns["PostgreSQL"], sum)...)
}

// TestStreamingInsertParentDelete runs a streaming INSERT ... SELECT of
// many rows into a referencing table while another session keeps trying
// to delete a row they reference: the referenced table stays locked until
// the insert is applied, so either the insert lands and every delete
// fails with 23503, or a delete lands first and the insert fails with
// 23503; never a row referencing a deleted one.
func TestStreamingInsertParentDelete(t *testing.T) {
	srv := startServer(t)
	a, b := srv.Conn(t), srv.Conn(t)
	exec(t, a,
		"CREATE TABLE rp (id int PRIMARY KEY)",
		"INSERT INTO rp SELECT generate_series(1, 100)",
		"CREATE TABLE rc (k int PRIMARY KEY, p int REFERENCES rp)")
	ctx := testutil.Context(t, 5*time.Minute)
	inserted := make(chan error, 1)
	go func() {
		_, err := a.Exec(ctx, "INSERT INTO rc SELECT g, g % 100 + 1 FROM generate_series(1, 60000) g")
		inserted <- err
	}()
	var insertErr error
	deleted := false
loop:
	for {
		select {
		case insertErr = <-inserted:
			break loop
		default:
		}
		_, err := b.Exec(ctx, "DELETE FROM rp WHERE id = 50")
		var pe *pgconn.PgError
		switch {
		case err == nil:
			deleted = true
			insertErr = <-inserted
			break loop
		case errors.As(err, &pe) && pe.Code == "23503":
		default:
			t.Fatalf("DELETE: %v", err)
		}
	}
	var pe *pgconn.PgError
	switch {
	case deleted && !(errors.As(insertErr, &pe) && pe.Code == "23503"):
		t.Fatalf("the referenced row was deleted, and the insert answered %v, want 23503", insertErr)
	case !deleted && insertErr != nil:
		t.Fatalf("insert: %v", insertErr)
	}
	t.Logf("deleted first: %v", deleted)
	wantRows(t, b, "SELECT count(*) FROM rc WHERE p NOT IN (SELECT id FROM rp)", "0")
	if deleted {
		wantRows(t, b, "SELECT count(*) FROM rc", "0")
	} else {
		wantRows(t, b, "SELECT count(*) FROM rc", "60000")
	}
}
