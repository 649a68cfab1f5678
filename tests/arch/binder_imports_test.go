package arch

import (
	"os/exec"
	"strings"
	"testing"
)

// binderForbidden are the packages the binder (and its in-package tests)
// must not import: it reads the catalog and the session through its own
// interfaces (binder.Catalog, binder.Session), so that it binds without
// a server. A path matches the package and those under it.
var binderForbidden = []string{
	"streamdb/sql",
	"streamdb/pgwire",
	"streamdb/node",
	"streamdb/storage",
	"streamdb/broker",
	"streamdb/checkpoint",
	"streamdb/sink",
	"github.com/cockroachdb/pebble",
	"github.com/nats-io/nats.go",
}

// TestBinderImports: binder imports none of binderForbidden. Its external
// tests (package binder_test) may import sql, whose NewOfflineCatalog
// checks CREATE statements as the server does.
func TestBinderImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}}`, "streamdb/binder").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 || fields[0] != "streamdb/binder" {
		t.Fatalf("go list showed no streamdb/binder:\n%s", out)
	}
	for _, imp := range fields[1:] {
		for _, f := range binderForbidden {
			if imp == f || strings.HasPrefix(imp, f+"/") {
				t.Errorf("binder imports %s: it reads the catalog through binder.Catalog and the session through binder.Session", imp)
			}
		}
	}
}
