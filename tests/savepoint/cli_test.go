package savepoint

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestCLI: streamdb savepoint [--server DSN] create NAME | list | release
// NAME | rollback NAME does what the SQL statements do, with their errors
// as a non-zero exit.
func TestCLI(t *testing.T) {
	rng := seedFor(t)
	bin := testutil.BuildServer(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	cli := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		full := append([]string{"savepoint", "--server", srv.DSN()}, args...)
		out, err := exec.CommandContext(ctx, bin, full...).CombinedOutput()
		return string(out), err
	}
	mustCLI := func(args ...string) string {
		t.Helper()
		out, err := cli(args...)
		if err != nil {
			t.Fatalf("streamdb savepoint %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	failCLI := func(want string, args ...string) {
		t.Helper()
		out, err := cli(args...)
		if err == nil {
			t.Errorf("streamdb savepoint %s: succeeded, want failure\n%s", strings.Join(args, " "), out)
		} else if !strings.Contains(out, want) {
			t.Errorf("streamdb savepoint %s: output lacks %q:\n%s", strings.Join(args, " "), want, out)
		}
	}

	testutil.MustExec(t, conn, streamDDL("ev", "ev.cli"),
		"CREATE MATERIALIZED VIEW totals AS "+viewQueries()["totals"],
		"CREATE MATERIALIZED VIEW per_g AS "+viewQueries()["per_g"])
	b1 := genRows(rng, 1, 100)
	insert(t, conn, "ev", b1)
	testutil.MustExec(t, conn, "FLUSH")

	// A name that needs quoting: upper case and a space.
	const odd = "Before Deploy"
	if out := mustCLI("create", odd); !strings.Contains(out, "SAVEPOINT") {
		t.Errorf("create: output %q lacks the command tag", out)
	}
	mustCLI("create", "sp2")
	failCLI("42710", "create", "sp2")
	failCLI("already exists", "create", odd)
	out := mustCLI("list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "name") {
		t.Errorf("list: want a header and two savepoints, got:\n%s", out)
	}
	for _, n := range []string{odd, "sp2"} {
		if !strings.Contains(out, n) {
			t.Errorf("list lacks %q:\n%s", n, out)
		}
	}
	if got := savepointNames(t, conn); !slices.Equal([]string{odd, "sp2"}, got) {
		t.Errorf("SHOW SAVEPOINTS after the CLI created two: %q", got)
	}

	atSP := viewRows(t, conn, []string{"totals", "per_g"}, fmt.Sprintf(` AS OF SAVEPOINT "%s"`, odd))
	b2 := genRows(rng, 1000, 50)
	insert(t, conn, "ev", b2)
	testutil.MustExec(t, conn, "FLUSH", "ALTER SYSTEM PAUSE")
	if out := mustCLI("rollback", odd); !strings.Contains(out, "ROLLBACK") {
		t.Errorf("rollback: output %q lacks the command tag", out)
	}
	compareViews(t, "paused, after the CLI rollback", atSP, viewRows(t, conn, []string{"totals", "per_g"}, ""))
	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME", "FLUSH")
	want := map[string][]string{
		"totals": goAnswer("totals", append(append([]row(nil), b1...), b2...)),
		"per_g":  goAnswer("per_g", append(append([]row(nil), b1...), b2...)),
	}
	compareViews(t, "after the CLI rollback, RESUME and FLUSH", want, viewRows(t, conn, []string{"totals", "per_g"}, ""))

	failCLI("3B001", "rollback", "nosuch")
	mustCLI("release", "sp2")
	failCLI("3B001", "release", "sp2")
	mustCLI("release", odd)
	if got := savepointNames(t, conn); len(got) != 0 {
		t.Errorf("SHOW SAVEPOINTS after the CLI released both: %q", got)
	}
	if out := mustCLI("list"); strings.Contains(out, "sp2") || strings.Contains(out, odd) {
		t.Errorf("list after release:\n%s", out)
	}

	// Usage errors.
	failCLI("usage", "frobnicate", "x")
	failCLI("usage", "create")
	failCLI("usage", "create", "a", "b")
	failCLI("usage")
	// An unreachable server is an error, not a hang.
	raw, err := exec.Command(bin, "savepoint", "--server", fmt.Sprintf("postgres://streamdb@127.0.0.1:%d/streamdb?connect_timeout=5", testutil.FreePort(t)), "list").CombinedOutput()
	if err == nil {
		t.Errorf("list against no server succeeded:\n%s", raw)
	}
}
