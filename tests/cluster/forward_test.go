package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

const forwardPassword = "forward-secret-7"

// memberDSN is a DSN of server s with the cluster's password, over TLS
// checked against ca when ca is set.
func memberDSN(s *testutil.Server, caFile string) string {
	dsn := fmt.Sprintf("postgres://streamdb:%s@%s/streamdb?connect_timeout=10", forwardPassword, s.Addr)
	if caFile == "" {
		return dsn + "&sslmode=disable"
	}
	return dsn + "&sslmode=verify-full&sslrootcert=" + caFile
}

// connectVia opens a session through server s, polling while the server
// refuses with 57P03 (no coordinator known yet, or one taking over).
func connectVia(t *testing.T, s *testutil.Server, caFile string, timeout time.Duration) *pgx.Conn {
	t.Helper()
	var conn *pgx.Conn
	testutil.Poll(t, timeout, "a session through "+s.Addr, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, memberDSN(s, caFile))
		if err == nil {
			if _, err = c.Exec(ctx, "SELECT 1"); err != nil {
				c.Close(ctx)
			}
		}
		if err != nil {
			return err
		}
		conn = c
		return nil
	})
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// certSerial is the serial number of the certificate in a PEM file.
func certSerial(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert.SerialNumber.String()
}

// peerSerial is the serial of the certificate the server end of a TLS
// session showed.
func peerSerial(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	tc, ok := conn.PgConn().Conn().(*tls.Conn)
	if !ok {
		t.Fatalf("the session is not over TLS: %T", conn.PgConn().Conn())
	}
	return tc.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// TestClusterMembersForwardSessions: every server of a three-server
// cluster (on a three-node NATS cluster, with a password and TLS) serves
// sessions; members relay them to the coordinator, with TLS and SCRAM end
// to end.
func TestClusterMembersForwardSessions(t *testing.T) {
	began := time.Now()
	natsCluster := testutil.StartNATSCluster(t, 3)
	url := natsCluster.URL()
	t.Setenv("PGPASSWORD", forwardPassword) // the helpers' own sessions
	ca := testutil.NewTestCA(t)
	var servers []*testutil.Server
	serial := map[*testutil.Server]string{}
	for range 3 {
		cert, key := ca.ServerCert(t, "127.0.0.1")
		args := append([]string{"--cluster", "c1", "--tls-cert", cert, "--tls-key", key}, memberArgs...)
		s := testutil.StartServer(t, testutil.ServerOptions{NATSURL: url, Standby: true, Args: args,
			Env: []string{"STREAMDB_PASSWORD=" + forwardPassword}})
		servers = append(servers, s)
		serial[s] = certSerial(t, cert)
	}
	_, coord := testutil.ConnectCoordinator(t, 60*time.Second, servers...)
	var members []*testutil.Server
	for _, s := range servers {
		if s != coord {
			members = append(members, s)
		}
	}
	a, b := members[0], members[1]
	t.Logf("coordinator %s, members %s and %s", coord.Addr, a.Addr, b.Addr)

	// DDL through member A, over TLS: the certificate the client checked
	// is the coordinator's, so TLS runs end to end through the member.
	viaA := connectVia(t, a, ca.CertFile, 30*time.Second)
	if got := peerSerial(t, viaA); got != serial[coord] {
		t.Fatalf("TLS through member %s showed certificate %s, want the coordinator's %s (member's is %s)", a.Addr, got, serial[coord], serial[a])
	}
	testutil.MustExec(t, viaA,
		"CREATE TABLE acct (k BIGINT PRIMARY KEY, g BIGINT, v BIGINT)",
		"CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = 'fwd.ev')",
		"CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n, sum(v) AS s FROM acct GROUP BY g",
		"CREATE MATERIALIZED VIEW ev_total AS SELECT count(*) AS n, sum(v) AS s FROM ev")

	// A wrong password through a member fails as on the coordinator.
	ctx := testutil.Context(t, 30*time.Second)
	bad := strings.Replace(memberDSN(b, ""), forwardPassword, "wrong", 1)
	if c, err := pgx.Connect(ctx, bad); err == nil {
		c.Close(ctx)
		t.Fatal("a wrong password through a member was accepted")
	} else {
		testutil.WantCode(t, err, "28P01", "a wrong password through a member")
	}

	// Writes through member B, in the clear; each is read back through
	// member A and the coordinator at once.
	viaB := connectVia(t, b, "", 30*time.Second)
	direct := connectVia(t, coord, "", 30*time.Second)
	readers := []*pgx.Conn{viaA, direct}
	want := map[int64][2]int64{} // g -> count, sum
	var rows int64
	insert := func(n int) {
		t.Helper()
		for range n {
			k := rows
			g, v := k%5, k*3+1
			testutil.MustExec(t, viaB, fmt.Sprintf("INSERT INTO acct VALUES (%d, %d, %d)", k, g, v),
				fmt.Sprintf("INSERT INTO ev VALUES (%d, %d)", k, v))
			rows++
			w := want[g]
			want[g] = [2]int64{w[0] + 1, w[1] + v}
			for _, c := range readers {
				if got := testutil.Scalar(t, c, fmt.Sprintf("SELECT count(*) FROM acct WHERE k = %d", k)); got != "1" {
					t.Fatalf("row %d acknowledged through %s is not read back at once through %s: count %s", k, b.Addr, c.Config().Host+fmt.Sprint(":", c.Config().Port), got)
				}
			}
		}
	}
	insert(40)
	wantRows := func() []string {
		var out []string
		for g, w := range want {
			out = append(out, fmt.Sprintf("%d|%d|%d", g, w[0], w[1]))
		}
		slices.Sort(out)
		return out
	}
	checkEverywhere := func(conns map[string]*pgx.Conn) {
		t.Helper()
		var sum int64
		for _, w := range want {
			sum += w[1]
		}
		for name, c := range conns {
			if got := strings.Join(testutil.SortedRows(t, c, "SELECT g, n, s FROM per_g"), "; "); got != strings.Join(wantRows(), "; ") {
				t.Errorf("per_g through %s: %s, want %s", name, got, strings.Join(wantRows(), "; "))
			}
			if got := strings.Join(testutil.SortedRows(t, c, "SELECT n, s FROM ev_total"), "; "); got != fmt.Sprintf("%d|%d", rows, sum) {
				t.Errorf("ev_total through %s: %s, want %d %d", name, got, rows, sum)
			}
		}
	}
	checkEverywhere(map[string]*pgx.Conn{"member A": viaA, "member B": viaB, "the coordinator": direct})

	// streamdb_nodes through a member lists the whole cluster.
	got := nodes(t, viaA)
	if len(got) != 3 || got[coord.Addr].role != "coordinator" || got[a.Addr].role != "standby" || got[b.Addr].role != "standby" {
		t.Errorf("streamdb_nodes through member %s: %v", a.Addr, got)
	}

	// A CancelRequest sent to a member reaches the coordinator, which
	// runs the session; so does pg_cancel_backend through another member.
	sub := connectVia(t, a, "", 30*time.Second)
	pid := testutil.Scalar(t, sub, "SELECT pg_backend_pid()")
	for _, how := range []string{"a CancelRequest to member " + a.Addr, "pg_cancel_backend through member " + b.Addr} {
		subCtx := testutil.Context(t, time.Minute)
		feed, err := sub.Query(subCtx, "SUBSCRIBE per_g", pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		ended := make(chan error, 1)
		go func() {
			for feed.Next() {
			}
			ended <- feed.Err()
		}()
		select {
		case err := <-ended:
			t.Fatalf("SUBSCRIBE ended before %s: %v", how, err)
		case <-time.After(500 * time.Millisecond):
		}
		if strings.HasPrefix(how, "a CancelRequest") {
			if err := sub.PgConn().CancelRequest(subCtx); err != nil {
				t.Fatal(err)
			}
		} else if got := testutil.Scalar(t, viaB, "SELECT pg_cancel_backend("+pid+")"); got != "t" {
			t.Fatalf("pg_cancel_backend(%s) through member %s: %s", pid, b.Addr, got)
		}
		select {
		case err := <-ended:
			testutil.WantCode(t, err, "57014", "SUBSCRIBE through member "+a.Addr+" canceled by "+how)
		case <-time.After(30 * time.Second):
			t.Fatalf("SUBSCRIBE through a member not canceled within 30s of %s", how)
		}
	}
	fams := a.MetricsAs(t, "streamdb", forwardPassword)
	if n := testutil.MetricValue(t, fams, "streamdb_sessions_forwarded_total", "what", "session"); n < 3 {
		t.Errorf("member %s forwarded %v sessions by its metric, want at least 3", a.Addr, n)
	}
	if n := testutil.MetricValue(t, fams, "streamdb_sessions_forwarded_total", "what", "cancel"); n < 1 {
		t.Errorf("member %s forwarded %v cancel requests by its metric, want at least 1", a.Addr, n)
	}

	// The coordinator killed: a session through a member ends with an
	// error, a member takes over, and sessions through every survivor
	// see every acknowledged write.
	insert(10)
	coord.Kill(t)
	killed := time.Now()
	// Over TLS the member cannot speak to the client: the connection
	// closes. In the clear it says why, with FATAL 57P01.
	for _, c := range []struct {
		conn *pgx.Conn
		what string
	}{{viaA, "over TLS through " + a.Addr}, {viaB, "in the clear through " + b.Addr}} {
		_, err := c.conn.Exec(testutil.Context(t, 30*time.Second), "SELECT 1")
		t.Logf("the session %s after the kill: %v", c.what, err)
		var pe *pgconn.PgError
		switch {
		case err == nil:
			t.Fatalf("the session %s went on after its coordinator was killed", c.what)
		case errors.As(err, &pe) && pe.Code != "57P01":
			t.Errorf("the session %s ended with %s, want 57P01", c.what, pe.Code)
		case c.conn == viaB && pe == nil:
			t.Errorf("the session %s ended without saying why: %v", c.what, err)
		}
	}
	_, coord2 := testutil.ConnectCoordinator(t, 60*time.Second, a, b)
	took := time.Since(killed)
	survivors := map[string]*pgx.Conn{}
	for _, s := range []*testutil.Server{a, b} {
		name := "member " + s.Addr
		if s == coord2 {
			name = "the new coordinator " + s.Addr
		}
		survivors[name] = connectVia(t, s, ca.CertFile, 30*time.Second)
	}
	checkEverywhere(survivors)
	viaB = survivors["member "+b.Addr]
	if b == coord2 {
		viaB = survivors["the new coordinator "+b.Addr]
	}
	readers = slices.Collect(maps.Values(survivors))
	insert(5)
	checkEverywhere(survivors)
	t.Logf("a session through a survivor %s after the kill; test took %s", took.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}

// TestClusterMemberEndsSessionsOfPausedCoordinator: a coordinator paused
// (SIGSTOP) past its lease keeps its sockets open, so a session relayed
// to it would hang; the member ends it once the lease moves, and then
// every server serves again, the paused one too once resumed.
func TestClusterMemberEndsSessionsOfPausedCoordinator(t *testing.T) {
	began := time.Now()
	url := testutil.StartNATS(t)
	args := []string{"--ha-lease-ttl", "3s", "--ha-renew-interval", "500ms"}
	var servers []*testutil.Server
	for range 3 {
		servers = append(servers, testutil.StartClusterMember(t, url, "c2", args...))
	}
	_, coord := testutil.ConnectCoordinator(t, 60*time.Second, servers...)
	var members []*testutil.Server
	for _, s := range servers {
		if s != coord {
			members = append(members, s)
		}
	}
	via := members[0].Conn(t)
	testutil.MustExec(t, via, "CREATE TABLE t (k BIGINT PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)")

	coord.Signal(t, syscall.SIGSTOP)
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			coord.Signal(t, syscall.SIGCONT)
		}
	}()
	_, err := via.Exec(testutil.Context(t, 60*time.Second), "SELECT count(*) FROM t")
	ended := time.Since(paused)
	testutil.WantCode(t, err, "57P01", "a session through a member to a paused coordinator")
	t.Logf("the session through %s ended %s after the pause: %v", members[0].Addr, ended.Round(time.Millisecond), err)

	_, coord2 := testutil.ConnectCoordinator(t, 60*time.Second, members...)
	coord.Signal(t, syscall.SIGCONT)
	resumed = true
	// Resumed, it finds its lease lost and restarts itself as a member.
	testutil.Poll(t, 60*time.Second, "the resumed coordinator to restart as a member", func() error {
		if n := strings.Count(coord.Logs(), "cluster member: forwarding sessions"); n < 2 {
			return fmt.Errorf("it started forwarding %d times", n)
		}
		return nil
	})
	for _, s := range servers {
		c := connectVia(t, s, "", 60*time.Second) // polls while a server refuses with 57P03 (restarting)
		if got := testutil.Scalar(t, c, "SELECT count(*) FROM t"); got != "2" {
			t.Errorf("through %s after the takeover by %s: %s rows, want 2", s.Addr, coord2.Addr, got)
		}
	}
	t.Logf("test took %s", time.Since(began).Round(time.Millisecond))
}
