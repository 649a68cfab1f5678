package arch

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// TestSQLFilesPGCDCRatchet: the files of package sql and sql/front that
// import streamdb/pgcdc are exactly sqlFilesImportingPGCDC (of sql).
func TestSQLFilesPGCDCRatchet(t *testing.T) {
	var got []string
	fset := token.NewFileSet()
	for _, pkg := range []string{"sql", filepath.Join("sql", "front")} {
		dir := filepath.Join("..", "..", pkg)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); path != "streamdb/pgcdc" {
					continue
				}
				name := filepath.ToSlash(filepath.Join(pkg, e.Name()))
				got = append(got, name)
				if pkg != "sql" || !slices.Contains(sqlFilesImportingPGCDC, e.Name()) {
					t.Errorf("%s imports streamdb/pgcdc: PostgreSQL sources run in meta (meta.PGSources); reach them through it", name)
				}
			}
		}
	}
	for _, name := range sqlFilesImportingPGCDC {
		if !slices.Contains(got, "sql/"+name) {
			t.Errorf("sql/%s no longer imports streamdb/pgcdc: remove it from sqlFilesImportingPGCDC (tests/arch/sql_pgcdc_test.go) so that it stays out", name)
		}
	}
}
