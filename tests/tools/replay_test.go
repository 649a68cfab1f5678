package tools

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// replaySchema is what both servers hold when the tools' queries replay:
// a table with a composite primary key and a NOT NULL column, a table
// without a key, and a view (materialized in streamdb, plain in
// PostgreSQL, where information_schema lists only those).
var replaySchema = []string{
	"CREATE TABLE metrics (time TIMESTAMP, host VARCHAR(40), value DOUBLE PRECISION NOT NULL, PRIMARY KEY (time, host))",
	"CREATE TABLE events (id BIGINT, payload TEXT, tags TEXT[], scores INT[])",
}

// replayStatement is one statement of a replay file; columnsOnly: its
// rows are not comparable between the servers ("-- compare: columns").
type replayStatement struct {
	sql         string
	columnsOnly bool
}

// replayStatements reads a file of testdata/replay: statements separated
// by blank lines, "--" comment lines dropped.
func replayStatements(t *testing.T, path string) []replayStatement {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []replayStatement
	for _, block := range strings.Split(string(b), "\n\n") {
		var lines []string
		columnsOnly := false
		for _, l := range strings.Split(block, "\n") {
			l2 := strings.TrimSpace(l)
			columnsOnly = columnsOnly || l2 == "-- compare: columns"
			if !strings.HasPrefix(l2, "--") {
				lines = append(lines, l)
			}
		}
		if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
			out = append(out, replayStatement{sql: s, columnsOnly: columnsOnly})
		}
	}
	return out
}

// replayAnswer is a statement's result columns and sorted rows, or its
// error.
func replayAnswer(conn *pgx.Conn, sql string) (cols, rows []string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rs, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	for _, f := range rs.FieldDescriptions() {
		cols = append(cols, f.Name)
	}
	for rs.Next() {
		var vals []string
		for _, v := range rs.RawValues() {
			if v == nil {
				vals = append(vals, "NULL")
			} else {
				vals = append(vals, string(v))
			}
		}
		rows = append(rows, strings.Join(vals, "|"))
	}
	slices.Sort(rows)
	return cols, rows, rs.Err()
}

// TestCatalogReplay sends the catalog queries that GUI tools send on
// connect and while browsing (each file of testdata/replay names the tool,
// version and source it was taken from) to streamdb and to PostgreSQL 15
// over the same schema: every query runs on streamdb and answers with
// PostgreSQL's columns and rows.
func TestCatalogReplay(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	sdb, pgc := srv.Conn(t), pg.Conn(t)
	for _, conn := range []*pgx.Conn{sdb, pgc} {
		for _, s := range replaySchema {
			if _, err := conn.Exec(context.Background(), s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	files, err := filepath.Glob("testdata/replay/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no replay files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".sql"), func(t *testing.T) {
			for _, st := range replayStatements(t, f) {
				q := st.sql
				short := strings.Join(strings.Fields(q), " ")
				if len(short) > 120 {
					short = short[:120] + "..."
				}
				wantCols, wantRows, err := replayAnswer(pgc, q)
				if err != nil {
					t.Fatalf("PostgreSQL refuses %s: %v", short, err)
				}
				gotCols, gotRows, err := replayAnswer(sdb, q)
				if err != nil {
					t.Errorf("%s: %v", short, err)
					continue
				}
				if st.columnsOnly {
					gotRows, wantRows = nil, nil
				}
				if !slices.Equal(gotCols, wantCols) || !slices.Equal(gotRows, wantRows) {
					t.Errorf("%s:\n streamdb %q %q\npostgres %q %q", short, gotCols, gotRows, wantCols, wantRows)
				}
			}
		})
	}
}
