package arch

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMetaSeesNoStatements: meta, the catalog service, works on catalog
// objects and plain values; neither it, nor a package it imports, nor its
// tests may depend on the frontend (sql, front), the wire protocol
// (pgwire) or the TiDB parser and its AST.
func TestMetaSeesNoStatements(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "streamdb/meta").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := false
	for _, line := range strings.Split(string(out), "\n") {
		// Test builds list a package as "path [streamdb/meta.test]".
		pkg, _, _ := strings.Cut(line, " ")
		switch {
		case pkg == "streamdb/meta":
			seen = true
		case pkg == "streamdb/sql" || pkg == "streamdb/front" || pkg == "streamdb/pgwire":
			t.Errorf("meta (with its tests) depends on %s: sql calls meta, never the other way; pass meta plain values or functions", line)
		case strings.HasPrefix(pkg, "github.com/pingcap/tidb/"):
			t.Errorf("meta (with its tests) depends on the TiDB parser (%s): meta sees catalog objects, not statements", line)
		}
	}
	if !seen {
		t.Errorf("go list -deps -test showed no streamdb/meta:\n%s", out)
	}
}
