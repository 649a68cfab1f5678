package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// dialAuth connects with dsn and returns the connection or the error.
func dialAuth(t *testing.T, dsn string) (*pgx.Conn, error) {
	t.Helper()
	conn, err := pgx.Connect(testutil.Context(t, 30*time.Second), dsn)
	if err == nil {
		t.Cleanup(func() { conn.Close(context.Background()) })
	}
	return conn, err
}

// runPsql runs psql with extra environment and arguments (connection
// first), and returns its combined output.
func runPsql(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, "psql", append([]string{"-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-w"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestPasswordRequired: with STREAMDB_PASSWORD set, every connection
// (loopback too) runs SCRAM-SHA-256 as user streamdb.
func TestPasswordRequired(t *testing.T) {
	const password = "correct horse battery"
	// The helper's readiness probe connects with libpq's environment.
	t.Setenv("PGPASSWORD", password)
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_PASSWORD=" + password}})
	url := func(userinfo string) string {
		return fmt.Sprintf("postgres://%s@%s/streamdb?sslmode=disable", userinfo, srv.Addr)
	}
	conn, err := dialAuth(t, url("streamdb:correct%20horse%20battery"))
	if err != nil {
		t.Fatalf("right password: %v", err)
	}
	if got := textRows(t, conn, "SELECT 1 + 1"); len(got) != 1 || got[0] != "2" {
		t.Fatalf("query: %v", got)
	}

	t.Setenv("PGPASSWORD", "")
	_, err = dialAuth(t, url("streamdb:wrong"))
	if pe := wantCode(t, err, "28P01"); pe != nil && pe.Message != `password authentication failed for user "streamdb"` {
		t.Errorf("message: %s", pe.Message)
	}
	_, err = dialAuth(t, url("mallory:correct%20horse%20battery"))
	if pe := wantCode(t, err, "28P01"); pe != nil && pe.Message != `password authentication failed for user "mallory"` {
		t.Errorf("message: %s", pe.Message)
	}
	_, err = dialAuth(t, url("streamdb"))
	wantCode(t, err, "28P01")

	// psql over loopback needs the password too.
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=streamdb dbname=streamdb sslmode=disable", srv.Port)
	if out, err := runPsql(t, []string{"PGPASSWORD=wrong"}, conninfo, "-c", "SELECT 1"); err == nil || !strings.Contains(out, "password authentication failed") {
		t.Fatalf("psql with a wrong password: %v\n%s", err, out)
	}
	if out, err := runPsql(t, []string{"PGPASSWORD=" + password}, conninfo, "-c", "SELECT 42"); err != nil || strings.TrimSpace(out) != "42" {
		t.Fatalf("psql with the password: %v\n%s", err, out)
	}
	if strings.Contains(srv.Logs(), password) {
		t.Error("the server log shows the password")
	}
}

// TestTLSVerifyFull: --tls-cert/--tls-key with a CA made here, the password
// from --password-file; pgx and psql connect with sslmode=verify-full and
// SCRAM-SHA-256-PLUS (channel binding).
func TestTLSVerifyFull(t *testing.T) {
	ca := testutil.NewTestCA(t)
	certFile, keyFile := ca.ServerCert(t, "localhost", "127.0.0.1")
	const password = "pa$$ word"
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSWORD", password)
	srv := testutil.StartServer(t, testutil.ServerOptions{
		Args: []string{"--tls-cert", certFile, "--tls-key", keyFile, "--password-file", pwFile},
	})

	base := fmt.Sprintf("postgres://streamdb@localhost:%d/streamdb?sslrootcert=%s", srv.Port, ca.CertFile)
	conn, err := dialAuth(t, base+"&sslmode=verify-full&channel_binding=require")
	if err != nil {
		t.Fatalf("pgx verify-full with channel binding: %v", err)
	}
	tc, ok := conn.PgConn().Conn().(*tls.Conn)
	if !ok {
		t.Fatalf("connection is %T, not TLS", conn.PgConn().Conn())
	}
	if cs := tc.ConnectionState(); !cs.HandshakeComplete || cs.PeerCertificates[0].Subject.CommonName != "localhost" {
		t.Fatalf("TLS state: %+v", cs)
	}
	if got := textRows(t, conn, "SELECT 'over tls'"); len(got) != 1 || got[0] != "over tls" {
		t.Fatalf("query: %v", got)
	}
	if _, err := dialAuth(t, base+"&sslmode=require"); err != nil {
		t.Fatalf("pgx sslmode=require: %v", err)
	}
	// A wrong password over TLS is still 28P01.
	t.Setenv("PGPASSWORD", "nope")
	_, err = dialAuth(t, base+"&sslmode=verify-full")
	wantCode(t, err, "28P01")
	// A CA that did not sign the server's certificate fails verify-full.
	other := testutil.NewTestCA(t)
	if _, err := dialAuth(t, strings.Replace(base, ca.CertFile, other.CertFile, 1)+"&sslmode=verify-full"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("verify-full with another CA: %v", err)
	}

	conninfo := fmt.Sprintf("host=localhost port=%d user=streamdb dbname=streamdb sslmode=verify-full sslrootcert=%s channel_binding=require", srv.Port, ca.CertFile)
	out, err := runPsql(t, []string{"PGPASSWORD=" + password}, conninfo, "-c", `\conninfo`, "-c", "SELECT 7")
	if err != nil || !strings.Contains(out, "SSL connection (protocol: TLSv1.3") || !strings.HasSuffix(strings.TrimSpace(out), "7") {
		t.Fatalf("psql verify-full: %v\n%s", err, out)
	}
	// psql with PGSSLROOTCERT and no password prompt possible: refused.
	out, err = runPsql(t, []string{"PGSSLROOTCERT=" + ca.CertFile, "PGPASSWORD=wrong"},
		fmt.Sprintf("host=localhost port=%d user=streamdb dbname=streamdb sslmode=verify-full", srv.Port), "-c", "SELECT 1")
	if err == nil || !strings.Contains(out, `password authentication failed for user "streamdb"`) {
		t.Fatalf("psql with a wrong password: %v\n%s", err, out)
	}
}

// TestNoPasswordLoopbackTrusted: without a password the server works as
// before on loopback (the README's psql line), declines TLS when it has no
// certificate, and says at startup that it trusts loopback.
func TestNoPasswordLoopbackTrusted(t *testing.T) {
	t.Setenv("PGPASSWORD", "")
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	out, err := runPsql(t, nil, "-h", "127.0.0.1", "-p", fmt.Sprint(srv.Port), "-U", "streamdb", "streamdb", "-c", "SELECT 3")
	if err != nil || strings.TrimSpace(out) != "3" {
		t.Fatalf("psql without a password: %v\n%s", err, out)
	}
	if _, err := dialAuth(t, fmt.Sprintf("postgres://anyone@%s/streamdb?sslmode=disable", srv.Addr)); err != nil {
		t.Fatalf("pgx without a password: %v", err)
	}
	if _, err := dialAuth(t, fmt.Sprintf("postgres://streamdb@%s/streamdb?sslmode=require", srv.Addr)); err == nil {
		t.Fatal("sslmode=require succeeded without --tls-cert")
	}
	if logs := srv.Logs(); !strings.Contains(logs, "no password is set") {
		t.Fatalf("no startup warning in the log:\n%s", logs)
	}
}

// TestRequireTLSRemote: --tls-require-remote is read and shown; it needs a
// certificate. (Refusal of a remote plain connection is tested in pgwire
// over a non-loopback interface: every address a test reaches here through
// StartServer is loopback.)
func TestRequireTLSRemote(t *testing.T) {
	bin := testutil.BuildServer(t)
	cmd := osexec.Command(bin, "--tls-require-remote", "--data-dir", t.TempDir(), "--http-listen", "", "--listen", fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "needs TLS") {
		t.Fatalf("--tls-require-remote without a certificate: %v\n%s", err, out)
	}

	ca := testutil.NewTestCA(t)
	certFile, keyFile := ca.ServerCert(t, "localhost", "127.0.0.1")
	t.Setenv("PGPASSWORD", "")
	srv := testutil.StartServer(t, testutil.ServerOptions{
		Args: []string{"--tls-cert", certFile, "--tls-key", keyFile, "--tls-require-remote"},
	})
	conn := srv.Conn(t) // loopback in the clear is still allowed
	if got := textRows(t, conn, "SHOW ssl_require_remote"); len(got) != 1 || got[0] != "true" {
		t.Fatalf("SHOW ssl_require_remote: %v", got)
	}
	if !strings.Contains(srv.Logs(), "require_tls_remote=true") {
		t.Fatalf("log:\n%s", srv.Logs())
	}
}
