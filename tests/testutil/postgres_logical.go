package testutil

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
)

// StartPostgresLogical is StartPostgres with wal_level=logical, as a
// source of logical replication (CREATE SOURCE ... FROM POSTGRES).
func StartPostgresLogical(t testing.TB) *Postgres {
	t.Helper()
	return startPostgresLogical(t, nil)
}

// startPostgresLogical starts a PostgreSQL, lets prepare (when not nil)
// write files into its data directory and return more server options,
// and restarts it with wal_level=logical and those options.
func startPostgresLogical(t testing.TB, prepare func(pg *Postgres) string) *Postgres {
	t.Helper()
	pg := StartPostgres(t)
	pg.opts += " -c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10"
	if prepare != nil {
		pg.opts += " " + prepare(pg)
	}
	pg.Restart(t, "fast")
	return pg
}

// Restart stops the server (pg_ctl stop -m mode: "fast" or "immediate")
// and starts it again with the same options, port and data.
func (pg *Postgres) Restart(t testing.TB, mode string) {
	t.Helper()
	if out, err := pg.command("pg_ctl", "-D", pg.DataDir, "-m", mode, "-w", "-t", "60", "stop").CombinedOutput(); err != nil {
		t.Fatalf("testutil: pg_ctl stop -m %s: %v\n%s\n--- log ---\n%s", mode, err, out, tailFile(pg.LogPath, 30))
	}
	if out, err := pg.command("pg_ctl", "-D", pg.DataDir, "-l", pg.LogPath, "-o", pg.opts,
		"-w", "-t", "60", "start").CombinedOutput(); err != nil {
		t.Fatalf("testutil: pg_ctl start: %v\n%s\n--- log ---\n%s", err, out, tailFile(pg.LogPath, 30))
	}
}

// StartPostgresPasswordSource starts a PostgreSQL for logical
// replication whose table items (id, name; 20 rows) is published as shop
// to a role repl that must give password over TCP (the test's own
// postgres stays trusted). It returns the server and repl's key=value
// connection string without the password. It fails the test if repl gets
// in without one, since a test of passwords would then prove nothing.
func StartPostgresPasswordSource(t testing.TB, password string) (*Postgres, string) {
	t.Helper()
	pg := StartPostgresLogical(t)
	src := pg.Conn(t)
	MustExec(t, src,
		"CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)",
		"INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 20) g",
		"CREATE PUBLICATION shop FOR TABLE items",
		fmt.Sprintf("CREATE ROLE repl LOGIN REPLICATION PASSWORD '%s'", password),
		"GRANT SELECT ON items TO repl")
	hba := "local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost replication postgres 127.0.0.1/32 trust\n" +
		"host all repl 127.0.0.1/32 scram-sha-256\nhost replication repl 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(pg.DataDir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	MustExec(t, src, "SELECT pg_reload_conf()")
	keyValue := fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres user=repl sslmode=disable connect_timeout=10", pg.Port)
	if c, err := pgx.Connect(context.Background(), keyValue); err == nil {
		c.Close(context.Background())
		t.Fatal("the source database lets repl in without a password; the test would prove nothing")
	}
	return pg, keyValue
}

// StartPostgresTLSSource starts a PostgreSQL for logical replication
// with ssl=on, its server certificate issued by ca for 127.0.0.1, whose
// table items (id, name; 20 rows) is published as shop. Two roles may
// read it, over TLS only: repl without a password, and certrepl with a
// client certificate ca issued for it (pg_hba cert authentication). The
// test's own postgres stays trusted without TLS. It returns the server
// and the key=value connection string of repl without an sslmode.
func StartPostgresTLSSource(t testing.TB, ca *TestCA) (*Postgres, string) {
	t.Helper()
	pg := startPostgresLogical(t, func(pg *Postgres) string {
		certFile, keyFile := ca.ServerCert(t, "127.0.0.1")
		for name, from := range map[string]string{"server.crt": certFile, "server.key": keyFile, "root.crt": ca.CertFile} {
			pg.copyIntoDataDir(t, from, name)
		}
		return "-c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key -c ssl_ca_file=root.crt"
	})
	src := pg.Conn(t)
	MustExec(t, src,
		"CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)",
		"INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 20) g",
		"CREATE PUBLICATION shop FOR TABLE items",
		"CREATE ROLE repl LOGIN REPLICATION", "CREATE ROLE certrepl LOGIN REPLICATION",
		"GRANT SELECT ON items TO repl, certrepl")
	hba := "local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost replication postgres 127.0.0.1/32 trust\n" +
		"hostssl all repl 127.0.0.1/32 trust\nhostssl replication repl 127.0.0.1/32 trust\n" +
		"hostssl all certrepl 127.0.0.1/32 cert\nhostssl replication certrepl 127.0.0.1/32 cert\n"
	if err := os.WriteFile(filepath.Join(pg.DataDir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	MustExec(t, src, "SELECT pg_reload_conf()")
	keyValue := fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres user=repl connect_timeout=10", pg.Port)
	if c, err := pgx.Connect(context.Background(), keyValue+" sslmode=disable"); err == nil {
		c.Close(context.Background())
		t.Fatal("the source database lets repl in without TLS; the test would prove nothing")
	}
	return pg, keyValue
}

// copyIntoDataDir copies file from into the data directory as name,
// owned by the user the server runs as with mode 0600 (PostgreSQL
// refuses a key file others may read).
func (pg *Postgres) copyIntoDataDir(t testing.TB, from, name string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(pg.DataDir, name)
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if pg.runAs == "" {
		return
	}
	u, err := user.Lookup(pg.runAs)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(to, uid, gid); err != nil {
		t.Fatal(err)
	}
}
