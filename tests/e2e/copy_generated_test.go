package e2e

import (
	"testing"
)

// TestCopyGeneratedColumns: as in PostgreSQL, COPY without a column list
// leaves a table's generated columns out in both directions, COPY FROM
// computes them, and a column list may not name one (42P10).
func TestCopyGeneratedColumns(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, `CREATE TABLE cg (a int PRIMARY KEY, doc jsonb, b bigint GENERATED ALWAYS AS ((doc->>'n')::bigint * a) STORED)`)
	if _, err := copyIn(t, conn, "COPY cg FROM STDIN", "1\t{\"n\": 5}\n2\t\\N\n"); err != nil {
		t.Fatalf("COPY cg FROM: %v", err)
	}
	if _, err := copyIn(t, conn, "COPY cg (doc, a) FROM STDIN", "{\"n\": 2}\t3\n"); err != nil {
		t.Fatalf("COPY cg (doc, a) FROM: %v", err)
	}
	wantRows(t, conn, "SELECT a, b FROM cg ORDER BY a", "1 5", "2 NULL", "3 6")
	if got, want := copyOut(t, conn, "COPY cg TO STDOUT"), "1\t{\"n\": 5}\n2\t\\N\n3\t{\"n\": 2}\n"; got != want {
		t.Errorf("COPY cg TO STDOUT = %q, want %q", got, want)
	}
	_, err := copyIn(t, conn, "COPY cg (a, b) FROM STDIN", "4\t8\n")
	wantCode(t, err, "42P10")
}
