package savepoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// escape names path (absolute) from inside the savepoints directory with
// "../" components, as the reproductions of issue 16 did.
func escape(path string) string {
	return strings.Repeat("../", 24) + strings.TrimPrefix(path, "/")
}

// quoteName double-quotes an identifier.
func quoteName(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// mustExist fails the test unless path exists.
func mustExist(t *testing.T, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("%s: %s is gone: %v", what, path, err)
	}
}

// pgMessage is the message of a server error, "" otherwise.
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return ""
}

// TestSavepointPathEscape: savepoint names are identifiers, never paths
// (issue 16, item 1). RELEASE, AS OF and ROLLBACK TO SAVEPOINT with "../"
// names reach nothing outside the savepoints directory, answers do not
// tell whether such a path exists, names starting with a dot are refused,
// RELEASE deletes only savepoints, and the startup cleanup of released
// savepoints touches only what the server renamed itself.
func TestSavepointPathEscape(t *testing.T) {
	rng := seedFor(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, streamDDL("ev", "ev.escape"),
		"CREATE MATERIALIZED VIEW totals AS "+viewQueries()["totals"])
	insert(t, conn, "ev", genRows(rng, 1, 50))
	testutil.MustExec(t, conn, "FLUSH", "SAVEPOINT sp")
	spRoot := filepath.Join(srv.DataDir, "savepoints")

	// Outside every directory of the server: a directory to protect and a
	// valid savepoint (a copy of sp) that must stay unreadable.
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(victim, "marker")
	if err := os.WriteFile(marker, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(outside, "foreign")
	testutil.CopyDir(t, filepath.Join(spRoot, "sp"), foreign)

	// AS OF SAVEPOINT read any checkpoint on the disk on main.
	_, err := rowsErr(conn, "SELECT * FROM totals AS OF SAVEPOINT "+quoteName(escape(foreign)))
	wantCode(t, err, "42602", "AS OF SAVEPOINT <path of a valid savepoint outside the server's directories>")
	// The answer is the same whether the path exists or not.
	_, errMissing := rowsErr(conn, "SELECT * FROM totals AS OF SAVEPOINT "+quoteName(escape(filepath.Join(outside, "nothing"))))
	_, errExisting := rowsErr(conn, "SELECT * FROM totals AS OF SAVEPOINT "+quoteName(escape(filepath.Join(outside, "victim"))))
	if pgCode(errMissing) != pgCode(errExisting) ||
		strings.Replace(pgMessage(errMissing), "nothing", "X", 1) != strings.Replace(pgMessage(errExisting), "victim", "X", 1) {
		t.Errorf("AS OF SAVEPOINT answers tell which paths exist outside the server:\n missing:  %v\n existing: %v", errMissing, errExisting)
	}
	for _, e := range []error{errMissing, errExisting} {
		if strings.Contains(pgMessage(e), "no such file") || strings.Contains(pgMessage(e), "_metadata") {
			t.Errorf("AS OF SAVEPOINT error reveals file system details: %v", e)
		}
	}

	// ROLLBACK TO SAVEPOINT rolled back to any checkpoint on the disk.
	testutil.MustExec(t, conn, "ALTER SYSTEM PAUSE")
	wantCode(t, testutil.ExecSimple(conn, time.Minute, "ROLLBACK TO SAVEPOINT "+quoteName(escape(foreign))), "42602",
		"ROLLBACK TO SAVEPOINT <path outside>")
	wantCode(t, testutil.ExecSimple(conn, time.Minute, "ROLLBACK TO SAVEPOINT "+quoteName(escape(filepath.Join(outside, "nothing")))), "42602",
		"ROLLBACK TO SAVEPOINT <missing path outside>")
	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME")

	// RELEASE SAVEPOINT "../../.../victim" deleted any directory on main.
	for _, name := range []string{escape(victim), escape(foreign), "../victim", "sp/../../savepoints/sp", "./sp"} {
		err := testutil.ExecSimple(conn, time.Minute, "RELEASE SAVEPOINT "+quoteName(name))
		wantCode(t, err, "42602", "RELEASE SAVEPOINT "+name)
	}
	mustExist(t, marker, "after RELEASE SAVEPOINT with ../ names")
	mustExist(t, filepath.Join(foreign, "_metadata.json"), "after RELEASE SAVEPOINT with ../ names")
	mustExist(t, filepath.Join(spRoot, "sp", "_metadata.json"), "after RELEASE SAVEPOINT sp/../../savepoints/sp")

	// Checkpoint ids are numbers only.
	for _, q := range []string{
		"ROLLBACK TO CHECKPOINT '" + escape(foreign) + "'",
		"ROLLBACK TO CHECKPOINT '1/../2'",
		"SELECT * FROM totals AS OF CHECKPOINT '" + escape(foreign) + "'",
	} {
		err := testutil.ExecSimple(conn, time.Minute, q)
		if code := pgCode(err); code != "22023" && code != "42601" {
			t.Errorf("%s: want 22023 (or a syntax error), got %q (%v)", q, code, err)
		}
	}

	// Names that are not identifiers, in every statement that takes one.
	// (A name over 63 bytes is cut to 63 by the parser, as every
	// identifier is; checkpoint.CheckSavepointName's length check
	// guards the CLI.)
	bad := []string{".", "..", ".hidden", ".released-x", "a/b", `a\b`, "a\x01b", "tab\there",
		escape(filepath.Join(outside, "new"))}
	for _, name := range bad {
		for _, q := range []string{"SAVEPOINT ", "RELEASE SAVEPOINT ", "ROLLBACK TO SAVEPOINT "} {
			err := testutil.ExecSimple(conn, time.Minute, q+quoteName(name))
			wantCode(t, err, "42602", fmt.Sprintf("%s%q", q, name))
			if err != nil && pgCode(err) == "42602" && !strings.Contains(pgMessage(err), "savepoint name") {
				t.Errorf("%s%q: message does not say what is wrong: %q", q, name, pgMessage(err))
			}
		}
		_, err := rowsErr(conn, "SELECT * FROM totals AS OF SAVEPOINT "+quoteName(name))
		wantCode(t, err, "42602", fmt.Sprintf("AS OF SAVEPOINT %q", name))
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Errorf("SAVEPOINT with a ../ name wrote %s", filepath.Join(outside, "new"))
	}
	if got := savepointNames(t, conn); !slices.Equal([]string{"sp"}, got) {
		t.Errorf("SHOW SAVEPOINTS: %q, want only sp", got)
	}
	if entries, _ := os.ReadDir(spRoot); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("savepoints directory holds %q, want only sp", names)
	}

	// RELEASE deletes savepoints only, not whatever else is in the
	// savepoints directory.
	notes := filepath.Join(spRoot, "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "todo"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantCode(t, testutil.ExecSimple(conn, time.Minute, "RELEASE SAVEPOINT notes"), "3B001", "RELEASE SAVEPOINT of a directory that is no savepoint")
	mustExist(t, filepath.Join(notes, "todo"), "RELEASE SAVEPOINT notes")

	// The startup cleanup of released savepoints deletes only what the
	// server renamed: not a .released-* directory someone else put there.
	planted := filepath.Join(spRoot, ".released-planted-1")
	if err := os.MkdirAll(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planted, "data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The CLI refuses such names too, and its RELEASE deletes nothing.
	bin := testutil.BuildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, action := range []string{"release", "rollback", "create"} {
		out, err := exec.CommandContext(ctx, bin, "savepoint", "--server", srv.DSN(), action, escape(victim)).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "42602") {
			t.Errorf("streamdb savepoint %s <../ name>: err %v, want a failure naming 42602:\n%s", action, err, out)
		}
	}
	mustExist(t, marker, "after streamdb savepoint release <../ name>")

	// A real RELEASE still works and leaves nothing behind.
	if err := testutil.ExecSimple(conn, time.Minute, "RELEASE SAVEPOINT sp"); err != nil {
		t.Errorf("RELEASE SAVEPOINT sp: %v", err)
	}
	if _, err := os.Stat(filepath.Join(spRoot, "sp")); !os.IsNotExist(err) {
		t.Errorf("RELEASE SAVEPOINT sp left its directory: %v", err)
	}
	srv.Restart(t)
	mustExist(t, filepath.Join(planted, "data"), "restart with a .released-* directory the server did not make")
	mustExist(t, filepath.Join(notes, "todo"), "restart")
	mustExist(t, marker, "restart")
	entries, _ := os.ReadDir(spRoot)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".released-sp-") {
			t.Errorf("the released savepoint sp is still on disk after a restart: %s", e.Name())
		}
	}
}

