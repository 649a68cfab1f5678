package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// textInsertCase is one way a client writes text PostgreSQL cannot hold
// (invalid UTF-8, NUL): as a literal or as a parameter. refusedOnly: the
// SQLSTATE is the front layer's to match (PostgreSQL refuses the literal
// while parsing, 42601); here it must be refused and nothing stored.
type textInsertCase struct {
	sql         string // %s is the table or stream
	args        []any
	refusedOnly bool
}

var textInsertCases = []textInsertCase{
	{sql: `INSERT INTO %s VALUES (1, E'\xff')`},
	{sql: `INSERT INTO %s VALUES (1, E'a\xe2\x28\xa1')`},
	{sql: `INSERT INTO %s VALUES (1, $1)`, args: []any{"bad\xffbyte"}},
	{sql: `INSERT INTO %s VALUES (1, $1)`, args: []any{"nul\x00byte"}},
	{sql: `INSERT INTO %s VALUES (1, $1::text)`, args: []any{"\xc3"}},
	{sql: `INSERT INTO %s VALUES (1, $1 || 'x')`, args: []any{"\x00"}},
	{sql: `INSERT INTO %s VALUES (1, E'\u0000')`, refusedOnly: true},
	{sql: `INSERT INTO %s VALUES (1, U&'\0000')`, refusedOnly: true},
}

// execCode runs sql with args (extended protocol when there are any) and
// returns its SQLSTATE, "" when it succeeds.
func execCode(t *testing.T, conn *pgx.Conn, sql string, args ...any) string {
	t.Helper()
	ctx := testutil.Context(t, 30*time.Second)
	var err error
	if len(args) == 0 {
		_, err = conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	} else {
		_, err = conn.Exec(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
	}
	if err == nil {
		return ""
	}
	return pgError(t, err).Code
}

// TestInvalidTextRefusedAtInsert: text with invalid UTF-8 or a NUL is
// refused with PostgreSQL's SQLSTATE whether it goes into a table or a
// stream, as a literal or as a parameter; nothing of it is stored.
func TestInvalidTextRefusedAtInsert(t *testing.T) {
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, pg, "CREATE TABLE t (id int, s text)")
	exec(t, conn, "CREATE TABLE t (id int, s text)", "CREATE STREAM s (id int, s text)",
		"CREATE MATERIALIZED VIEW sv AS SELECT id, s FROM s")
	for _, c := range textInsertCases {
		want := execCode(t, pg, fmt.Sprintf(c.sql, "t"), c.args...)
		if want == "" {
			t.Fatalf("PostgreSQL accepts %s %q", c.sql, c.args)
		}
		for _, target := range []string{"t", "s"} {
			sql := fmt.Sprintf(c.sql, target)
			got := execCode(t, conn, sql, c.args...)
			if got != want && !(c.refusedOnly && got != "") {
				t.Errorf("%s %q: SQLSTATE %q, PostgreSQL gives %s", sql, c.args, got, want)
			}
		}
	}
	flush(t, conn)
	wantRows(t, conn, "SELECT count(*) FROM t", "0")
	wantRows(t, conn, "SELECT count(*) FROM sv", "0")
	wantRows(t, conn, "SELECT 1", "1")
}

