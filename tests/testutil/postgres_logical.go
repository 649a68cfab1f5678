package testutil

import (
	"testing"
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
