package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestCopySelfReference: COPY into a table whose foreign key references
// its own primary key checks the references at the end of the statement,
// as PostgreSQL does, across the batches of a streaming COPY: rows may
// reference rows after them (in a later batch), before them, themselves,
// or rows of the table; a reference to a key nobody inserts fails the
// COPY with 23503 and leaves none of it.
func TestCopySelfReference(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE node (id bigint PRIMARY KEY, parent bigint REFERENCES node, label text)")
	// rows writes the COPY text of ids from..to, each row's parent given
	// by parent(id) ("\N" for none).
	rows := func(from, to int, parent func(int) string) string {
		var b strings.Builder
		for id := from; id <= to; id++ {
			fmt.Fprintf(&b, "%d\t%s\tn%d\n", id, parent(id), id)
		}
		return b.String()
	}
	// Each row's parent is the next row; the last one is the first.
	next := rows(1, 20000, func(id int) string {
		if id == 20000 {
			return "1"
		}
		return fmt.Sprint(id + 1)
	})
	if tag, err := copyIn(t, conn, "COPY node FROM STDIN", next); err != nil || tag.String() != "COPY 20000" {
		t.Fatalf("COPY of rows referencing later rows: %q, %v", tag, err)
	}
	wantRows(t, conn, "SELECT count(*), sum(parent) FROM node", "20000 200010000")
	// Rows of a later COPY referencing the table's, themselves and each
	// other in both directions.
	mixed := rows(20001, 40000, func(id int) string {
		switch id % 4 {
		case 0:
			return fmt.Sprint(id - 20000)
		case 1:
			return fmt.Sprint(id)
		case 2:
			return fmt.Sprint(60001 - id)
		}
		return `\N`
	})
	if _, err := copyIn(t, conn, "COPY node FROM STDIN", mixed); err != nil {
		t.Fatalf("COPY of mixed references: %v", err)
	}
	wantRows(t, conn, "SELECT count(*), count(parent) FROM node", "40000 35000")
	// A parent nobody inserts, in the last batch: nothing of the COPY.
	missing := rows(40001, 60000, func(id int) string {
		if id == 59990 {
			return "99999"
		}
		return fmt.Sprint(id + 1)
	})
	_, err := copyIn(t, conn, "COPY node FROM STDIN", missing)
	if pe := wantCode(t, err, "23503"); pe != nil && !strings.Contains(pe.Detail, "Key (parent)=(99999) is not present") {
		t.Errorf("COPY with a missing parent: detail %q, want the missing key", pe.Detail)
	}
	wantRows(t, conn, "SELECT count(*), max(id) FROM node", "40000 40000")
}
