package sqllogic

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestSLTPostgres runs every testdata/pg/*.slt file twice: against its own
// fresh streamdb server, and against a database of its own in one real
// PostgreSQL 15, with the same expected results. These files hold the
// regressions whose expected rows come from PostgreSQL, so the oracle
// checks the file as well as the server. A record that only makes sense on
// one side says so with `onlyif streamdb` / `onlyif postgres` (FLUSH and
// SHOW STREAMS on streamdb; REFRESH MATERIALIZED VIEW on PostgreSQL).
// Run one file with: go test ./tests/sqllogic -run 'TestSLTPostgres/.*/isnull'
func TestSLTPostgres(t *testing.T) {
	files, err := filepath.Glob("testdata/pg/*.slt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .slt files under testdata/pg: they hold the regressions checked against PostgreSQL and must not go missing")
	}
	t.Run("streamdb", func(t *testing.T) {
		for _, f := range files {
			t.Run(sltName(f), func(t *testing.T) {
				t.Parallel()
				srv := testutil.StartServer(t, testutil.ServerOptions{})
				Run(t, srv.DSN(), f)
			})
		}
	})
	t.Run("postgres", func(t *testing.T) {
		pg := testutil.StartPostgres(t)
		admin := pg.Conn(t)
		for _, f := range files {
			name := sltName(f)
			db := "slt_" + strings.NewReplacer("-", "_", ".", "_").Replace(name)
			if _, err := admin.Exec(context.Background(), fmt.Sprintf("CREATE DATABASE %q", db)); err != nil {
				t.Fatalf("create database %s: %v", db, err)
			}
			dsn := strings.Replace(pg.DSN(), "/postgres?", "/"+db+"?", 1)
			t.Run(name, func(t *testing.T) {
				RunWithOptions(t, dsn, f, Options{Labels: []string{"postgres"}})
			})
		}
	})
}

func sltName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".slt")
}
