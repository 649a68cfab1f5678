package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// catalogWrites are the storage calls that write catalog descriptors, the
// object id counter or the data directory's state format: functions of
// package storage, and methods of storage.Store.
var catalogWrites = map[string]bool{
	"PutDescriptor":    true,
	"DeleteDescriptor": true,
	"NextObjectID":     true,
	"RatchetFormat":    true,
}

// TestMetaWritesTheCatalog: meta is the only writer of the stored catalog.
// No package's non-test code but meta's (and storage's, which defines the
// records) calls the storage functions that write descriptors, hand out
// object ids or raise the directory's format; sql goes through
// meta.Catalog.
func TestMetaWritesTheCatalog(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", "streamdb/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 || parts[2] == "" {
			continue
		}
		pkg, dir := parts[0], parts[1]
		if pkg == "streamdb/meta" || pkg == "streamdb/storage" {
			continue
		}
		for _, name := range strings.Fields(parts[2]) {
			path := filepath.Join(dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !catalogWrites[sel.Sel.Name] {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name != "storage" && (sel.Sel.Name == "PutDescriptor" || sel.Sel.Name == "DeleteDescriptor") {
					return true // another package's function of that name
				}
				t.Errorf("%s (package %s) calls %s: the stored catalog is written by meta.Catalog (Create, Put, Replace, PutIn, ...) only", fset.Position(call.Pos()), pkg, sel.Sel.Name)
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatalf("go list showed no Go files:\n%s", out)
	}
}
