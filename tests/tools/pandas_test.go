package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestPandasToSQL: pandas' default DataFrame.to_sql creates the table,
// then CREATE INDEX on its index column, inserts, appends, and replaces
// (DROP TABLE with its index); the same script answers alike on
// PostgreSQL 15 and on streamdb.
func TestPandasToSQL(t *testing.T) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import pandas, sqlalchemy, psycopg2").Run() != nil {
		t.Fatal("no pandas for " + py + ": apt-get install -y python3-pandas python3-sqlalchemy python3-psycopg2")
	}
	run := func(dsn string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "pandas_to_sql.py"), dsn)
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pandas_to_sql.py on %s: %v\n%s", dsn, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	want := run(fmt.Sprintf("postgresql+psycopg2://postgres@127.0.0.1:%d/postgres", pg.Port))
	got := run(strings.Replace(srv.DSN(), "postgres://", "postgresql+psycopg2://", 1))
	if got != want {
		t.Errorf("pandas to_sql:\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	if !strings.Contains(got, "ix_pd_frame_index") {
		t.Errorf("to_sql made no index:\n%s", got)
	}
}
