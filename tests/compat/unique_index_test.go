package compat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/catalog"
	sdbexec "streamdb/exec"
	"streamdb/storage"
	"streamdb/tests/testutil"
)

// TestUniqueConstraintIndexBuiltAtStart: a data directory written before
// UNIQUE constraints had an index of their own (made here by taking the
// indexes and their entries out of a stopped server's directory) gets
// them built when the server starts, from the rows the tables hold: the
// constraints are checked by them, a foreign key referencing one finds
// its parent through them, and they are stored, entries and descriptor,
// for the next start.
func TestUniqueConstraintIndexBuiltAtStart(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	const rowsIn = 3000
	exec(t, conn,
		"CREATE TABLE up (id int PRIMARY KEY, u int UNIQUE, v text)",
		fmt.Sprintf("INSERT INTO up SELECT i, i * 2, 'v' || i FROM generate_series(1, %d) i", rowsIn),
		"INSERT INTO up VALUES (0, NULL, 'null')",
		"CREATE TABLE unopk (a int UNIQUE, b int)",
		"INSERT INTO unopk VALUES (1, 1), (2, 2), (NULL, 3), (NULL, 3)",
		"CREATE TABLE uchild (id int PRIMARY KEY, pu int REFERENCES up (u))",
		"INSERT INTO uchild VALUES (1, 2), (2, 4)")
	srv.Stop(t)

	for _, name := range []string{"up", "unopk"} {
		dropConstraintIndexes(t, srv.DataDir, name)
	}
	srv.Restart(t)
	conn = srv.Conn(t)

	wantCode(t, conn, "INSERT INTO up VALUES (9999, 14, 'dup')", "23505", "Key (u)=(14) already exists.")
	wantCode(t, conn, "UPDATE up SET u = 2 WHERE id = 3", "23505", "Key (u)=(2) already exists.")
	wantCode(t, conn, "INSERT INTO unopk VALUES (2, 9)", "23505", "Key (a)=(2) already exists.")
	wantCode(t, conn, "INSERT INTO uchild VALUES (3, 7)", "23503", `Key (pu)=(7) is not present in table "up".`)
	wantCode(t, conn, "DELETE FROM up WHERE u = 4", "23503", `Key (u)=(4) is still referenced from table "uchild".`)
	exec(t, conn,
		"INSERT INTO up VALUES (9999, NULL, 'another null')",
		"INSERT INTO unopk VALUES (NULL, 4), (3, 3)",
		fmt.Sprintf("INSERT INTO uchild VALUES (3, %d)", rowsIn*2),
		"UPDATE up SET u = 1 WHERE id = 10")
	plan := strings.Join(rows(t, conn, "EXPLAIN SELECT * FROM up WHERE u = 10"), "\n")
	if !strings.Contains(plan, "Index Scan using up_u_key") {
		t.Errorf("a lookup by the UNIQUE column does not read its index:\n%s", plan)
	}
	if got := rows(t, conn, "SELECT id, v FROM up WHERE u = 10"); len(got) != 1 || got[0] != "5|v5" {
		t.Errorf("SELECT by the UNIQUE column: got %v, want [5|v5]", got)
	}
	srv.Stop(t)

	// Stored: the next start builds nothing, and the entries are there,
	// one per stored row (NULLs included; unopk's two equal rows are one
	// stored twice), the rows written since counted.
	st, descs := openCatalog(t, srv.DataDir)
	defer st.Close()
	want := map[string]int{"up": rowsIn + 2, "unopk": 5}
	for _, d := range descs {
		n, ok := want[d.Name]
		if !ok {
			continue
		}
		ix := constraintIndex(d)
		if ix == nil {
			t.Errorf("table %s has no index for its UNIQUE constraint after a start: %+v", d.Name, d.Indexes)
			continue
		}
		if got := countKeys(t, st, sdbexec.IndexPrefix(d.ID, ix)); got != n {
			t.Errorf("index %s of %s holds %d entries, want %d (one per stored row)", ix.Name, d.Name, got, n)
		}
	}
}

// dropConstraintIndexes takes the UNIQUE constraints' indexes of table
// name, and their entries, out of a stopped server's data directory, as
// an older streamdb stored it.
func dropConstraintIndexes(t *testing.T, dataDir, name string) {
	t.Helper()
	var dropped []catalog.Index
	var id uint32
	editDescriptor(t, dataDir, name, func(d *catalog.Descriptor) {
		id = d.ID
		var keep []catalog.Index
		for _, ix := range d.Indexes {
			if ix.Constraint {
				dropped = append(dropped, ix)
			} else {
				keep = append(keep, ix)
			}
		}
		d.Indexes = keep
	})
	if len(dropped) == 0 {
		t.Fatalf("table %s has no UNIQUE constraint index to take out", name)
	}
	st, _ := openCatalog(t, dataDir)
	defer st.Close()
	b := st.NewBatch()
	defer b.Close()
	for i := range dropped {
		p := sdbexec.IndexPrefix(id, &dropped[i])
		if err := b.DeleteRange(p, storage.PrefixEnd(p), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Commit(b, true); err != nil {
		t.Fatal(err)
	}
}

func constraintIndex(d *catalog.Descriptor) *catalog.Index {
	for i := range d.Indexes {
		if d.Indexes[i].Constraint {
			return &d.Indexes[i]
		}
	}
	return nil
}

func countKeys(t *testing.T, st *storage.Store, prefix []byte) int {
	t.Helper()
	n := 0
	if err := storage.ScanPrefix(st.DB(), prefix, func(_, _ []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantCode runs q and wants it to fail with SQLSTATE code and detail.
func wantCode(t *testing.T, conn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}, q, code, detail string) {
	t.Helper()
	_, err := conn.Exec(context.Background(), q)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code || pe.Detail != detail {
		t.Errorf("%s: got %v, want SQLSTATE %s with detail %q", q, err, code, detail)
	}
}
