package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// copyIn runs a COPY ... FROM STDIN with data and returns its error.
func copyIn(t *testing.T, conn *pgx.Conn, sql, data string) (pgconn.CommandTag, error) {
	t.Helper()
	return conn.PgConn().CopyFrom(testutil.Context(t, 30*time.Second), strings.NewReader(data), sql)
}

// copyOut runs a COPY ... TO STDOUT and returns what it wrote.
func copyOut(t *testing.T, conn *pgx.Conn, sql string) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := conn.PgConn().CopyTo(testutil.Context(t, 30*time.Second), &buf, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return buf.String()
}

// TestCopyFromBinary: pgx's CopyFrom (binary COPY) loads a table in one
// statement, every column type converted; a duplicate key in the data
// stops it with nothing written.
func TestCopyFromBinary(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, `CREATE TABLE items (id BIGINT PRIMARY KEY, name VARCHAR(20) NOT NULL, price NUMERIC(10,2),
		qty INT, ok BOOLEAN, w DOUBLE PRECISION, at TIMESTAMP, d DATE)`)
	at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	var rows [][]any
	for i := 1; i <= 1000; i++ {
		var price any = fmt.Sprintf("%d.%02d", i, i%100)
		if i%10 == 0 {
			price = nil
		}
		rows = append(rows, []any{int64(i), fmt.Sprintf("item %d", i), price, int32(i % 7), i%2 == 0, float64(i) / 4, at, at})
	}
	n, err := conn.CopyFrom(testutil.Context(t, 60*time.Second), pgx.Identifier{"items"},
		[]string{"id", "name", "price", "qty", "ok", "w", "at", "d"}, pgx.CopyFromRows(rows))
	if err != nil || n != 1000 {
		t.Fatalf("CopyFrom: %d rows, %v", n, err)
	}
	wantRows(t, conn, "SELECT count(*), count(price), sum(qty) FROM items", "1000 900 3003")
	wantRows(t, conn, "SELECT * FROM items WHERE id IN (1, 10) ORDER BY id",
		"1 item 1 1.01 1 f 0.25 2024-05-06 07:08:09 2024-05-06",
		"10 item 10 NULL 3 t 2.5 2024-05-06 07:08:09 2024-05-06")

	// Key 5 again, among new keys: the whole COPY is refused.
	_, err = conn.CopyFrom(testutil.Context(t, 30*time.Second), pgx.Identifier{"items"}, []string{"id", "name"},
		pgx.CopyFromRows([][]any{{int64(2001), "new"}, {int64(5), "dup"}}))
	wantCode(t, err, "23505")
	// A NULL in a NOT NULL column.
	_, err = conn.CopyFrom(testutil.Context(t, 30*time.Second), pgx.Identifier{"items"}, []string{"id", "name"},
		pgx.CopyFromRows([][]any{{int64(2002), "new"}, {int64(2003), nil}}))
	wantCode(t, err, "23502")
	wantRows(t, conn, "SELECT count(*) FROM items", "1000")
	// A value too long for VARCHAR(20).
	_, err = conn.CopyFrom(testutil.Context(t, 30*time.Second), pgx.Identifier{"items"}, []string{"id", "name"},
		pgx.CopyFromRows([][]any{{int64(2004), strings.Repeat("x", 21)}}))
	if pe := wantCode(t, err, "22001"); pe != nil && !strings.Contains(pe.Message, "line 1, column name") {
		t.Errorf("message %q does not name the line and column", pe.Message)
	}
	wantRows(t, conn, "SELECT 1", "1") // the session goes on
}

