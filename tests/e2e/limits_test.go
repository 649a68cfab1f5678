package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// Deeply nested expressions are refused with 54001 instead of overflowing
// the server's stack, a long IN list still works, and the server keeps
// serving other sessions throughout.
func TestExpressionDepthLimit(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	other := srv.Conn(t)
	exec(t, other, "CREATE TABLE kv (k BIGINT PRIMARY KEY, v BIGINT)", "INSERT INTO kv VALUES (1, 10)")

	deep := "SELECT " + strings.Repeat("(", 200_000) + "1" + strings.Repeat(")", 200_000)
	pe := wantExecCode(t, conn, deep, "54001")
	if pe != nil && !strings.Contains(pe.Message, "stack depth limit exceeded") {
		t.Errorf("message %q", pe.Message)
	}
	wantRows(t, other, "SELECT v FROM kv WHERE k = 1", "10")

	wantExecCode(t, conn, "SELECT "+strings.Repeat("1+", 20_000)+"1", "54001")
	wantRows(t, other, "SELECT v FROM kv WHERE k = 1", "10")

	// Within the bound, nesting works as before.
	wantRows(t, conn, "SELECT "+strings.Repeat("(", 1000)+"7"+strings.Repeat(")", 1000), "7")

	items := make([]string, 100_000)
	for i := range items {
		items[i] = fmt.Sprint(i + 2)
	}
	wantRows(t, conn, "SELECT k FROM kv WHERE v IN ("+strings.Join(items, ",")+")", "1")
	wantRows(t, conn, "SELECT count(*) FROM kv WHERE v NOT IN ("+strings.Join(items, ",")+")", "0")
}