// TestPathSettingsNotFromSQL: a client cannot point state.checkpoints.dir
// or state.savepoints.dir elsewhere (issue 16: "Any client can run ALTER
// SYSTEM SET state.checkpoints.dir = '/some/other/dir'"); only the config
// file, the environment or flags choose directories.
func TestPathSettingsNotFromSQL(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	other := t.TempDir()
	before := map[string]string{}
	for _, key := range []string{"state.checkpoints.dir", "state.savepoints.dir", "ssl_cert_file", "ssl_key_file"} {
		before[key] = testutil.Scalar(t, conn, "SHOW "+key)
		for _, q := range []string{"ALTER SYSTEM SET " + key + " = '" + other + "'", "SET " + key + " = '" + other + "'"} {
			err := testutil.ExecSimple(conn, time.Minute, q)
			wantCode(t, err, "55P02", q)
			var pe *pgconn.PgError
			if errors.As(err, &pe) && !strings.Contains(pe.Hint, "--config") {
				t.Errorf("%s: hint %q does not point to the config file", q, pe.Hint)
			}
		}
		// Back to the default stays possible.
		testutil.MustExec(t, conn, "ALTER SYSTEM RESET "+key)
	}
	// Nor can a client turn the TLS requirement off.
	for _, q := range []string{"ALTER SYSTEM SET ssl_require_remote = false", "SET ssl_require_remote = true"} {
		wantCode(t, testutil.ExecSimple(conn, time.Minute, q), "55P02", q)
	}
	if data, err := os.ReadFile(filepath.Join(srv.DataDir, "streamdb.auto.yaml")); err == nil && strings.Contains(string(data), other) {
		t.Errorf("streamdb.auto.yaml holds the refused directory:\n%s", data)
	}
	srv.Restart(t)
	conn = srv.Conn(t)
	for key, was := range before {
		if got := testutil.Scalar(t, conn, "SHOW "+key); got != was {
			t.Errorf("%s after restart is %q, want %q", key, got, was)
		}
	}
	testutil.MustExec(t, conn, "CHECKPOINT", "SAVEPOINT p")
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("the server wrote to %s", other)
	}
}
