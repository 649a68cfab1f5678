package arch

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sqlFilesStillImporting is a ratchet within sqlStillImports: the only
// files of package sql that may import a package of sqlForbidden, which
// are the table write path (table_*.go, read_writes.go, write_path.go),
// ALTER TABLE ... ADD IDENTITY and the rows an ALTER TABLE checks
// (alter_table_rows.go), until meta holds them too; and the unit tests'
// fake node (session_fake_node_test.go), which stands in for the store
// and JetStream under that path. The test wants exactly this set, so
// that a file that stops importing them leaves the list and none comes
// in.
var sqlFilesStillImporting = []string{
	"alter_identity.go",
	"alter_table_rows.go",
	"read_writes.go",
	"session_fake_node_test.go",
	"table_unique.go",
	"write_path.go",
}

// TestSQLFilesImportsRatchet: the files of package sql (its tests
// included) that import a package of sqlForbidden are exactly
// sqlFilesStillImporting.
func TestSQLFilesImportsRatchet(t *testing.T) {
	dir := filepath.Join("..", "..", "sql")
	got := filesImporting(t, dir, true, forbiddenForSQL)
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if !slices.Contains(sqlFilesStillImporting, name) {
			t.Errorf("sql/%s imports %s: the frontend reaches storage, NATS, checkpoints, sinks and the node through meta; add what it needs to meta's typed APIs", name, got[name])
		}
	}
	if len(got) == 0 {
		t.Fatalf("no file of %s imports a forbidden package: is the directory right?", dir)
	}
	for _, name := range sqlFilesStillImporting {
		if _, ok := got[name]; !ok {
			t.Errorf("sql/%s no longer imports a forbidden package: remove it from sqlFilesStillImporting (tests/arch/sql_files_test.go) so that it stays out", name)
		}
	}
}

// filesImporting returns, by file name, the first import that match
// accepts of each Go file in dir (test files too when withTests).
func filesImporting(t *testing.T, dir string, withTests bool, match func(path string) bool) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || (!withTests && strings.HasSuffix(e.Name(), "_test.go")) {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); match(path) {
				got[e.Name()] = path
				break
			}
		}
	}
	return got
}
