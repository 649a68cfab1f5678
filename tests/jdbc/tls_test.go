// Package jdbc checks that the PostgreSQL JDBC driver (pgjdbc) works
// against streamdb, through testutil.RunJDBC.
package jdbc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestJDBCTLSVerifyFull: pgjdbc connects with sslmode=verify-full against a
// CA made at run time and authenticates with SCRAM-SHA-256; a wrong password
// is 28P01 and a CA that did not sign the server's certificate is refused.
func TestJDBCTLSVerifyFull(t *testing.T) {
	testutil.JDBCJar(t)
	ca := testutil.NewTestCA(t)
	certFile, keyFile := ca.ServerCert(t, "localhost", "127.0.0.1")
	const password = "jdbc secret"
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSWORD", password) // StartServer's readiness check logs in
	srv := testutil.StartServer(t, testutil.ServerOptions{
		Args: []string{"--tls-cert", certFile, "--tls-key", keyFile, "--password-file", pwFile},
	})
	url := func(rootCert, pw string) string {
		return fmt.Sprintf("jdbc:postgresql://localhost:%d/streamdb?user=streamdb&password=%s&sslmode=verify-full&sslrootcert=%s",
			srv.Port, strings.ReplaceAll(pw, " ", "%20"), rootCert)
	}

	got := testutil.RunJDBC(t, url(ca.CertFile, password),
		"CREATE TABLE t (id int PRIMARY KEY, v text)",
		"INSERT INTO t VALUES (1, 'over tls')",
		"SELECT id, v FROM t",
	)
	want := "OK\nOK\n1\tover tls\nOK\n" // verify-full never falls back to plain text
	if got != want {
		t.Fatalf("JDBC over verify-full:\n got %q\nwant %q", got, want)
	}

	got = testutil.RunJDBC(t, url(ca.CertFile, "wrong"), "SELECT 1")
	if !strings.HasPrefix(got, "CONNECT-ERROR 28P01 ") {
		t.Fatalf("JDBC with a wrong password: %q", got)
	}

	other := testutil.NewTestCA(t)
	got = testutil.RunJDBC(t, url(other.CertFile, password), "SELECT 1")
	if !strings.HasPrefix(got, "CONNECT-ERROR 08006 ") || !strings.Contains(got, "SSL") {
		t.Fatalf("JDBC verify-full with another CA: %q", got)
	}
}