// Subqueries nested past front.MaxSubqueryDepth are refused with 54001 at
// once, as PostgreSQL refuses them past its stack depth (it answers 2000
// nested scalar subqueries and refuses 2500); binding them took time
// quadratic in the depth (8,000 levels took 50 s), holding the session.
func TestSubqueryDepthLimit(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	nested := func(open string, n int, inner, close string) string {
		return "SELECT " + strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	wantRows(t, conn, nested("(SELECT ", 2000, "1", ")"), "1")
	for _, q := range []string{
		nested("(SELECT ", 2001, "1", ")"),
		nested("(SELECT ", 100_000, "1", ")"),
		nested("(SELECT 1 WHERE EXISTS ", 3000, "(SELECT 1)", ")"),
		"SELECT 1 FROM " + strings.Repeat("(SELECT * FROM ", 3000) + "(VALUES (1)) v" + strings.Repeat(") s", 3000),
	} {
		pe := wantExecCode(t, conn, q, "54001")
		if pe != nil && !strings.Contains(pe.Message, "subqueries nest more than 2000 levels") {
			t.Errorf("message %q", pe.Message)
		}
	}
	wantRows(t, conn, "SELECT 1", "1")
}

// An ad-hoc query that would build more rows than query_max_memory allows
// is refused with 53200, a long one stops at statement_timeout (the same
// checks see cancellation), and the server keeps serving others.
func TestQueryMemoryLimit(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	other := srv.Conn(t)
	exec(t, conn, "CREATE TABLE big3 (id BIGINT PRIMARY KEY, g BIGINT)")
	var rows []string
	for i := 0; i < 3000; i++ {
		rows = append(rows, fmt.Sprintf("(%d, %d)", i, i%3))
	}
	exec(t, conn, "INSERT INTO big3 VALUES "+strings.Join(rows, ","))
	exec(t, conn, "SET query_max_memory = '8MB'")
	pe := wantExecCode(t, conn, "SELECT count(*) FROM big3 a, big3 b, big3 c", "53200")
	if pe != nil && !strings.Contains(pe.Message, "8MB") {
		t.Errorf("message %q does not name the limit", pe.Message)
	}
	wantRows(t, other, "SELECT count(*) FROM big3", "3000")
	// Within the limit the same join shape answers.
	wantRows(t, conn, "SELECT count(*) FROM big3 a JOIN big3 b ON a.id = b.id", "3000")

	exec(t, conn, "SET query_max_memory = 0", "SET query.max-memory-total = 0", "SET statement_timeout = '300ms'")
	wantExecCode(t, conn, "SELECT count(*) FROM big3 a, big3 b, big3 c WHERE a.g + b.g + c.g = 100", "57014")
	wantExecCode(t, conn, "SET query_max_memory = 'lots'", "22023")
	wantRows(t, other, "SELECT count(*) FROM big3", "3000")
}

// query.max-memory-total bounds the rows of all ad-hoc queries together,
// whatever each session's query_max_memory allows, and a query gives its
// share back when it ends.
func TestQueryMemoryTotal(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	other := srv.Conn(t)
	exec(t, conn, "CREATE TABLE pool3 (id BIGINT PRIMARY KEY, g BIGINT)",
		"INSERT INTO pool3 SELECT g, g % 3 FROM generate_series(1, 1000) g")
	// Sorting a cross join of 1,000,000 rows builds some tens of
	// megabytes.
	const cross = "SELECT a.id * 10000 + b.id AS s FROM pool3 a, pool3 b ORDER BY s DESC LIMIT 1"
	exec(t, conn, "SET query.max-memory-total = 8388608")
	pe := wantExecCode(t, other, cross, "53200")
	if pe != nil && !strings.Contains(pe.Message, "query.max-memory-total (8MB)") {
		t.Errorf("message %q does not name the server-wide limit", pe.Message)
	}
	// Each query's share comes back when it ends: small queries go on.
	for range 20 {
		wantRows(t, other, "SELECT count(*) FROM pool3 a JOIN pool3 b ON a.id = b.id", "1000")
	}
	exec(t, conn, "SET query.max-memory-total = 1073741824")
	wantRows(t, other, cross, "10001000")
	wantRows(t, conn, cross, "10001000")
}

// An aggregate over a join folds the joined rows as they come: it holds
// its groups and the join's inputs, not the join's output, so counting a
// cross join of two 5,000-row tables answers 25,000,000 as PostgreSQL
// does, within a small query_max_memory. A sort of the same join still
// holds its rows and is refused.
func TestAggregateOverJoinHoldsNoRows(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE xa (a INT PRIMARY KEY)", "CREATE TABLE xb (b INT PRIMARY KEY)",
		"INSERT INTO xa SELECT generate_series(1, 5000)", "INSERT INTO xb SELECT generate_series(1, 5000)",
		"SET query_max_memory = '8MB'")
	wantRows(t, conn, "SELECT count(*) FROM xa CROSS JOIN xb", "25000000")
	wantRows(t, conn, "SELECT count(*), sum(a) FROM xa, xb WHERE a < b", "12497500 20833332500")
	wantRows(t, conn, "SELECT a % 2 AS odd, count(*) FROM xa JOIN xb ON a <> b GROUP BY 1 ORDER BY 1",
		"0 12497500", "1 12497500")
	wantExecCode(t, conn, "SELECT a, b FROM xa, xb ORDER BY a + b DESC LIMIT 1", "53200")
}

