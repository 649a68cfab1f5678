package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// sessionCheck sets up session state on a connection (a parameter and a
// prepared statement) and returns a function that checks it is intact.
func sessionCheck(t *testing.T, conn *pgx.Conn) func() {
	t.Helper()
	ctx := testutil.Context(t, 30*time.Second)
	exec(t, conn, "SET application_name = 'bystander'")
	if _, err := conn.Prepare(ctx, "bystander_q", "SELECT n FROM counts WHERE k = $1"); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		ctx := testutil.Context(t, 30*time.Second)
		wantRows(t, conn, "SHOW application_name", "bystander")
		var n int64
		if err := conn.QueryRow(ctx, "bystander_q", "a").Scan(&n); err != nil {
			t.Fatalf("bystander session broken: %v", err)
		}
		if n != 2 {
			t.Errorf("bystander: n = %d, want 2", n)
		}
	}
}

func setupCounts(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	exec(t, conn,
		"CREATE STREAM kv (k TEXT, v INT) WITH (subject = 'rb.kv')",
		"CREATE MATERIALIZED VIEW counts AS SELECT k, count(*) AS n FROM kv GROUP BY k",
		"INSERT INTO kv VALUES ('a', 1), ('a', 2), ('b', 3)")
	flush(t, conn)
}

// dial opens a raw TCP connection to the server.
func dial(t *testing.T, srv *testutil.Server) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", srv.Addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return c
}

// startup returns a StartupMessage for protocol 3.0.
func startup() []byte {
	body := []byte{0, 3, 0, 0}
	for _, kv := range []string{"user", "streamdb", "database", "streamdb"} {
		body = append(body, kv...)
		body = append(body, 0)
	}
	body = append(body, 0)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...)
}

// message frames a frontend message.
func message(typ byte, body []byte) []byte {
	out := []byte{typ}
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)+4))
	return append(out, body...)
}

