package arch

import (
	"path/filepath"
	"slices"
	"testing"
)

// sqlFilesImportingPGCDC is a ratchet: the only files of package sql
// (tests included) that may import pgcdc, the PostgreSQL replication
// client. The sources run in meta (meta.PGSources); sql only builds a
// source's pgcdc.Endpoint from its secrets (pg_source_tls.go,
// secrets.go) for meta's PGSourceHost (pg_source_host.go). The test
// wants exactly this set.
var sqlFilesImportingPGCDC = []string{
	"pg_source_host.go",
	"pg_source_tls.go",
	"secrets.go",
}

// TestSQLFilesPGCDCRatchet: the files of package sql and front that
// import streamdb/pgcdc are exactly sqlFilesImportingPGCDC (of sql).
func TestSQLFilesPGCDCRatchet(t *testing.T) {
	isPGCDC := func(path string) bool { return path == "streamdb/pgcdc" }
	var got []string
	for _, pkg := range []string{"sql", "front"} {
		for name := range filesImporting(t, filepath.Join("..", "..", pkg), true, isPGCDC) {
			got = append(got, filepath.ToSlash(filepath.Join(pkg, name)))
			if pkg != "sql" || !slices.Contains(sqlFilesImportingPGCDC, name) {
				t.Errorf("%s/%s imports streamdb/pgcdc: PostgreSQL sources run in meta (meta.PGSources); reach them through it", pkg, name)
			}
		}
	}
	for _, name := range sqlFilesImportingPGCDC {
		if !slices.Contains(got, "sql/"+name) {
			t.Errorf("sql/%s no longer imports streamdb/pgcdc: remove it from sqlFilesImportingPGCDC (tests/arch/sql_pgcdc_test.go) so that it stays out", name)
		}
	}
}