// max_connections bounds the sessions: one more is refused with 53300,
// cancel requests still get through at the limit, a flood of sockets that
// never start up does not take the server's file descriptors, and a
// session frees its slot when it ends.
func TestMaxConnections(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_MAX_CONNECTIONS=4"}})
	var conns []*pgx.Conn
	for i := 0; i < 4; i++ {
		conns = append(conns, srv.Conn(t))
	}
	ctx := testutil.Context(t, time.Minute)
	_, err := pgx.Connect(ctx, srv.DSN())
	if pe := wantCode(t, err, "53300"); pe != nil && pe.Message != "sorry, too many clients already" {
		t.Errorf("message %q", pe.Message)
	}
	wantRows(t, conns[0], "SHOW max_connections", "4")

	// A cancel request at the limit stops a running query.
	exec(t, conns[1], "CREATE TABLE c3 (id BIGINT PRIMARY KEY)")
	var rows []string
	for i := 0; i < 2000; i++ {
		rows = append(rows, fmt.Sprintf("(%d)", i))
	}
	exec(t, conns[1], "INSERT INTO c3 VALUES "+strings.Join(rows, ","), "SET query_max_memory = 0")
	// A cancel request (a connection of its own, past the limit) stops the
	// running query: send one until the query ends.
	done := make(chan error, 1)
	go func() {
		_, err := conns[1].Exec(context.Background(), "SELECT count(*) FROM c3 a, c3 b, c3 c WHERE a.id + b.id + c.id < 0", pgx.QueryExecModeSimpleProtocol)
		done <- err
	}()
	var queryErr error
	poll(t, 30*time.Second, func() error {
		select {
		case queryErr = <-done:
			return nil
		default:
		}
		if err := conns[1].PgConn().CancelRequest(ctx); err != nil {
			return err
		}
		return errors.New("the query still runs")
	})
	var pe *pgconn.PgError
	if !errors.As(queryErr, &pe) || pe.Code != "57014" {
		t.Errorf("the cancelled query ended with %v, want SQLSTATE 57014", queryErr)
	}

	// Sockets that never send a startup message are closed past a bound
	// instead of piling up; sessions keep working meanwhile.
	var socks []net.Conn
	for i := 0; i < 300; i++ {
		c, err := net.Dial("tcp", srv.Addr)
		if err != nil {
			break
		}
		socks = append(socks, c)
	}
	wantRows(t, conns[0], "SELECT 1", "1")
	for _, c := range socks {
		c.Close()
	}

	conns[3].Close(ctx)
	poll(t, 30*time.Second, func() error {
		c, err := pgx.Connect(ctx, srv.DSN())
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})
}

// superuser_reserved_connections keeps the last slots of max_connections
// for superusers, as in PostgreSQL: a role without SUPERUSER is refused
// with 53300 once fewer slots than that are free, a superuser still gets
// in up to max_connections, a refused session holds no slot, and a value
// not below max_connections keeps the server from starting.
func TestSuperuserReservedConnections(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{
		"STREAMDB_MAX_CONNECTIONS=4", "STREAMDB_SUPERUSER_RESERVED_CONNECTIONS=2"}})
	admin := srv.Conn(t)
	exec(t, admin, "CREATE USER joe")
	wantRows(t, admin, "SHOW superuser_reserved_connections", "2")
	wantRows(t, admin, "SELECT setting, context, boot_val FROM pg_settings WHERE name = 'superuser_reserved_connections'", "2 postmaster 3")
	joeDSN := fmt.Sprintf("postgres://joe@%s/streamdb?sslmode=disable", srv.Addr)
	ctx := testutil.Context(t, time.Minute)

	// admin and this one: two slots left, as many as are reserved. (The
	// slot of StartServer's readiness check frees once the server has
	// seen it close: retry until it has.)
	var joe *pgx.Conn
	poll(t, 30*time.Second, func() error {
		c, err := pgx.Connect(ctx, joeDSN)
		joe = c
		return err
	})
	defer joe.Close(ctx)
	wantRows(t, joe, "SELECT current_user", "joe")
	for i := 0; i < 2; i++ {
		_, err := pgx.Connect(ctx, joeDSN)
		if pe := wantCode(t, err, "53300"); pe != nil && pe.Message != "remaining connection slots are reserved for non-replication superuser connections" {
			t.Errorf("message %q", pe.Message)
		}
	}
	// The reserved slots are the superuser's, up to max_connections.
	var supers []*pgx.Conn
	for i := 0; i < 2; i++ {
		c, err := pgx.Connect(ctx, srv.DSN())
		if err != nil {
			t.Fatalf("superuser session %d in a reserved slot: %v", i+1, err)
		}
		supers = append(supers, c)
	}
	_, err := pgx.Connect(ctx, srv.DSN())
	if pe := wantCode(t, err, "53300"); pe != nil && pe.Message != "sorry, too many clients already" {
		t.Errorf("message %q", pe.Message)
	}
	// With the superusers gone (admin too), joe gets a second session: the
	// refused ones took no slot.
	for _, c := range append(supers, admin) {
		c.Close(ctx)
	}
	poll(t, 30*time.Second, func() error {
		c, err := pgx.Connect(ctx, joeDSN)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})

	cmd := osexec.Command(testutil.BuildServer(t), "--data-dir", t.TempDir(), "--http-listen", "",
		"--listen", fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), "--nats-listen", fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)))
	cmd.Env = append(os.Environ(), "STREAMDB_MAX_CONNECTIONS=3")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "superuser_reserved_connections (3) must be less than max_connections (3)") {
		t.Fatalf("superuser_reserved_connections 3 with max_connections 3: %v\n%s", err, out)
	}
}

