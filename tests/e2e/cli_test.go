package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// runCLI runs the server binary with args in an empty directory and
// returns its stdout, stderr and exit code. A command that would start a
// server (and so not end) fails the test after 20 s; so does one that
// leaves a file behind (a data directory made in the working directory).
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, testutil.BuildServer(t), args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("streamdb %s did not exit within 20 s (did it start a server?); stderr:\n%s", strings.Join(args, " "), errOut.String())
	}
	var exit *osexec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("streamdb %s: %v", strings.Join(args, " "), err)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("streamdb %s left %s in its working directory", strings.Join(args, " "), left[0].Name())
	}
	return out.String(), errOut.String(), code
}

// TestCLIHelp checks that --help (and -h, help) lists every subcommand and
// the server's flags on stdout and exits 0 without flag's "help
// requested".
func TestCLIHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Errorf("streamdb %s: exit code %d, want 0; stderr: %s", args[0], code, errOut)
		}
		if strings.Contains(out+errOut, "help requested") {
			t.Errorf("streamdb %s printed flag's %q", args[0], "help requested")
		}
		for _, want := range []string{"streamdb savepoint", "streamdb nexmark", "streamdb version", "streamdb help", "-listen", "-data-dir", "-restore-from"} {
			if !strings.Contains(out, want) {
				t.Errorf("streamdb %s: stdout lacks %q:\n%s", args[0], want, out)
			}
		}
	}
	for _, sub := range []string{"savepoint", "nexmark"} {
		_, errOut, code := runCLI(t, sub, "--help")
		if code != 0 || strings.Contains(errOut, "help requested") {
			t.Errorf("streamdb %s --help: exit code %d, stderr:\n%s", sub, code, errOut)
		}
	}
}

// TestCLIVersion checks that `streamdb version` and `--version` print the
// version and commit and exit without starting a server.
func TestCLIVersion(t *testing.T) {
	line := regexp.MustCompile(`^streamdb \S+ \(commit \S+, go\S+ \S+/\S+\)\n$`)
	for _, arg := range []string{"version", "--version"} {
		out, errOut, code := runCLI(t, arg)
		if code != 0 || !line.MatchString(out) {
			t.Errorf("streamdb %s: exit code %d, stdout %q, stderr %q; want code 0 and a line like %q",
				arg, code, out, errOut, "streamdb v1.2.3 (commit 0123456789ab, go1.26.8 linux/amd64)")
		}
	}
}

// TestCLIUnknownCommand checks that a word that is no subcommand is
// refused (exit 2) rather than ignored by a server that then starts.
func TestCLIUnknownCommand(t *testing.T) {
	for _, args := range [][]string{{"versoin"}, {"--listen", "127.0.0.1:0", "stop"}, {"--no-such-flag"}} {
		_, errOut, code := runCLI(t, args...)
		if code != 2 || !strings.Contains(errOut, "streamdb --help") {
			t.Errorf("streamdb %s: exit code %d, stderr %q; want 2 and a pointer to streamdb --help", strings.Join(args, " "), code, errOut)
		}
	}
}