// drain reads what the server sends for a short while, or until it closes
// the connection.
func drain(c net.Conn) {
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// TestGarbageClients sends garbage bytes, broken startup packets and
// broken messages on other connections, and disconnects in the middle of
// messages and queries; a bystander session and its state are unaffected,
// and new connections still work.
func TestGarbageClients(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewSource(seed))

	srv := startServer(t)
	conn := srv.Conn(t)
	setupCounts(t, conn)
	check := sessionCheck(t, conn)
	check()

	random := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	attacks := map[string]func(c net.Conn){
		"random bytes instead of a startup packet": func(c net.Conn) { c.Write(random(1 + rng.Intn(4096))) },
		"startup length too large":                 func(c net.Conn) { c.Write([]byte{0x7f, 0xff, 0xff, 0xff, 0, 3, 0, 0}) },
		"startup length too small":                 func(c net.Conn) { c.Write([]byte{0, 0, 0, 2}) },
		"unknown protocol version":                 func(c net.Conn) { c.Write([]byte{0, 0, 0, 8, 0, 9, 0, 0}) },
		"half a startup packet then close":         func(c net.Conn) { c.Write(startup()[:7]) },
		"HTTP request":                             func(c net.Conn) { c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")) },
		"random messages after startup": func(c net.Conn) {
			c.Write(startup())
			c.Write(random(1 + rng.Intn(8192)))
		},
		"unknown message type after startup": func(c net.Conn) {
			c.Write(startup())
			c.Write(message('z', random(16)))
		},
		"query message with a huge length": func(c net.Conn) {
			c.Write(startup())
			c.Write([]byte{'Q', 0x7f, 0xff, 0xff, 0xff, 'S', 'E', 'L'})
		},
		"query without its terminating zero": func(c net.Conn) {
			c.Write(startup())
			c.Write(message('Q', []byte("SELECT 1")))
		},
		"half a query message then close": func(c net.Conn) {
			c.Write(startup())
			c.Write(message('Q', []byte("SELECT * FROM counts\x00"))[:9])
		},
		"bind of an unknown statement": func(c net.Conn) {
			c.Write(startup())
			c.Write(message('B', []byte("\x00nosuch\x00\x00\x00\x00\x00\x00\x00")))
			c.Write(message('S', nil))
		},
		"query then disconnect without reading": func(c net.Conn) {
			c.Write(startup())
			c.Write(message('Q', []byte("SELECT * FROM counts; FLUSH; SELECT 1\x00")))
		},
		"parse with garbage parameter count": func(c net.Conn) {
			c.Write(startup())
			c.Write(message('P', []byte("s1\x00SELECT $1\x00\xff\xff")))
			c.Write(message('S', nil))
		},
	}
	for round := range 2 {
		for name, attack := range attacks {
			c := dial(t, srv)
			attack(c)
			if round%2 == 0 {
				drain(c) // read what the server answers
			}
			c.Close() // disconnect, possibly mid-message
			check()
			if t.Failed() {
				t.Fatalf("after %q (round %d)", name, round)
			}
		}
	}
	// Many clients at once doing the same.
	done := make(chan struct{})
	for i := range 20 {
		go func(i int) {
			defer func() { done <- struct{}{} }()
			c, err := net.DialTimeout("tcp", srv.Addr, 10*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(startup())
			c.Write(message('Q', []byte(fmt.Sprintf("SELECT %d\x00", i))))
			b := make([]byte, 64)
			c.Read(b)
		}(i)
	}
	for range 20 {
		<-done
	}
	check()
	// The server still takes new connections and writes.
	other := srv.Conn(t)
	exec(t, other, "INSERT INTO kv VALUES ('b', 4)")
	flush(t, other)
	wantRows(t, other, "SELECT * FROM counts ORDER BY k", "a 2", "b 2")
	check()
}

// TestDisconnectMidQuery closes pgx connections while their statements
// run (a FLUSH over a backlog, a SELECT, an INSERT); the other session goes
// on and the data is complete.
func TestDisconnectMidQuery(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	setupCounts(t, conn)
	check := sessionCheck(t, conn)
	exec(t, conn,
		"CREATE STREAM big (k BIGINT) WITH (subject = 'rb.big')",
		"CREATE MATERIALIZED VIEW big_groups AS SELECT k % 10 AS g, count(*) AS n FROM big GROUP BY k % 10")
	_, js := testutil.JetStream(t, srv.NATSURL())
	total := publishBacklog(t, js, "rb.big", 0, 20000)

	for _, sql := range []string{"FLUSH", "SELECT * FROM big_groups", "INSERT INTO kv VALUES ('c', 1)"} {
		victim, err := pgconn.Connect(testutil.Context(t, 10*time.Second), srv.DSN())
		if err != nil {
			t.Fatal(err)
		}
		// Send the query and drop the connection without waiting.
		_ = victim.Exec(context.Background(), sql)
		victim.Conn().Close()
		check()
	}
	flush(t, conn)
	wantRows(t, conn, "SELECT sum(n) FROM big_groups", fmt.Sprint(total))
	check()
}

// publishBacklog publishes n events {"k": i} with JetStream async publishing,
// in batches that each wait for their acknowledgements. It returns n.
func publishBacklog(t *testing.T, js jetstream.JetStream, subject string, from, n int) int {
	t.Helper()
	const batch = 1000
	for start := from; start < from+n; start += batch {
		for i := start; i < min(start+batch, from+n); i++ {
			if _, err := js.PublishAsync(subject, []byte(fmt.Sprintf(`{"k": %d}`, i))); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(60 * time.Second):
			t.Fatalf("JetStream did not acknowledge %d messages within 60s", batch)
		}
	}
	return n
}

// TestCancelFlush cancels a running FLUSH with a CancelRequest: the FLUSH
// fails with 57014, the connection and the server go on, and a later FLUSH
// completes with all the data. Sources are paused (ALTER SYSTEM PAUSE)
// while FLUSH waits, so it cannot finish on its own: the test does not race
// the engine. Cancel requests repeat until one finds FLUSH running (one
// that arrives before the statement does nothing, as PostgreSQL's).
func TestCancelFlush(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	watcher := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM big (k BIGINT) WITH (subject = 'rb.big')",
		"CREATE MATERIALIZED VIEW big_groups AS SELECT k % 10 AS g, count(*) AS n, sum(k) AS s FROM big GROUP BY k % 10")
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, watcher, "ALTER SYSTEM PAUSE")
	total := publishBacklog(t, js, "rb.big", 0, 20000)

	result := make(chan error, 1)
	go func() {
		_, err := conn.Exec(context.Background(), "FLUSH")
		result <- err
	}()
	var err error
	deadline := time.Now().Add(30 * time.Second)
wait:
	for {
		if time.Now().After(deadline) {
			t.Fatal("FLUSH was not canceled within 30s of cancel requests")
		}
		if cerr := conn.PgConn().CancelRequest(testutil.Context(t, 10*time.Second)); cerr != nil {
			t.Fatalf("cancel request: %v", cerr)
		}
		select {
		case err = <-result:
			break wait
		case <-time.After(50 * time.Millisecond):
		}
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("canceled FLUSH: want SQLSTATE 57014, got %v", err)
	}
	exec(t, watcher, "ALTER SYSTEM RESUME")
	// The same connection works, and a new FLUSH completes with everything.
	ctx := testutil.Context(t, 2*time.Minute)
	if _, err := conn.Exec(ctx, "FLUSH"); err != nil {
		t.Fatalf("FLUSH after the canceled one: %v", err)
	}
	var n, s int64
	if err := conn.QueryRow(ctx, "SELECT sum(n), sum(s) FROM big_groups").Scan(&n, &s); err != nil {
		t.Fatal(err)
	}
	if n != int64(total) || s != int64(total)*int64(total-1)/2 {
		t.Errorf("after FLUSH: %d rows summing to %d, want %d summing to %d", n, s, total, int64(total)*int64(total-1)/2)
	}
	wantRows(t, watcher, "SELECT 1", "1")
	// A cancel request for an idle connection does nothing.
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, conn, "SELECT count(*) FROM big_groups", "10")
}