// TestStreamInvalidText: a stream message that PostgreSQL's jsonb input
// refuses (invalid UTF-8, an unpaired surrogate escape or \u0000, in any
// field) never reaches a view. Each view skips
// it as a malformed message and lists it in streamdb_view_errors with the
// stream, its JetStream sequence and PostgreSQL's SQLSTATE and message for
// the same JSON, also a view that does not read that field (the views of
// a stream see the same messages); a view WITH (on_error = 'fail') stops
// at the first one, and its hint names the position after it.
func TestStreamInvalidText(t *testing.T) {
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM s (id BIGINT, name TEXT, tag VARCHAR(8))",
		"CREATE MATERIALIZED VIEW names AS SELECT id, name, tag FROM s",
		"CREATE MATERIALIZED VIEW ids AS SELECT id FROM s",
		"CREATE MATERIALIZED VIEW strict WITH (on_error = 'fail') AS SELECT id, name FROM s")
	msgs := []string{
		`{"id": 1, "name": "ok"}`,
		"{\"id\": 2, \"name\": \"bad \xff byte\"}",
		`{"id": 3, "name": "nul \u0000 escape"}`,
		`{"id": 4, "tag": "\ud800"}`,
		`{"id": 5, "name": "caf\u00e9 \ud83d\ude00", "tag": "é"}`,
		"{\"id\": 6, \"other\": \"\xff\", \"name\": \"x\"}",
		"{\"id\": 7, \"name\": \"cut \xe2\x28\xa1\"}",
		`{"id": 8, "other": "\u0000"}`,
		`{"id": 9, "other": {"deep": ["\udc00"]}}`,
		`{"id": 10, "tag": "\ud83d\ud83d"}`,
	}
	// What PostgreSQL says about each message read as jsonb, its fields
	// as text: nothing when it reads them.
	var want, kept []string
	firstBad := ""
	for i, m := range msgs {
		err := queryErr(t, pg, `SELECT $1::jsonb ->> 'id', $1::jsonb ->> 'name', $1::jsonb ->> 'tag'`, m)
		if err == nil {
			kept = append(kept, fmt.Sprint(i+1))
			continue
		}
		pe := pgError(t, err)
		msg := pe.Message
		if pe.Detail != "" {
			msg += ": " + strings.TrimSuffix(pe.Detail, ".")
		}
		row := fmt.Sprintf("%d %s %s", i+1, pe.Code, msg)
		want = append(want, row)
		if firstBad == "" {
			firstBad = row
		}
	}
	_, js := testutil.JetStream(t, srv.NATSURL())
	testutil.Publish(t, js, "s", msgs...)
	exec(t, conn, "FLUSH")
	wantRows(t, conn, "SELECT id FROM ids ORDER BY id", kept...)
	wantRows(t, conn, "SELECT id, name, tag FROM names ORDER BY id", "1 ok NULL", "5 café 😀 é")
	if got, n := showStream(t, conn, "s")["skipped_messages"], len(want); got != fmt.Sprint(n) {
		t.Errorf("SHOW STREAMS skipped_messages = %s, want %d", got, n)
	}
	// Our error names the field; the rest is PostgreSQL's message.
	for _, view := range []string{"names", "ids"} {
		if got := sourceErrors(t, conn, view); !slices.Equal(got, want) {
			t.Errorf("view %s lists\n%q\nwant\n%q", view, got, want)
		}
		wantRows(t, conn, "SELECT DISTINCT failed_rows FROM streamdb_view_errors WHERE view = '"+view+"'", fmt.Sprint(len(want)))
	}
	if got := sourceErrors(t, conn, "strict"); !slices.Equal(got, []string{firstBad}) {
		t.Errorf("view strict lists %q, want %q", got, firstBad)
	}
	_, err := textRowsErr(testutil.Context(t, 30*time.Second), conn, "SELECT * FROM strict")
	if pe := wantCode(t, err, "22021"); pe != nil && !strings.Contains(pe.Hint, "ALTER STREAM s SET POSITION = 3") {
		t.Errorf("hint %q does not name the position after the message", pe.Hint)
	}
	wantRows(t, conn, `SELECT error FROM streamdb_view_errors WHERE view = 'names' AND seq = 2`,
		`field "name": invalid byte sequence for encoding "UTF8": 0xff`)
	// Nothing anywhere holds a replacement character.
	for _, q := range []string{"SELECT name FROM names", "SELECT error FROM streamdb_view_errors"} {
		for _, r := range textRows(t, conn, q) {
			if strings.ContainsRune(r, '\uFFFD') {
				t.Errorf("%s: %q holds U+FFFD", q, r)
			}
		}
	}
	// A view created now backfills over the same messages: WITH (on_error
	// = 'fail') its CREATE fails at the first and leaves no view.
	wantExecCode(t, conn, "CREATE MATERIALIZED VIEW strict2 WITH (on_error = 'fail') AS SELECT id FROM s", "22021")
	wantExecCode(t, conn, "SELECT * FROM strict2", "42P01")

	// After kill -9 and recovery the replayed messages are not counted
	// twice; a new one adds to the count.
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.Publish(t, js, "s", `{"id": 11, "name": "x\u0000"}`)
	exec(t, conn, "FLUSH")
	for _, view := range []string{"names", "ids"} {
		wantRows(t, conn, "SELECT DISTINCT failed_rows FROM streamdb_view_errors WHERE view = '"+view+"'", fmt.Sprint(len(want)+1))
	}
	wantRows(t, conn, "SELECT id FROM ids ORDER BY id", kept...)
}

// queryErr runs a query with parameters (extended protocol), reads its
// rows and returns its error.
func queryErr(t *testing.T, conn *pgx.Conn, sql string, args ...any) error {
	rows, err := conn.Query(testutil.Context(t, 30*time.Second), sql, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}

// sourceErrors lists the messages the reader of view skipped, as
// "seq sqlstate error", without the field name our errors start with.
func sourceErrors(t *testing.T, conn *pgx.Conn, view string) []string {
	t.Helper()
	rows := textRows(t, conn, "SELECT seq, sqlstate, error FROM streamdb_view_errors WHERE view = '"+view+"' AND stream = 's' AND operator = 'source' ORDER BY seq")
	for i, r := range rows {
		if at := strings.Index(r, ` field "`); at >= 0 {
			if end := strings.Index(r[at+8:], `": `); end >= 0 {
				rows[i] = r[:at+1] + r[at+8+end+3:]
			}
		}
	}
	return rows
}
