package arch

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"
)

// sqlFilesReachingPgcatalog is a ratchet: the only files of package sql
// that import pgcatalog or pgcatalog/rewrite, the hooks through which sql
// reaches the pg_catalog emulation: the names sql uses of it
// (pgcatalog.go), the adapter of pgcatalog.Engine (pgcatalog_engine.go),
// the describe queries' prepare (pgcatalog_psql.go), the adapter of
// rewrite.Session (pgcatalog_session.go) and the lookup of system tables
// (pgcatalog_tables.go). Catalog answers go into those packages, not
// into more of sql; the test wants exactly this set, so a file that
// stops importing them leaves the list and none comes in.
var sqlFilesReachingPgcatalog = []string{
	"pgcatalog.go",
	"pgcatalog_engine.go",
	"pgcatalog_psql.go",
	"pgcatalog_session.go",
	"pgcatalog_tables.go",
}

// TestSQLFilesPgcatalogRatchet: the non-test files of package sql that
// import pgcatalog or pgcatalog/rewrite are exactly
// sqlFilesReachingPgcatalog.
func TestSQLFilesPgcatalogRatchet(t *testing.T) {
	dir := filepath.Join("..", "..", "sql")
	got := filesImporting(t, dir, false, func(path string) bool {
		return path == "streamdb/pgcatalog" || path == "streamdb/pgcatalog/rewrite"
	})
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if !slices.Contains(sqlFilesReachingPgcatalog, name) {
			t.Errorf("sql/%s imports %s: pg_catalog's relations and function answers belong in pgcatalog (or pgcatalog/rewrite), read through their interfaces; sql reaches them only from the files of sqlFilesReachingPgcatalog", name, got[name])
		}
	}
	if len(got) == 0 {
		t.Fatalf("no file of %s imports pgcatalog: is the directory right?", dir)
	}
	for _, name := range sqlFilesReachingPgcatalog {
		if _, ok := got[name]; !ok {
			t.Errorf("sql/%s no longer imports pgcatalog: remove it from sqlFilesReachingPgcatalog (tests/arch/sql_pgcatalog_test.go) so that it stays out", name)
		}
	}
}