// TestCopyText: COPY FROM STDIN in text and CSV format with their options,
// errors with PostgreSQL's SQLSTATEs and the line number, and all or
// nothing inside and outside a transaction block.
func TestCopyText(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE t (id INT PRIMARY KEY, s TEXT, n NUMERIC)")

	tag, err := copyIn(t, conn, "COPY t FROM STDIN", "1\tplain\t1.5\n2\ttab\\there\\\\back\t\\N\n3\t\\N\t-2\n\\.\n")
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("text COPY: %q, %v", tag, err)
	}
	wantRows(t, conn, "SELECT id, s, n FROM t ORDER BY id", "1 plain 1.5", "2 tab\there\\back NULL", "3 NULL -2")

	csv := "id;s;n\n4;\"semi;colon\";x\n5;\"two\nlines\";7\n6;;8\n7;\"\";9\n"
	if _, err := copyIn(t, conn, "COPY t FROM STDIN WITH (FORMAT csv, HEADER, DELIMITER ';', NULL 'x')", csv); err != nil {
		t.Fatalf("csv COPY: %v", err)
	}
	wantRows(t, conn, "SELECT id, s IS NULL, s, n FROM t WHERE id >= 4 ORDER BY id",
		"4 f semi;colon NULL", "5 f two\nlines 7", "6 f  8", "7 f  9")
	// The older option syntax, a column list, and CRLF line ends.
	if _, err := copyIn(t, conn, "COPY t (s, id) FROM STDIN CSV", "eight,8\r\n,9\r\n"); err != nil {
		t.Fatalf("csv COPY with columns: %v", err)
	}
	wantRows(t, conn, "SELECT id, s, n FROM t WHERE id >= 8 ORDER BY id", "8 eight NULL", "9 NULL NULL")

	// Bad data: nothing of the COPY is written, the message names the line.
	for _, c := range []struct{ sql, data, code, where string }{
		{"COPY t FROM STDIN", "10\ta\t1\n11\tb\n", "22P04", "line 2"},
		{"COPY t FROM STDIN", "10\ta\t1\t4\n", "22P04", "line 1"},
		{"COPY t FROM STDIN", "10\ta\t1\n11\tb\t2\nzz\tc\t3\n", "22P02", "line 3, column id"},
		{"COPY t FROM STDIN (FORMAT csv)", "10,a,1\n11,\"open,2\n", "22P04", "line 2"},
		{"COPY t FROM STDIN (FORMAT csv, HEADER match)", "id,x,n\n10,a,1\n", "22P04", "line 1"},
		{"COPY t FROM STDIN", "10\ta\t1\n1\tdup\t2\n", "23505", ""},
	} {
		_, err := copyIn(t, conn, c.sql, c.data)
		if pe := wantCode(t, err, c.code); pe != nil && !strings.Contains(pe.Message, c.where) {
			t.Errorf("%s %q: message %q does not say %q", c.sql, c.data, pe.Message, c.where)
		}
	}
	wantRows(t, conn, "SELECT count(*) FROM t", "9")
	// A CR LF inside a quoted CSV field is the value's, as in PostgreSQL.
	if _, err := copyIn(t, conn, "COPY t (id, s) FROM STDIN CSV", "12,\"cr\r\nlf\"\n"); err != nil {
		t.Fatalf("csv COPY with a quoted CR LF: %v", err)
	}
	wantRows(t, conn, "SELECT length(s), strpos(s, chr(13)), strpos(s, chr(10)) FROM t WHERE id = 12", "6 3 4")

	// Statement errors come before any data is asked for.
	for _, c := range []struct{ sql, code string }{
		{"COPY nope FROM STDIN", "42P01"},
		{"COPY t (id, nope) FROM STDIN", "42703"},
		{"COPY t FROM '/etc/passwd'", "0A000"},
		{"COPY t FROM STDIN (FORMAT xml)", "22023"},
		{"COPY t FROM STDIN (DELIMITER 'ab')", "0A000"},
		{"COPY t FROM STDIN (FORMAT binary, HEADER)", "0A000"},
		{"COPY t FROM STDIN (QUOTE '\"')", "0A000"},
		{"COPY t FROM STDIN (BOGUS 1)", "42601"},
	} {
		_, err := copyIn(t, conn, c.sql, "")
		wantCode(t, err, c.code)
	}

	// In a transaction block the rows are the block's: ROLLBACK drops
	// them, a failed COPY fails the block.
	exec(t, conn, "BEGIN")
	if _, err := copyIn(t, conn, "COPY t FROM STDIN", "20\tin block\t1\n"); err != nil {
		t.Fatal(err)
	}
	wantRows(t, conn, "SELECT s FROM t WHERE id = 20", "in block")
	exec(t, conn, "ROLLBACK")
	wantRows(t, conn, "SELECT count(*) FROM t WHERE id = 20", "0")
	exec(t, conn, "BEGIN")
	_, err = copyIn(t, conn, "COPY t FROM STDIN", "21\tx\tnotanumber\n")
	wantCode(t, err, "22P02")
	wantExecCode(t, conn, "SELECT 1", "25P02")
	exec(t, conn, "ROLLBACK")
}

