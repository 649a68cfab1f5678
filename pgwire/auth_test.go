package pgwire_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/pgwire"
	"streamdb/tests/testutil"
)

// startSecureServer serves the fake engine on ln with sec.
func startSecureServer(t *testing.T, ln net.Listener, sec pgwire.Security) string {
	t.Helper()
	var out io.Writer = io.Discard
	if testing.Verbose() {
		out = os.Stderr
	}
	srv := pgwire.NewServer(newFakeEngine(), slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	srv.SetSecurity(sec)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, pgwire.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return ln.Addr().String()
}

func listen(t *testing.T, host string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func secureSecurity(t *testing.T, ca *testutil.TestCA, hosts ...string) pgwire.Security {
	t.Helper()
	certFile, keyFile := ca.ServerCert(t, hosts...)
	tlsCfg, warning, err := pgwire.LoadTLSConfig(certFile, keyFile)
	if err != nil || warning != "" {
		t.Fatalf("LoadTLSConfig: %v %q", err, warning)
	}
	v, err := pgwire.NewSCRAMVerifier("s3cret pass")
	if err != nil {
		t.Fatal(err)
	}
	return pgwire.Security{TLS: tlsCfg, Auth: pgwire.StaticUsers{"streamdb": v}}
}

// tryConnect connects with dsn (and, if set, tlsCfg) and runs a query.
func tryConnect(t *testing.T, dsn string, tune func(*pgconn.Config)) (*pgx.Conn, error) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(&cfg.Config)
	}
	conn, err := pgx.ConnectConfig(testContext(t), cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	var n int32
	if err := conn.QueryRow(testContext(t), "select 7").Scan(&n); err != nil || n != 7 {
		t.Fatalf("query after login: %d, %v", n, err)
	}
	return conn, nil
}

func TestSCRAMOverTLSWithChannelBinding(t *testing.T) {
	ca := testutil.NewTestCA(t)
	addr := startSecureServer(t, listen(t, "127.0.0.1"), secureSecurity(t, ca, "localhost", "127.0.0.1"))
	_, port, _ := net.SplitHostPort(addr)
	base := "postgres://streamdb:s3cret%20pass@localhost:" + port + "/db"

	// verify-full with the test CA; channel_binding=require fails unless
	// SCRAM-SHA-256-PLUS ran and the server proved the binding.
	conn, err := tryConnect(t, base+"?sslmode=verify-full&channel_binding=require", func(c *pgconn.Config) {
		c.TLSConfig = ca.ClientTLS("localhost")
	})
	if err != nil {
		t.Fatalf("verify-full with channel binding: %v", err)
	}
	if _, ok := conn.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("connection is %T, not TLS", conn.PgConn().Conn())
	}

	// Wrong password over TLS: 28P01.
	_, err = tryConnect(t, strings.Replace(base, "s3cret%20pass", "wrong", 1)+"?sslmode=verify-full", func(c *pgconn.Config) {
		c.TLSConfig = ca.ClientTLS("localhost")
	})
	if code := pgCode(err); code != "28P01" || !strings.Contains(err.Error(), `password authentication failed for user "streamdb"`) {
		t.Fatalf("wrong password: %v", err)
	}
	// Unknown user: the same answer.
	_, err = tryConnect(t, strings.Replace(base, "streamdb:", "mallory:", 1)+"?sslmode=verify-full", func(c *pgconn.Config) {
		c.TLSConfig = ca.ClientTLS("localhost")
	})
	if code := pgCode(err); code != "28P01" || !strings.Contains(err.Error(), `password authentication failed for user "mallory"`) {
		t.Fatalf("unknown user: %v", err)
	}
	// A CA that did not sign the certificate: the client refuses.
	other := testutil.NewTestCA(t)
	if _, err := tryConnect(t, base+"?sslmode=verify-full", func(c *pgconn.Config) {
		c.TLSConfig = other.ClientTLS("localhost")
	}); err == nil {
		t.Fatal("verify-full accepted a certificate from another CA")
	}
	// Without TLS the password still works (no channel binding on offer).
	if _, err := tryConnect(t, base+"?sslmode=disable", nil); err != nil {
		t.Fatalf("plain SCRAM: %v", err)
	}
	if _, err := tryConnect(t, base+"?sslmode=disable&channel_binding=require", nil); err == nil {
		t.Fatal("channel_binding=require succeeded without TLS")
	}
	// No password at all: refused, on loopback too.
	_, err = tryConnect(t, "postgres://streamdb@127.0.0.1:"+port+"/db?sslmode=disable", nil)
	if err == nil {
		t.Fatal("connected without a password")
	}
}

