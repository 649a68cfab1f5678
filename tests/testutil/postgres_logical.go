package testutil

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// StartPostgresLogical is StartPostgres with wal_level=logical, as a
// source of logical replication (CREATE SOURCE ... FROM POSTGRES).
func StartPostgresLogical(t testing.TB) *Postgres {
	t.Helper()
	pg := StartPostgres(t)
	pg.opts += " -c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10"
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