// TestCopyTo: COPY table, view and (query) TO STDOUT in text and CSV, with
// the escapes and quoting that PostgreSQL writes, and read back by COPY
// FROM unchanged.
func TestCopyTo(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE t (id INT PRIMARY KEY, s TEXT, n NUMERIC)",
		`INSERT INTO t VALUES (1, 'a', 1.5), (2, E'tab\there\nnl\\', NULL), (3, 'comma, "quote"', -2), (4, '', 0)`,
		"CREATE MATERIALIZED VIEW v AS SELECT count(*) AS c, sum(n) AS total FROM t")

	got := copyOut(t, conn, "COPY (SELECT * FROM t ORDER BY id) TO STDOUT")
	want := "1\ta\t1.5\n2\ttab\\there\\nnl\\\\\t\\N\n3\tcomma, \"quote\"\t-2\n4\t\t0\n"
	if got != want {
		t.Errorf("text:\n got %q\nwant %q", got, want)
	}
	got = copyOut(t, conn, "COPY (SELECT * FROM t ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)")
	want = "id,s,n\n1,a,1.5\n2,\"tab\there\nnl\\\",\n3,\"comma, \"\"quote\"\"\",-2\n4,\"\",0\n"
	if got != want {
		t.Errorf("csv:\n got %q\nwant %q", got, want)
	}
	got = copyOut(t, conn, "COPY (SELECT id, s FROM t WHERE id < 3 ORDER BY id) TO STDOUT (FORMAT csv, FORCE_QUOTE *, DELIMITER '|')")
	if want := "\"1\"|\"a\"\n\"2\"|\"tab\there\nnl\\\"\n"; got != want {
		t.Errorf("csv force quote:\n got %q\nwant %q", got, want)
	}
	poll(t, 30*time.Second, func() error {
		if got := copyOut(t, conn, "COPY v TO STDOUT"); got != "4\t-0.5\n" {
			return fmt.Errorf("COPY v: %q", got)
		}
		return nil
	})
	if got := copyOut(t, conn, "COPY t (id) TO STDOUT"); len(strings.Fields(got)) != 4 {
		t.Errorf("COPY t (id): %q", got)
	}

	// What COPY TO writes, COPY FROM reads back the same, in each format.
	orig := copyOut(t, conn, "COPY (SELECT * FROM t ORDER BY id) TO STDOUT")
	for i, format := range []string{"text", "csv", "binary"} {
		exec(t, conn, fmt.Sprintf("CREATE TABLE back%d (id INT PRIMARY KEY, s TEXT, n NUMERIC)", i))
		var buf bytes.Buffer
		if _, err := conn.PgConn().CopyTo(testutil.Context(t, 30*time.Second), &buf, "COPY t TO STDOUT (FORMAT "+format+")"); err != nil {
			t.Fatalf("%s out: %v", format, err)
		}
		if _, err := conn.PgConn().CopyFrom(testutil.Context(t, 30*time.Second), &buf, fmt.Sprintf("COPY back%d FROM STDIN (FORMAT %s)", i, format)); err != nil {
			t.Fatalf("%s in: %v", format, err)
		}
		if got := copyOut(t, conn, fmt.Sprintf("COPY (SELECT * FROM back%d ORDER BY id) TO STDOUT", i)); got != orig {
			t.Errorf("%s round trip:\n got %q\nwant %q", format, got, orig)
		}
	}
	_, err := conn.PgConn().CopyTo(testutil.Context(t, 30*time.Second), &bytes.Buffer{}, "COPY (SELECT 1/0) TO STDOUT")
	wantCode(t, err, "22012")
	wantRows(t, conn, "SELECT 1", "1")
}

// TestCopyStream: COPY FROM STDIN into a stream publishes each row as an
// event that views see; a bad row anywhere publishes nothing.
func TestCopyStream(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE STREAM clicks (user_id BIGINT, url TEXT)",
		"CREATE MATERIALIZED VIEW per_user AS SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id")
	var data strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&data, "%d,/page/%d\n", i%3, i)
	}
	tag, err := copyIn(t, conn, "COPY clicks FROM STDIN (FORMAT csv)", data.String())
	if err != nil || tag.String() != "COPY 300" {
		t.Fatalf("COPY into stream: %q, %v", tag, err)
	}
	_, err = copyIn(t, conn, "COPY clicks FROM STDIN (FORMAT csv)", "7,/a\n7,/b\nseven,/c\n")
	if pe := wantCode(t, err, "22P02"); pe != nil && !strings.Contains(pe.Message, "line 3, column user_id") {
		t.Errorf("message %q does not name line 3", pe.Message)
	}
	flush(t, conn)
	wantRows(t, conn, "SELECT user_id, n FROM per_user ORDER BY user_id", "0 100", "1 100", "2 100")
}

