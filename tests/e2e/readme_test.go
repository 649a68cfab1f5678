package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/front"
	"streamdb/tests/testutil"
)

// readmeStep is one thing the README's reader does: a SQL statement typed
// into psql, or a message published with `nats pub`.
type readmeStep struct {
	line    int // line of README.md the step starts on
	sql     string
	subject string // nats pub: the subject and the message
	message string
}

// readmeSteps returns, in the order of README.md, every statement of its
// ```sql blocks and every `nats pub SUBJECT 'MESSAGE'` line of its ```sh
// blocks. Other shell lines (make, psql) are the reader's, not the
// test's. A `nats` line of another form fails: the test would otherwise
// skip a step the tour depends on.
func readmeSteps(t *testing.T, readme string) []readmeStep {
	t.Helper()
	var steps []readmeStep
	sc := bufio.NewScanner(strings.NewReader(readme))
	lang, start, n := "", 0, 0
	var block []string
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case lang == "" && strings.HasPrefix(line, "```"):
			lang, start, block = strings.TrimPrefix(line, "```"), n+1, nil
			if lang == "" {
				lang = "text"
			}
		case lang != "" && strings.HasPrefix(line, "```"):
			switch lang {
			case "sql":
				text := strings.Join(block, "\n")
				for _, p := range front.SplitPieces(text) {
					line := start + strings.Count(text[:p.Offset], "\n")
					steps = append(steps, readmeStep{line: line, sql: p.Text})
				}
			case "sh":
				for i, l := range block {
					f := strings.Fields(l)
					if len(f) == 0 || f[0] != "nats" {
						continue
					}
					rest, ok := strings.CutPrefix(strings.TrimSpace(l), "nats pub ")
					subject, msg, ok2 := strings.Cut(rest, " ")
					if !ok || !ok2 || len(msg) < 2 || msg[0] != '\'' || msg[len(msg)-1] != '\'' {
						t.Fatalf("README.md:%d: the test runs only `nats pub SUBJECT 'MESSAGE'`: %s", start+i, l)
					}
					steps = append(steps, readmeStep{line: start + i, subject: subject, message: msg[1 : len(msg)-1]})
				}
			}
			lang = ""
		case lang != "":
			block = append(block, line)
		}
	}
	if lang != "" {
		t.Fatalf("README.md:%d: code block not closed", start-1)
	}
	return steps
}

// TestReadmeTour runs the README's SQL blocks in order, top to bottom, in
// one session on a fresh server, as a reader following the tour in psql
// would, with its `nats pub` lines published in between. Any statement
// that fails fails the test, naming its README line: a block that drops
// what a later one uses breaks the tour.
func TestReadmeTour(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := readmeSteps(t, string(readme))
	var nsql, npub int
	for _, s := range steps {
		if s.sql != "" {
			nsql++
		} else {
			npub++
		}
	}
	// The tour has a stream, a view, a table and a published event; fewer
	// steps mean the extraction lost them.
	if nsql < 20 || npub < 1 {
		t.Fatalf("found %d SQL statements and %d nats pub lines in README.md; expected the tour's", nsql, npub)
	}

	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	for _, s := range steps {
		if s.subject != "" {
			testutil.Publish(t, js, s.subject, s.message)
			continue
		}
		if err := readmeExec(conn, s.sql); err != nil {
			t.Fatalf("README.md:%d: %s\n%v", s.line, testutil.OneLine(s.sql), err)
		}
	}
}

// readmeExec runs one statement as psql sends it and reads its whole
// result.
func readmeExec(conn *pgx.Conn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	results, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Err != nil {
			return r.Err
		}
	}
	if len(results) == 0 {
		return fmt.Errorf("no result")
	}
	return nil
}

// TestReadmeGoVersion: the Go release README.md's Install asks for is the
// one go.mod names.
func TestReadmeGoVersion(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var goLine string
	for _, l := range strings.Split(string(mod), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			goLine = strings.TrimSpace(v)
		}
	}
	if goLine == "" {
		t.Fatal("go.mod has no go line")
	}
	if want := "Needs Go " + goLine + " or newer"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q (go.mod has go %s)", want, goLine)
	}
}
