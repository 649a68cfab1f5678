package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// EnvArtifactDir names the directory where browser tests keep their
// screenshots; default tests/artifacts under the repository.
const EnvArtifactDir = "STREAMDB_ARTIFACT_DIR"

// Browser starts headless Chromium (Debian's chromium package) for one
// test and returns a context that drives its first tab, ended with the
// test. The browser starts here, so that callers may bound each later
// step with a timeout derived from the context (a timeout on the first
// use would bound the browser's whole life).
func Browser(t testing.TB) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found on $PATH: apt-get install -y chromium")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests run as root in CI containers
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// SaveArtifact writes data under the artifact directory as name and
// returns its path.
func SaveArtifact(t testing.TB, name string, data []byte) string {
	t.Helper()
	dir := os.Getenv(EnvArtifactDir)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "tests", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
