package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/tests/testutil"
)

// A statement longer than max_query_length is refused with 54001, over the
// simple and the extended protocol, and the same session goes on; other
// sessions are not disturbed.
func TestMaxQueryLength(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_MAX_QUERY_LENGTH=100000"}})
	conn := srv.Conn(t)
	other := srv.Conn(t)
	wantRows(t, conn, "SHOW max_query_length", "100000")

	long := "SELECT length('" + strings.Repeat("x", 200_000) + "')"
	pe := wantExecCode(t, conn, long, "54001")
	if pe != nil && !strings.Contains(pe.Message, "max_query_length") {
		t.Errorf("message %q does not name the setting", pe.Message)
	}
	wantRows(t, conn, "SELECT 1", "1")
	_, err := conn.Exec(testutil.Context(t, 30*time.Second), long, pgx.QueryExecModeDescribeExec)
	wantCode(t, err, "54001")
	wantRows(t, conn, "SELECT 2", "2")
	wantRows(t, other, "SELECT length('"+strings.Repeat("x", 90_000)+"')", "90000")
	wantExecCode(t, conn, "SET max_query_length = 5", "55P02")
}

// Long and deep expressions answer or fail with 54001 and never take the
// server down: the nested parentheses and the long operator chain of the
// issue's reproductions, chains of casts and powers that the front layer
// rewrites, and many independent rewrites in one query (linear now).
func TestLongExpressions(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	other := srv.Conn(t)
	exec(t, other, "CREATE TABLE kv (k BIGINT PRIMARY KEY, v BIGINT)", "INSERT INTO kv VALUES (1, 10)")

	for _, q := range []string{
		"SELECT " + strings.Repeat("(", 1_000_000) + "1" + strings.Repeat(")", 1_000_000),
		"SELECT " + strings.Repeat("1+", 100_000) + "1",
		"SELECT 1" + strings.Repeat("::int", 50_000),
		"SELECT 2" + strings.Repeat(" ^ 1", 50_000),
		"SELECT " + strings.Repeat("(", 20_000) + "1" + strings.Repeat(")::int", 20_000),
		"SELECT 1 WHERE " + strings.Repeat("true AND ", 60_000) + "true",
	} {
		wantExecCode(t, conn, q, "54001")
		wantRows(t, other, "SELECT v FROM kv WHERE k = 1", "10")
	}

	wantRows(t, conn, "SELECT "+strings.Repeat("1+", 5000)+"1", "5001")
	casts := make([]string, 20_000)
	for i := range casts {
		casts[i] = fmt.Sprintf("%d::bigint", i+5)
	}
	wantRows(t, conn, "SELECT k FROM kv WHERE v IN ("+strings.Join(casts, ", ")+")", "1")
	wantRows(t, conn, "SELECT count(*) FROM kv WHERE v IN ("+strings.Repeat("(2 ^ 1)::bigint, ", 20_000)+"10)", "1")
}

// A client that hangs up while its statement runs frees the server: the
// statement stops and the session's slot is released, which the next
// connection sees at the max_connections bound. Another session keeps
// working meanwhile.
func TestDisconnectStopsQuery(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_MAX_CONNECTIONS=2", "STREAMDB_SUPERUSER_RESERVED_CONNECTIONS=0"}})
	ctx := testutil.Context(t, time.Minute)
	// The slot of StartServer's readiness check frees once the server has
	// seen it close: retry the two connections until they fit.
	connect := func() *pgx.Conn {
		var c *pgx.Conn
		poll(t, 30*time.Second, func() error {
			var err error
			c, err = pgx.Connect(ctx, srv.DSN())
			return err
		})
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	other := connect()
	victim := connect()
	exec(t, other, "CREATE TABLE d3 (id BIGINT PRIMARY KEY)")
	var rows []string
	for i := 0; i < 2000; i++ {
		rows = append(rows, fmt.Sprintf("(%d)", i))
	}
	exec(t, other, "INSERT INTO d3 VALUES "+strings.Join(rows, ","))
	exec(t, victim, "SET query_max_memory = 0")

	// The server is full: a third session is refused.
	_, err := pgx.Connect(ctx, srv.DSN())
	wantCode(t, err, "53300")

	// Send a statement that runs for a very long time straight on the
	// socket, then hang up without waiting: the server reads the statement
	// before it sees the hang-up, since TCP keeps them in order.
	msg, err := (&pgproto3.Query{String: "SELECT count(*) FROM d3 a, d3 b, d3 c WHERE a.id + b.id + c.id < 0"}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	sock := victim.PgConn().Conn()
	if _, err := sock.Write(msg); err != nil {
		t.Fatal(err)
	}
	wantRows(t, other, "SELECT count(*) FROM d3", "2000")
	sock.Close()

	// Once the server notices, the statement stops and the slot is free.
	poll(t, 60*time.Second, func() error {
		c, err := pgx.Connect(ctx, srv.DSN())
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})
	wantRows(t, other, "SELECT count(*) FROM d3", "2000")
	if !srv.Running() {
		t.Fatal("the server exited")
	}
}
