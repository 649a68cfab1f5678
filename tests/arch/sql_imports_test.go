package arch

import (
	"os/exec"
	"strings"
	"testing"
)

// sqlForbidden are the packages the frontend (sql and front, with
// their tests) must not import: what it needs of the state store, NATS,
// checkpoints, sinks and the node it reaches through meta's typed APIs
// (docs/design.md). A path matches the package and those under it
// (github.com/cockroachdb/pebble/v2, github.com/nats-io/nats.go/jetstream).
var sqlForbidden = []string{
	"streamdb/storage",
	"streamdb/storage/keyenc",
	"streamdb/broker",
	"streamdb/checkpoint",
	"streamdb/sink",
	"streamdb/node",
	"github.com/cockroachdb/pebble",
	"github.com/nats-io/nats.go",
}

func forbiddenForSQL(imp string) bool {
	for _, f := range sqlForbidden {
		if imp == f || strings.HasPrefix(imp, f+"/") {
			return true
		}
	}
	return false
}

// TestSQLImportsNoStorage: neither sql nor front imports a package of
// sqlForbidden, nor do front's tests. sql's tests are held by file
// (TestSQLFilesImports): only the unit tests' fake node, which stands
// in for the store and JetStream, may import them.
func TestSQLImportsNoStorage(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{if ne .ImportPath "streamdb/sql"}}{{join .TestImports " "}} {{join .XTestImports " "}}{{end}}`,
		"streamdb/sql", "streamdb/front").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := fields[0]
		seen[pkg] = true
		for _, imp := range fields[1:] {
			if forbiddenForSQL(imp) {
				t.Errorf("%s imports %s: the frontend reaches storage, NATS, checkpoints, sinks and the node through meta; add what it needs to meta's typed APIs", pkg, imp)
			}
		}
	}
	if !seen["streamdb/sql"] || !seen["streamdb/front"] {
		t.Fatalf("go list showed no streamdb/sql or streamdb/front:\n%s", out)
	}
}
