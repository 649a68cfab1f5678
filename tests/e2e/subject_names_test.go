package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestSubjectNames: subjects that NATS reserves and malformed subjects are
// refused at CREATE STREAM and CREATE TABLE with 42602 or 22023 and a hint
// (issue 16, item 5), never XX000, and leave nothing behind; ordinary
// subjects still work.
func TestSubjectNames(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	run := func(sql string) error {
		_, err := conn.Exec(testutil.Context(t, time.Minute), sql, pgx.QueryExecModeSimpleProtocol)
		return err
	}
	reserved := []string{"$JS.API.STREAM.LIST", "$JS.>", "$SYS.REQ.SERVER.PING", "$KV.bucket.key", "$O.store.x",
		"$G", "$anything", "_INBOX.abc", "_INBOX"}
	malformed := []string{"", "a..b", ".a", "a.", ".", "a b", "a\tb", "a\nb", "a.*", "*", "a.>", ">", "a*b",
		"a\x01b", "a\x7fb", strings.Repeat("s", 256), strings.Repeat("ab.", 90)}
	i := 0
	for _, kind := range []string{"STREAM", "TABLE"} {
		for _, c := range []struct {
			subjects []string
			code     string
		}{{reserved, "42602"}, {malformed, "22023"}} {
			for _, subject := range c.subjects {
				if kind == "STREAM" && (subject == "a.*" || subject == "a.>") {
					continue // a stream reads a pattern (stream_patterns tests)
				}
				i++
				name := fmt.Sprintf("bad%d", i)
				cols := "(a INT, b TEXT)"
				if kind == "TABLE" {
					cols = "(a INT PRIMARY KEY, b TEXT)"
				}
				q := fmt.Sprintf("CREATE %s %s %s WITH (subject = '%s')", kind, name, cols, subject)
				what := fmt.Sprintf("CREATE %s with subject %q", kind, subject)
				err := run(q)
				if err == nil {
					t.Errorf("%s: succeeded", what)
					continue
				}
				pe := pgError(t, err)
				if pe.Code != c.code {
					t.Errorf("%s: SQLSTATE %s (%s), want %s", what, pe.Code, pe.Message, c.code)
				}
				if !strings.Contains(pe.Message, "subject") || pe.Hint == "" {
					t.Errorf("%s: message %q, hint %q: want both to say what to change", what, pe.Message, pe.Hint)
				}
				if err := run("SELECT * FROM " + name); err == nil {
					t.Errorf("%s failed but left %s behind", what, name)
				}
			}
		}
	}
	// A name that makes a malformed default subject: the hint says how to
	// give one.
	pe := wantCode(t, run(`CREATE STREAM "has space" (a INT)`), "22023")
	if pe != nil && !strings.Contains(pe.Hint, "subject =") {
		t.Errorf("default subject from a name with a space: hint %q does not say how to give a subject", pe.Hint)
	}

	// Valid subjects still work, and are read.
	exec(t, conn,
		"CREATE STREAM ok1 (a INT) WITH (subject = 'orders.eu-west_1.v2')",
		`CREATE STREAM "Ok2" (a INT)`,
		"CREATE STREAM ok3 (a INT) WITH (subject = 'ünïcode.sub')",
		"CREATE TABLE okt (a INT PRIMARY KEY, b TEXT) WITH (subject = 'my.table.log')",
		"CREATE MATERIALIZED VIEW okv AS SELECT count(*) AS n FROM ok1",
		"INSERT INTO ok1 VALUES (1), (2)",
		"INSERT INTO okt VALUES (1, 'x')")
	flush(t, conn)
	wantRows(t, conn, "SELECT n FROM okv", "2")
	wantRows(t, conn, "SELECT a, b FROM okt", "1 x")
}
