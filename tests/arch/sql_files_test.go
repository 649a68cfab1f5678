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

// sqlFilesImporting are the only files of package sql, its tests
// included, that may import a package of sqlForbidden: the unit tests'
// fake node (session_fake_node_test.go), which stands in for the store
// and JetStream under meta. Every other file, and every file that is
// not a test, reaches them through meta's typed APIs.
var sqlFilesImporting = []string{
	"session_fake_node_test.go",
}

// TestSQLFilesImports: the files of package sql (its tests included)
// that import a package of sqlForbidden are exactly sqlFilesImporting,
// all of them tests.
func TestSQLFilesImports(t *testing.T) {
	dir := filepath.Join("..", "..", "sql")
	got := filesImporting(t, dir, true, forbiddenForSQL)
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if !slices.Contains(sqlFilesImporting, name) {
			t.Errorf("sql/%s imports %s: the frontend reaches storage, NATS, checkpoints, sinks and the node through meta; add what it needs to meta's typed APIs", name, got[name])
		}
	}
	if len(got) == 0 {
		t.Fatalf("no file of %s imports a forbidden package, not even the fake node: is the directory right?", dir)
	}
	for _, name := range sqlFilesImporting {
		if !strings.HasSuffix(name, "_test.go") {
			t.Errorf("sqlFilesImporting lists sql/%s, which is not a test: only the unit tests' fakes may reach storage and NATS", name)
		}
		if _, ok := got[name]; !ok {
			t.Errorf("sql/%s no longer imports a forbidden package: remove it from sqlFilesImporting (tests/arch/sql_files_test.go) so that it stays out", name)
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
