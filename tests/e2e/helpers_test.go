package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// startServer starts a fresh streamdb with an embedded NATS server.
func startServer(t *testing.T) *testutil.Server {
	t.Helper()
	return testutil.StartServer(t, testutil.ServerOptions{})
}

// exec runs statements with the simple protocol and fails the test on error.
func exec(t *testing.T, conn *pgx.Conn, sqls ...string) {
	t.Helper()
	ctx := testutil.Context(t, 60*time.Second)
	for _, sql := range sqls {
		if _, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%s: %v", testutil.OneLine(sql), err)
		}
	}
}

// flush runs FLUSH.
func flush(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	exec(t, conn, "FLUSH")
}

// textRows runs a query with the simple protocol and returns every value as
// PostgreSQL's text ("NULL" for NULL), one string per row, values joined by
// a single space.
func textRows(t *testing.T, conn *pgx.Conn, sql string, args ...any) []string {
	t.Helper()
	rows, err := textRowsErr(testutil.Context(t, 60*time.Second), conn, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", testutil.OneLine(sql), err)
	}
	return rows
}

func textRowsErr(ctx context.Context, conn *pgx.Conn, sql string, args ...any) ([]string, error) {
	results, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range results {
		if r.Err != nil {
			return nil, r.Err
		}
		for _, row := range r.Rows {
			vals := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					vals[i] = "NULL"
				} else {
					vals[i] = string(v)
				}
			}
			out = append(out, strings.Join(vals, " "))
		}
	}
	return out, nil
}

// wantRows compares the text rows of a query with the expected ones.
func wantRows(t *testing.T, conn *pgx.Conn, sql string, want ...string) {
	t.Helper()
	got := textRows(t, conn, sql)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got: %q\nwant: %q", testutil.OneLine(sql), got, want)
	}
}

// pgError returns err as a server error, failing the test if it is not one.
func pgError(t *testing.T, err error) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("want a PostgreSQL error, got %T: %v", err, err)
	}
	return pe
}

// wantCode checks that err is a server error with the given SQLSTATE.
func wantCode(t *testing.T, err error, code string) *pgconn.PgError {
	t.Helper()
	return testutil.WantCode(t, err, code, "")
}

// wantExecCode runs one statement with the simple protocol and checks that
// it fails with the given SQLSTATE.
func wantExecCode(t *testing.T, conn *pgx.Conn, sql, code string) *pgconn.PgError {
	t.Helper()
	_, err := conn.Exec(testutil.Context(t, 30*time.Second), sql, pgx.QueryExecModeSimpleProtocol)
	return wantCode(t, err, code)
}

// poll calls check until it returns nil or the deadline passes; the last
// error fails the test.
func poll(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	testutil.Poll(t, timeout, "", check)
}

// publishMany publishes n messages, msg(i) for i in [0, n), with
// asynchronous acknowledgements in rounds of a few thousand, and returns
// once JetStream has acknowledged all.
func publishMany(t *testing.T, js jetstream.JetStream, subject string, n int, msg func(i int) string) {
	t.Helper()
	ctx := testutil.Context(t, 2*time.Minute)
	settle := func() {
		select {
		case <-js.PublishAsyncComplete():
		case <-ctx.Done():
			t.Fatalf("publishing to %s: not acknowledged in time", subject)
		}
	}
	for i := 0; i < n; i++ {
		_, err := js.PublishAsync(subject, []byte(msg(i)))
		// Publishers sharing js may fill its window of unacknowledged
		// messages when acks are slow (a loaded machine): wait for them
		// and send the message again, as a producer applying
		// backpressure does.
		for errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			settle()
			_, err = js.PublishAsync(subject, []byte(msg(i)))
		}
		if err != nil {
			t.Fatalf("publishing to %s: %v", subject, err)
		}
		if (i+1)%4000 == 0 || i == n-1 {
			settle()
		}
	}
}

// showStream returns the SHOW STREAMS row of one stream as column -> value.
func showStream(t *testing.T, conn *pgx.Conn, name string) map[string]string {
	t.Helper()
	ctx := testutil.Context(t, 30*time.Second)
	rows, err := conn.Query(ctx, "SHOW STREAMS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("SHOW STREAMS: %v", err)
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	for rows.Next() {
		vals := rows.RawValues()
		m := map[string]string{}
		for i, fd := range fds {
			m[fd.Name] = string(vals[i])
		}
		if m["name"] == name {
			return m
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("SHOW STREAMS: %v", err)
	}
	t.Fatalf("SHOW STREAMS has no stream %q", name)
	return nil
}

// mustInt parses a decimal integer.
func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("not an integer: %q", s)
	}
	return n
}

// adminPassword is the superuser's password of startWithAdmin's server.
const adminPassword = "admin secret"

// startWithAdmin starts a server whose superuser streamdb has a password
// (so that other roles must log in with theirs) and returns it with a
// connection as that superuser; PGPASSWORD is set for the test.
func startWithAdmin(t *testing.T) (*testutil.Server, *pgx.Conn) {
	t.Helper()
	t.Setenv("PGPASSWORD", adminPassword)
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_PASSWORD=" + adminPassword}})
	return srv, loginAs(t, srv, "streamdb", adminPassword)
}
