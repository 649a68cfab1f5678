package recovery

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestPGSourceTLS connects PostgreSQL sources over TLS to a source
// database (ssl=on, server certificate from a test CA, TLS required of
// the roles the sources use) with the CA and a client certificate and
// key kept in secrets: a source that checks the server's certificate
// with sslmode=verify-full, and one that authenticates with a client
// certificate (pg_hba cert). Both mirror their table through a restart
// of PostgreSQL and a kill -9 and restart of streamdb (the secrets are
// read again at each connect); the source's own pg_stat_ssl shows the
// connections encrypted and the client certificate presented. A CA that
// did not sign the server's certificate fails CREATE SOURCE with 08006,
// as does a missing client certificate; ALTER SECRET takes effect at the
// next connect; SHOW SOURCES names the secrets, never their PEM text; a
// secret a source uses is dropped only with CASCADE.
func TestPGSourceTLS(t *testing.T) {
	ca := testutil.NewTestCA(t)
	wrongCA := testutil.NewTestCA(t)
	pg, keyValue := testutil.StartPostgresTLSSource(t, ca)
	src := pg.Conn(t)
	clientCertFile, clientKeyFile := ca.ClientCert(t, "certrepl")
	certReplDSN := strings.Replace(keyValue, "user=repl", "user=certrepl", 1)
	pemOf := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	caPEM, wrongPEM := pemOf(ca.CertFile), pemOf(wrongCA.CertFile)
	keyPEM := pemOf(clientKeyFile)

	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		fmt.Sprintf("CREATE SECRET pg_ca AS '%s'", caPEM),
		fmt.Sprintf("CREATE SECRET wrong_ca AS '%s'", wrongPEM),
		fmt.Sprintf("CREATE SECRET pg_cert AS '%s'", pemOf(clientCertFile)),
		fmt.Sprintf("CREATE SECRET pg_key AS '%s'", keyPEM))

	// A CA that did not sign the server's certificate: the handshake
	// fails, as libpq's "certificate verify failed", a connection failure.
	err := testutil.ExecSimple(conn, time.Minute, fmt.Sprintf("CREATE SOURCE bad FROM POSTGRES (CONNECTION '%s sslmode=verify-full', SSL CERTIFICATE AUTHORITY SECRET wrong_ca, PUBLICATION 'shop') FOR TABLES (public.items AS bad_items)", keyValue))
	if testutil.SQLState(err) != "08006" || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("CREATE SOURCE with a CA that did not sign the server's certificate: %v (SQLSTATE %s), want 08006 naming the certificate", err, testutil.SQLState(err))
	}
	// cert authentication without a client certificate: the source refuses.
	err = testutil.ExecSimple(conn, time.Minute, fmt.Sprintf("CREATE SOURCE bad FROM POSTGRES (CONNECTION '%s sslmode=verify-full', SSL CERTIFICATE AUTHORITY SECRET pg_ca, PUBLICATION 'shop') FOR TABLES (public.items AS bad_items)", certReplDSN))
	if testutil.SQLState(err) != "08006" || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("CREATE SOURCE of a cert-authenticated role without a client certificate: %v (SQLSTATE %s), want 08006", err, testutil.SQLState(err))
	}

	testutil.MustExec(t, conn,
		fmt.Sprintf("CREATE SOURCE shop FROM POSTGRES (CONNECTION '%s sslmode=verify-full', SSL CERTIFICATE AUTHORITY = SECRET pg_ca, PUBLICATION 'shop') FOR TABLES (public.items)", keyValue),
		fmt.Sprintf("CREATE SOURCE shop2 FROM POSTGRES (CONNECTION '%s sslmode=verify-ca', SSL CERTIFICATE AUTHORITY SECRET pg_ca, SSL CERTIFICATE SECRET pg_cert, SSL KEY SECRET pg_key, PUBLICATION 'shop') FOR TABLES (public.items AS items2)", certReplDSN))

	insertAt := 100
	same := func(when string) {
		t.Helper()
		testutil.MustExec(t, src, fmt.Sprintf("INSERT INTO items VALUES (%d, 'after %s')", insertAt, when),
			fmt.Sprintf("UPDATE items SET name = name || '+' WHERE id = %d", insertAt%20+1),
			fmt.Sprintf("DELETE FROM items WHERE id = %d", insertAt%20+2))
		insertAt++
		cols, want := mustQuery(t, src, "SELECT * FROM items ORDER BY id")
		for _, q := range []string{"SELECT * FROM items ORDER BY id", "SELECT * FROM items2 ORDER BY id"} {
			testutil.Poll(t, 2*time.Minute, when+": "+q+" to equal the source", func() error {
				_, got, err := queryText(conn, time.Minute, q)
				if err != nil {
					return err
				}
				if d := diffRows(cols, want, got, nil); d != "" {
					return fmt.Errorf("%d rows, source %d: %s", len(got), len(want), d)
				}
				return nil
			})
		}
		// Both appliers stream over TLS; shop2's presents certrepl's
		// certificate.
		testutil.Poll(t, time.Minute, when+": the sources' replication connections to be encrypted", func() error {
			_, rows, err := queryText(src, time.Minute, "SELECT a.usename, s.ssl, coalesce(s.client_dn, '') FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) "+
				"WHERE a.application_name = 'streamdb' AND a.backend_type = 'walsender' ORDER BY 1")
			if err != nil {
				return err
			}
			if fmt.Sprint(rows) != "[[certrepl t /CN=certrepl] [repl t ]]" {
				return fmt.Errorf("walsenders of streamdb (user, ssl, client DN): %v", rows)
			}
			return nil
		})
	}
	same("CREATE SOURCE")

	shown := testutil.Scalar(t, conn, "SELECT connection FROM streamdb_sources WHERE name = 'shop2'")
	if !strings.Contains(shown, "SSL CERTIFICATE AUTHORITY SECRET pg_ca, SSL CERTIFICATE SECRET pg_cert, SSL KEY SECRET pg_key") {
		t.Errorf("streamdb_sources shows shop2's connection as %q, want its SSL secrets by name", shown)
	}
	for _, q := range []string{"SHOW SOURCES", "SELECT * FROM streamdb_sources", "SELECT * FROM streamdb_dependencies"} {
		_, rows := mustQuery(t, conn, q)
		if text := fmt.Sprint(rows); strings.Contains(text, "BEGIN") || strings.Contains(text, keyPEM[40:80]) {
			t.Errorf("%s shows a secret's PEM text: %s", q, text)
		}
	}
	if strings.Contains(srv.Logs(), keyPEM[40:80]) {
		t.Error("the server's log shows the client key")
	}
	for _, name := range []string{"pg_ca", "pg_key"} {
		if err := testutil.ExecSimple(conn, time.Minute, "DROP SECRET "+name); testutil.SQLState(err) != "2BP01" {
			t.Errorf("DROP SECRET %s, which a source uses: %v, want 2BP01", name, err)
		}
	}

	pg.Restart(t, "fast")
	src = pg.Conn(t)
	same("a restart of PostgreSQL")

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	same("kill -9 and restart of streamdb")

	// ALTER SECRET takes effect at the next connect: with the wrong CA
	// shop cannot reconnect after PostgreSQL restarts; with the right one
	// again it does.
	testutil.MustExec(t, conn, fmt.Sprintf("ALTER SECRET pg_ca AS '%s'", wrongPEM))
	pg.Restart(t, "fast")
	src = pg.Conn(t)
	testutil.Poll(t, 2*time.Minute, "shop to fail its certificate check", func() error {
		status := testutil.Scalar(t, conn, "SELECT status FROM streamdb_sources WHERE name = 'shop'")
		if !strings.Contains(status, "retrying") || !strings.Contains(status, "certificate") {
			return fmt.Errorf("status %q", status)
		}
		return nil
	})
	testutil.MustExec(t, conn, fmt.Sprintf("ALTER SECRET pg_ca AS '%s'", caPEM))
	same("ALTER SECRET back to the right CA")

	testutil.MustExec(t, conn, "DROP SECRET pg_key CASCADE")
	if n := testutil.Scalar(t, conn, "SELECT count(*) FROM streamdb_sources"); n != "1" {
		t.Errorf("%s sources after DROP SECRET pg_key CASCADE, want 1 (shop)", n)
	}
	testutil.MustExec(t, conn, "DROP SOURCE shop CASCADE", "DROP SECRET pg_ca, pg_cert, wrong_ca")
	if n := testutil.Scalar(t, src, "SELECT count(*) FROM pg_replication_slots"); n != "0" {
		t.Errorf("%s replication slots left on the source after dropping the sources, want 0", n)
	}
}
