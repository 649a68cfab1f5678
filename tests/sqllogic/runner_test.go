package sqllogic

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

var pgLabels = Options{Labels: []string{"postgres"}}

// runScript runs an .slt script against dsn and returns its report.
func runScript(t *testing.T, dsn, script string, opts Options) *Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "case.slt")
	writeFile(t, path, script)
	r := NewRunner(dsn, opts)
	defer r.Close()
	rep, err := r.RunFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRunnerPostgres checks the runner against a real PostgreSQL: the
// directive file passes, and records that should fail do fail with a useful
// message.
func TestRunnerPostgres(t *testing.T) {
	pg := testutil.StartPostgres(t)
	dsn := pg.DSN()

	t.Run("all directives pass", func(t *testing.T) {
		r := NewRunner(dsn, pgLabels)
		defer r.Close()
		rep, err := r.RunFile(context.Background(), "testdata/runner/all.slt")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Failures {
			t.Error(f)
		}
		if rep.Ran < 40 || rep.Skipped != 3 {
			t.Errorf("ran %d records, skipped %d; want >= 40 and 3", rep.Ran, rep.Skipped)
		}
	})

	t.Run("RunWithOptions", func(t *testing.T) {
		// The same file through the testing.T entry point, on a fresh
		// database so that its CREATE TABLEs do not collide.
		conn := pg.Conn(t)
		if _, err := conn.Exec(context.Background(), "CREATE DATABASE second"); err != nil {
			t.Fatal(err)
		}
		RunWithOptions(t, strings.Replace(dsn, "/postgres?", "/second?", 1), "testdata/runner/all.slt", pgLabels)
	})

	cases := []struct {
		name, script string
		line         int      // line of the failing record
		want         []string // substrings of the failure
	}{
		{"wrong result", "query I\nSELECT 1\n----\n2\n", 1,
			[]string{"case.slt:1: query result mismatch", "-   2", "+   1", "[SQL] SELECT 1"}},
		{"extra row", "query I\nSELECT generate_series(1, 2)\n----\n1\n", 1, []string{"+   2"}},
		{"statement fails", "statement ok\nSELEC 1\n", 1, []string{"statement failed", "syntax error", "42601"}},
		{"statement succeeds", "statement error\nSELECT 1\n", 1, []string{"statement is expected to fail, but actually succeeded"}},
		{"query succeeds", "query error\nSELECT 1\n", 1, []string{"query is expected to fail, but actually succeeded"}},
		{"query fails", "query I\nSELECT * FROM nope\n----\n1\n", 1, []string{"query failed", `relation "nope" does not exist`}},
		{"wrong regex", "statement error permission denied\nSELECT * FROM nope\n", 1,
			[]string{"expected to fail with error", "(regex) permission denied", "42P01"}},
		{"wrong sqlstate", "statement error 42601\nSELECT * FROM nope\n", 1, []string{"(SQLSTATE) 42601", "SQLSTATE 42P01"}},
		{"wrong multiline", "statement error\nSELECT * FROM nope\n----\nsomething else\n\n\n", 1, []string{"(multiline) something else"}},
		{"wrong count", "statement ok\nCREATE TABLE c (x INT)\n\nstatement count 2\nINSERT INTO c VALUES (1)\n", 4,
			[]string{"expected to affect 2 rows, but actually 1"}},
		{"rowsort expects sorted results", "query I rowsort\nVALUES (1), (2)\n----\n2\n1\n", 1, []string{"query result mismatch"}},
		{"system fails", "system ok\nexit 3\n", 1, []string{"system command failed", "exit status 3"}},
		{"system stdout", "system ok\necho hi\n----\nho\n\n\n", 1, []string{"stdout mismatch", "+   hi"}},
		{"later record", "statement ok\nSELECT 1\n\n# c\n\nquery T\nSELECT 'a'\n----\nb\n", 6, []string{"case.slt:6:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := runScript(t, dsn, c.script, pgLabels)
			if len(rep.Failures) != 1 {
				t.Fatalf("got %d failures, want 1: %v", len(rep.Failures), rep.Failures)
			}
			f := rep.Failures[0]
			msg := f.Error()
			if f.Line != c.line {
				t.Errorf("failure at line %d, want %d", f.Line, c.line)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("failure %q does not contain %q", msg, w)
				}
			}
		})
	}

	t.Run("retry gives up", func(t *testing.T) {
		rep := runScript(t, dsn, `statement ok
CREATE SEQUENCE r

query I retry 3 backoff 1ms
SELECT nextval('r')
----
100

query I
SELECT currval('r')
----
3
`, pgLabels)
		if len(rep.Failures) != 1 || rep.Failures[0].Attempts != 3 || !strings.Contains(rep.Failures[0].Error(), "after 3 attempts") {
			t.Fatalf("failures = %v", rep.Failures)
		}
	})

	// Without the timeout pg_sleep(30) would succeed and the record would
	// not fail; the next record passing shows the runner reconnected.
	t.Run("timeout and reconnect", func(t *testing.T) {
		rep := runScript(t, dsn, "statement ok\nSELECT pg_sleep(30)\n\nquery I\nSELECT 1\n----\n1\n",
			Options{Labels: []string{"postgres"}, Timeout: 300 * time.Millisecond})
		if len(rep.Failures) != 1 || rep.Failures[0].Line != 1 {
			t.Fatalf("failures = %v", rep.Failures)
		}
	})

	t.Run("fail fast", func(t *testing.T) {
		script := "statement ok\nBAD\n\nstatement ok\nALSO BAD\n"
		if rep := runScript(t, dsn, script, pgLabels); len(rep.Failures) != 2 {
			t.Fatalf("without FailFast: %d failures", len(rep.Failures))
		}
		if rep := runScript(t, dsn, script, Options{Labels: []string{"postgres"}, FailFast: true}); len(rep.Failures) != 1 {
			t.Fatalf("with FailFast: %d failures", len(rep.Failures))
		}
	})

	t.Run("default label is streamdb", func(t *testing.T) {
		rep := runScript(t, dsn, "onlyif streamdb\nstatement ok\nBAD\n\nskipif streamdb\nstatement ok\nBAD\n", Options{})
		if len(rep.Failures) != 1 || rep.Failures[0].Line != 2 || rep.Skipped != 1 {
			t.Fatalf("report = %+v", rep)
		}
	})
}
