package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// EnvServerBinary names an environment variable that, when set, holds the
// path of a prebuilt streamdb binary; BuildServer then uses it as is.
const EnvServerBinary = "STREAMDB_BIN"

// EnvBuildFlags names an environment variable holding extra `go build` flags
// (space separated) for BuildServer, e.g. "-race".
const EnvBuildFlags = "STREAMDB_BUILD_FLAGS"

var build struct {
	once sync.Once
	path string
	err  error
}

// BuildServer returns the path of a streamdb binary. It honours
// $STREAMDB_BIN; otherwise it runs `go build ./cmd/streamdb` from the
// repository root once per test process (later calls reuse the result) into
// a temporary directory that lives as long as the process.
func BuildServer(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		build.path, build.err = buildServer()
	})
	if build.err != nil {
		t.Fatalf("testutil: building streamdb: %v", build.err)
	}
	return build.path
}

func buildServer() (string, error) {
	if p := os.Getenv(EnvServerBinary); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("$%s: %w", EnvServerBinary, err)
		}
		return abs, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	removeStaleBinDirs()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", binDirPrefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "streamdb")
	args := []string{"build", "-o", out}
	args = append(args, strings.Fields(os.Getenv(EnvBuildFlags))...)
	args = append(args, "./cmd/streamdb")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return out, nil
}

// binDirPrefix starts the names of the temporary directories that hold
// built binaries: streamdb-bin-<pid>-<random>.
const binDirPrefix = "streamdb-bin-"

// removeStaleBinDirs deletes binary directories of test processes that have
// exited, since a test process cannot remove its own when it ends.
func removeStaleBinDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), binDirPrefix+"*"))
	for _, d := range dirs {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(d), binDirPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}

// RepoRoot returns the directory holding the streamdb go.mod, found by
// walking up from the current working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && isStreamdbModule(data) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of module streamdb above the working directory")
		}
		dir = parent
	}
}

func isStreamdbModule(gomod []byte) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			return f[1] == "streamdb"
		}
	}
	return false
}
