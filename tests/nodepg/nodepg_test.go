// Package nodepg checks that node-postgres (the pg npm package), the most
// used Node.js driver, works against streamdb. test.js holds the checks;
// this test installs its dependencies and runs it.
package nodepg

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestNodePG runs test.js against a fresh streamdb server.
func TestNodePG(t *testing.T) {
	node := nodeSetup(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	runScript(t, node, srv.DSN(), "streamdb")
}

// TestNodePGPostgres runs the PostgreSQL-compatible part of test.js against
// a real PostgreSQL, which keeps the script itself honest.
func TestNodePGPostgres(t *testing.T) {
	node := nodeSetup(t)
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

var install struct {
	once sync.Once
	node string
	err  string
}

// nodeSetup finds node and npm and installs the script's dependencies once
// per test process (npm ci from package-lock.json, skipped when
// node_modules is already up to date). It returns the path of node.
func nodeSetup(t *testing.T) string {
	t.Helper()
	install.once.Do(func() {
		node, err := exec.LookPath("node")
		if err != nil {
			install.err = "node not found on $PATH: install Node.js and npm (apt-get install -y nodejs npm)"
			return
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			install.err = "npm not found on $PATH: install it (apt-get install -y npm)"
			return
		}
		install.node = node
		if upToDate() {
			return
		}
		args := []string{"ci", "--no-audit", "--no-fund"}
		if _, err := os.Stat("package-lock.json"); err != nil {
			args[0] = "install"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput(); err != nil {
			install.err = "npm " + args[0] + ": " + err.Error() + "\n" + string(out)
		}
	})
	if install.err != "" {
		t.Fatal(install.err)
	}
	return install.node
}

// upToDate reports whether node_modules holds pg and was installed after
// the last change of package-lock.json (npm writes node_modules/.package-lock.json).
func upToDate() bool {
	lock, err := os.Stat("package-lock.json")
	if err != nil {
		return false
	}
	hidden, err := os.Stat(filepath.Join("node_modules", ".package-lock.json"))
	if err != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join("node_modules", "pg", "package.json")); err != nil {
		return false
	}
	return !hidden.ModTime().Before(lock.ModTime())
}
