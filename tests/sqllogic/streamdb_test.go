package sqllogic

import (
	"path/filepath"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestSLT runs every testdata/streamdb/*.slt file against its own freshly
// started streamdb server (new data directory and embedded NATS each).
// Run one file with: go test ./tests/sqllogic -run 'TestSLT/basic'
func TestSLT(t *testing.T) {
	files, err := filepath.Glob("testdata/streamdb/*.slt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .slt files under testdata/streamdb: they are the server's acceptance tests and must not go missing")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".slt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := testutil.StartServer(t, testutil.ServerOptions{})
			Run(t, srv.DSN(), f)
		})
	}
}
