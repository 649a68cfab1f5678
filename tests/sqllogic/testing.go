package sqllogic

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// Run runs one .slt file against the server at dsn with the engine label
// "streamdb". Each statement, query or system record is a subtest named
// file.slt:LINE; a failed record reports expected against actual.
func Run(t *testing.T, dsn, path string) {
	t.Helper()
	RunWithOptions(t, dsn, path, Options{})
}

// RunWithOptions is Run with explicit options (e.g. Labels: ["postgres"]).
func RunWithOptions(t *testing.T, dsn, path string, opts Options) {
	t.Helper()
	recs, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(dsn, opts)
	defer r.Close()
	ctx := context.Background()
	for _, rec := range recs {
		if rec.Kind == KindHalt {
			t.Logf("%s: halt", rec.Loc())
			return
		}
		if !rec.IsTest() {
			if f := r.RunRecord(ctx, rec); f != nil {
				t.Error(f)
			}
			continue
		}
		if r.Skips(rec) {
			continue
		}
		name := fmt.Sprintf("%s:%d", filepath.Base(rec.File), rec.Line)
		ok := t.Run(name, func(t *testing.T) {
			if f := r.RunRecord(ctx, rec); f != nil {
				t.Error(f)
			}
		})
		if !ok && opts.FailFast {
			t.Fatalf("%s failed; stopping (FailFast)", rec.Loc())
		}
	}
}