// idle_in_transaction_session_timeout ends a session that sits idle inside
// a transaction block with FATAL 25P03; outside a block it does not apply.
func TestIdleInTransactionTimeout(t *testing.T) {
	srv := startServer(t)
	idleOutside := srv.Conn(t)
	exec(t, idleOutside, "SET idle_in_transaction_session_timeout = '200ms'")
	conn := srv.Conn(t)
	exec(t, conn, "SET idle_in_transaction_session_timeout = '200ms'", "BEGIN", "SELECT 1")
	// Wait for what the server sends next: the FATAL, once it gives up.
	ctx := testutil.Context(t, 30*time.Second)
	err := conn.PgConn().WaitForNotification(ctx)
	if pe := wantCode(t, err, "25P03"); pe != nil && !strings.Contains(pe.Message, "idle-in-transaction") {
		t.Errorf("message %q", pe.Message)
	}
	wantRows(t, idleOutside, "SELECT 1", "1")
	wantExecCode(t, idleOutside, "SET idle_in_transaction_session_timeout = 'soon'", "22023")
}

// state.epoch.max-memory bounds what one view holds of an epoch's
// changes: the backfill of a cross-join view stops with 53200, its CREATE
// fails and leaves no view, the server goes on serving, and a view that
// fits (or the same one under a larger bound) is created as usual.
func TestViewEpochMemoryLimit(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE ea (a INT PRIMARY KEY)", "CREATE TABLE eb (b INT PRIMARY KEY)",
		"INSERT INTO ea SELECT generate_series(1, 1000)", "INSERT INTO eb SELECT generate_series(1, 1000)",
		"SET state.epoch.max-memory = 8388608")
	pe := wantExecCode(t, conn, "CREATE MATERIALIZED VIEW ev AS SELECT a, b FROM ea CROSS JOIN eb", "53200")
	if pe != nil && (!strings.Contains(pe.Message, "state.epoch.max-memory") || !strings.Contains(pe.Hint, "join condition")) {
		t.Errorf("53200 message %q hint %q: want the setting named and what to change", pe.Message, pe.Hint)
	}
	wantRows(t, conn, "SELECT count(*) FROM pg_matviews WHERE matviewname = 'ev'", "0")
	exec(t, conn, "CREATE MATERIALIZED VIEW en AS SELECT a, b FROM ea JOIN eb ON a = b",
		"CREATE MATERIALIZED VIEW ec AS SELECT count(*) AS n FROM ea CROSS JOIN eb")
	wantRows(t, conn, "SELECT count(*) FROM en", "1000")
	wantRows(t, conn, "SELECT n FROM ec", "1000000")
	exec(t, conn, "SET state.epoch.max-memory = 1073741824",
		"CREATE MATERIALIZED VIEW ev AS SELECT a, b FROM ea CROSS JOIN eb")
	wantRows(t, conn, "SELECT count(*) FROM ev", "1000000")
}
