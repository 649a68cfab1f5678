package arch

import (
	"os/exec"
	"slices"
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

// sqlStillImports is a ratchet: the forbidden imports package sql still
// has (its own files or its tests), until meta holds what uses them. The
// test wants exactly this set, so that an import moved out must leave
// the list (and cannot come back) and no new one comes in.
var sqlStillImports = []string{
	"github.com/cockroachdb/pebble/v2",
	"github.com/nats-io/nats.go",
	"github.com/nats-io/nats.go/jetstream",
	"streamdb/broker",
	"streamdb/storage",
	"streamdb/storage/keyenc",
}

func forbiddenForSQL(imp string) bool {
	for _, f := range sqlForbidden {
		if imp == f || strings.HasPrefix(imp, f+"/") {
			return true
		}
	}
	return false
}

// TestSQLImportsRatchet: sql and front import no package of
// sqlForbidden beyond sqlStillImports, and sql still imports each one
// listed there.
func TestSQLImportsRatchet(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
		"streamdb/sql", "streamdb/front").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := fields[0]
		got[pkg] = map[string]bool{}
		for _, imp := range fields[1:] {
			if forbiddenForSQL(imp) {
				got[pkg][imp] = true
			}
		}
	}
	if got["streamdb/sql"] == nil || got["streamdb/front"] == nil {
		t.Fatalf("go list showed no streamdb/sql or streamdb/front:\n%s", out)
	}
	for _, f := range sqlStillImports {
		if !forbiddenForSQL(f) {
			t.Errorf("sqlStillImports lists %s, which sqlForbidden does not forbid", f)
		}
	}
	for pkg, imps := range got {
		for imp := range imps {
			if pkg == "streamdb/sql" && slices.Contains(sqlStillImports, imp) {
				continue
			}
			t.Errorf("%s imports %s: the frontend reaches storage, NATS, checkpoints, sinks and the node through meta; add what it needs to meta's typed APIs", pkg, imp)
		}
	}
	for _, imp := range sqlStillImports {
		if !got["streamdb/sql"][imp] {
			t.Errorf("sql no longer imports %s: remove it from sqlStillImports (tests/arch/sql_imports_test.go) so that it stays out", imp)
		}
	}
}
