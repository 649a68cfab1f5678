// Package nodepg checks that node-postgres (the pg npm package), the most
// used Node.js driver, works against streamdb. test.js holds the checks;
// this test installs its dependencies and runs it.
package nodepg

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestNodePG runs test.js against a fresh streamdb server.
func TestNodePG(t *testing.T) {
	node := testutil.NodeSetup(t, ".", "pg")
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	runScript(t, node, srv.DSN(), "streamdb")
}

// TestNodePGPostgres runs the PostgreSQL-compatible part of test.js against
// a real PostgreSQL, which keeps the script itself honest.
func TestNodePGPostgres(t *testing.T) {
	node := testutil.NodeSetup(t, ".", "pg")
	pg := testutil.StartPostgres(t)
	runScript(t, node, pg.DSN(), "postgres")
}

func runScript(t *testing.T, node, dsn, engine string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "test.js")
	cmd.Env = append(os.Environ(), "STREAMDB_DSN="+dsn, "STREAMDB_ENGINE="+engine, "TZ=UTC")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node test.js against %s failed: %v\n%s", engine, err, out)
	}
	t.Logf("node test.js against %s:\n%s", engine, out)
}