func TestNoPasswordTrustsLoopbackOnly(t *testing.T) {
	addr := startSecureServer(t, listen(t, "127.0.0.1"), pgwire.Security{})
	if _, err := tryConnect(t, "postgres://anyone@"+addr+"/db?sslmode=disable", nil); err != nil {
		t.Fatalf("loopback without password: %v", err)
	}
	// TLS is not configured: sslmode=require is refused by the client.
	if _, err := tryConnect(t, "postgres://anyone@"+addr+"/db?sslmode=require", nil); err == nil {
		t.Fatal("sslmode=require succeeded without a server certificate")
	}
}

// localNonLoopback is an address of this host on a non-loopback interface,
// so that a connection to it comes from a non-loopback address.
func localNonLoopback(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address on this host")
	return ""
}

func TestRemoteConnections(t *testing.T) {
	ip := localNonLoopback(t)
	ca := testutil.NewTestCA(t)

	// No password: a remote client is refused with 28000 and a hint.
	addr := startSecureServer(t, listen(t, ip), pgwire.Security{})
	_, err := tryConnect(t, "postgres://streamdb@"+addr+"/db?sslmode=disable", nil)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28000" || !strings.Contains(pgErr.Message, ip) || pgErr.Hint == "" {
		t.Fatalf("remote without a password: %v", err)
	}

	// ssl_require_remote: plain refused (28000) even with the right
	// password; TLS accepted.
	sec := secureSecurity(t, ca, ip)
	sec.RequireTLSRemote = true
	addr = startSecureServer(t, listen(t, ip), sec)
	dsn := "postgres://streamdb:s3cret%20pass@" + addr + "/db"
	_, err = tryConnect(t, dsn+"?sslmode=disable", nil)
	if !errors.As(err, &pgErr) || pgErr.Code != "28000" || !strings.Contains(pgErr.Message, "must use TLS") {
		t.Fatalf("remote plain with ssl_require_remote: %v", err)
	}
	if _, err := tryConnect(t, dsn+"?sslmode=verify-full&channel_binding=require", func(c *pgconn.Config) {
		c.TLSConfig = ca.ClientTLS(ip)
	}); err != nil {
		t.Fatalf("remote TLS with ssl_require_remote: %v", err)
	}
}

func TestSSLRequestNegotiation(t *testing.T) {
	ca := testutil.NewTestCA(t)
	addr := startSecureServer(t, listen(t, "127.0.0.1"), secureSecurity(t, ca, "127.0.0.1"))
	sslRequest := []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}
	gssRequest := []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30}
	answer := func(nc net.Conn) byte {
		b := make([]byte, 1)
		if _, err := io.ReadFull(nc, b); err != nil {
			t.Fatal(err)
		}
		return b[0]
	}
	dial := func() net.Conn {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return nc
	}

	// GSSEncRequest is declined, then SSLRequest accepted.
	nc := dial()
	nc.Write(gssRequest)
	if b := answer(nc); b != 'N' {
		t.Fatalf("GSSEncRequest answered %q", b)
	}
	nc.Write(sslRequest)
	if b := answer(nc); b != 'S' {
		t.Fatalf("SSLRequest answered %q", b)
	}
	tc := tls.Client(nc, ca.ClientTLS("127.0.0.1"))
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake: %v", err)
	}

	// Bytes sent in the clear right behind the SSLRequest are refused
	// rather than taken as if they had come over TLS.
	nc = dial()
	nc.Write(append(slices.Clone(sslRequest), 'Q', 0, 0, 0, 4))
	b := answer(nc)
	rest, _ := io.ReadAll(nc)
	if b != 'E' || !strings.Contains(string(rest), "received unencrypted data after SSL request") {
		t.Fatalf("data after SSLRequest: %q %q", b, rest)
	}
}