// TestCopyPsql: psql's \copy writes a file's rows through COPY FROM STDIN
// and a query's rows to a file through COPY TO STDOUT.
func TestCopyPsql(t *testing.T) {
	if _, err := os.Stat("/usr/bin/psql"); err != nil {
		t.Skip("psql is not installed (apt-get install postgresql-client)")
	}
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE people (id INT PRIMARY KEY, name TEXT, born DATE)")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("id,name,born\n1,Ada,1815-12-10\n2,\"Hopper, Grace\",1906-12-09\n3,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.txt")
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=streamdb dbname=streamdb sslmode=disable", srv.Port)
	res, err := runPsql(t, nil, dsn, "-c", `\copy people from '`+in+`' with (format csv, header)`,
		"-c", `\copy (select id, name from people order by id) to '`+out+`'`)
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, res)
	}
	if !strings.Contains(res, "COPY 3") {
		t.Errorf("psql output %q lacks COPY 3", res)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1\tAda\n2\tHopper, Grace\n3\t\\N\n"; string(b) != want {
		t.Errorf("\\copy to: %q, want %q", b, want)
	}
	res, err = runPsql(t, nil, dsn, "-c", `\copy people from '`+in+`' with (format csv)`)
	if err == nil || !strings.Contains(res, `invalid input syntax for type integer: "id"`) || !strings.Contains(res, "line 1") {
		t.Errorf("psql \\copy of a header as data: %v\n%s", err, res)
	}
	wantRows(t, conn, "SELECT count(*) FROM people", "3")
}

// TestCopyPrivileges: COPY FROM needs INSERT on the target and COPY TO
// needs SELECT, as INSERT and SELECT do.
func TestCopyPrivileges(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin, "CREATE USER alice WITH PASSWORD 'alice pw'",
		"CREATE TABLE t (id BIGINT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	alice := loginAs(t, srv, "alice", "alice pw")
	_, err := copyIn(t, alice, "COPY t FROM STDIN", "2\n")
	if pe := wantCode(t, err, "42501"); pe != nil && pe.Message != "permission denied for table t" {
		t.Errorf("message %q", pe.Message)
	}
	_, err = alice.PgConn().CopyTo(testutil.Context(t, 30*time.Second), &bytes.Buffer{}, "COPY t TO STDOUT")
	wantCode(t, err, "42501")
	_, err = alice.PgConn().CopyTo(testutil.Context(t, 30*time.Second), &bytes.Buffer{}, "COPY (SELECT * FROM t) TO STDOUT")
	wantCode(t, err, "42501")
	exec(t, admin, "GRANT SELECT, INSERT ON t TO alice")
	if _, err := copyIn(t, alice, "COPY t FROM STDIN", "2\n"); err != nil {
		t.Fatal(err)
	}
	if got := copyOut(t, alice, "COPY t TO STDOUT"); got != "1\n2\n" {
		t.Errorf("COPY t TO STDOUT: %q", got)
	}
}

// failingReader yields data, then fails: pgx turns the failure into a
// CopyFail message.
type failingReader struct{ data *strings.Reader }

func (r failingReader) Read(p []byte) (int, error) {
	if r.data.Len() == 0 {
		return 0, fmt.Errorf("the client gave up")
	}
	return r.data.Read(p)
}

// TestCopyAborted: a COPY the client abandons (CopyFail) and one with a
// row too large for one message write nothing, say why, and leave the
// session usable; a COPY larger than a message is written whole.
func TestCopyAborted(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE t (id INT PRIMARY KEY, s TEXT)")

	_, err := conn.PgConn().CopyFrom(testutil.Context(t, 30*time.Second), failingReader{strings.NewReader("1\ta\n2\tb\n")}, "COPY t FROM STDIN")
	if pe := wantCode(t, err, "57014"); pe != nil && !strings.Contains(pe.Message, "the client gave up") {
		t.Errorf("CopyFail message %q", pe.Message)
	}
	wantRows(t, conn, "SELECT count(*) FROM t", "0")

	huge := fmt.Sprintf("1\tsmall\n2\t%s\n", strings.Repeat("x", 1<<20))
	_, err = copyIn(t, conn, "COPY t FROM STDIN", huge)
	if pe := wantCode(t, err, "54000"); pe != nil && !strings.Contains(pe.Message, "over the limit") {
		t.Errorf("COPY of a row over the message limit: %q", pe.Message)
	}
	wantRows(t, conn, "SELECT count(*) FROM t", "0")

	var big strings.Builder
	pad := strings.Repeat("x", 200)
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&big, "%d\t%s\n", 100+i, pad)
	}
	if _, err := copyIn(t, conn, "COPY t FROM STDIN", big.String()); err != nil {
		t.Fatalf("COPY of 10,000 rows (2 MB): %v", err)
	}
	wantRows(t, conn, "SELECT count(*), sum(length(s)) FROM t", "10000 2000000")
	exec(t, conn, "DELETE FROM t")
	wantRows(t, conn, "SELECT count(*) FROM t", "0")
	if _, err := copyIn(t, conn, "COPY t FROM STDIN", "1\ta\n"); err != nil {
		t.Fatal(err)
	}
	wantRows(t, conn, "SELECT count(*) FROM t", "1")
}
