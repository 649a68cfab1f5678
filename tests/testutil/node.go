package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var nodeInstalls struct {
	mu   sync.Mutex
	done map[string]string // directory -> error ("" once installed)
}

// NodeSetup finds node and npm and installs the npm dependencies of the
// package in dir (npm ci from its package-lock.json, skipped when
// node_modules is already up to date and holds check, a package name),
// once per directory per test process. It returns the path of node.
func NodeSetup(t testing.TB, dir, check string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found on $PATH: install Node.js and npm (apt-get install -y nodejs npm)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("npm not found on $PATH: install it (apt-get install -y npm)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	nodeInstalls.mu.Lock()
	defer nodeInstalls.mu.Unlock()
	if nodeInstalls.done == nil {
		nodeInstalls.done = map[string]string{}
	}
	msg, ok := nodeInstalls.done[abs]
	if !ok {
		msg = npmInstall(abs, npm, check)
		nodeInstalls.done[abs] = msg
	}
	if msg != "" {
		t.Fatal(msg)
	}
	return node
}

func npmInstall(dir, npm, check string) string {
	if nodeModulesCurrent(dir, check) {
		return ""
	}
	args := []string{"ci", "--no-audit", "--no-fund"}
	if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err != nil {
		args[0] = "install"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "npm " + args[0] + " in " + dir + ": " + err.Error() + "\n" + string(out)
	}
	return ""
}

// nodeModulesCurrent reports whether dir's node_modules holds package
// check and was installed after the last change of package-lock.json (npm
// writes node_modules/.package-lock.json).
func nodeModulesCurrent(dir, check string) bool {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false
	}
	hidden, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", check, "package.json")); err != nil {
		return false
	}
	return !hidden.ModTime().Before(lock.ModTime())
}
