package testutil

import (
	"fmt"
	"path/filepath"
	"testing"
)

// StartPostgresDurable is StartPostgres with PostgreSQL's durability
// settings back at their defaults (fsync, synchronous_commit and
// full_page_writes on), for comparing what an acknowledged write costs:
// each COMMIT then waits for its WAL to be flushed to disk.
func StartPostgresDurable(t testing.TB) *Postgres {
	t.Helper()
	pg := StartPostgres(t)
	if out, err := pg.command("pg_ctl", "-D", pg.DataDir, "-m", "fast", "-w", "stop").CombinedOutput(); err != nil {
		t.Fatalf("testutil: pg_ctl stop: %v\n%s", err, out)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=on "+
		"-c synchronous_commit=on -c full_page_writes=on -c TimeZone=UTC", pg.Port, filepath.Dir(pg.LogPath))
	if out, err := pg.command("pg_ctl", "-D", pg.DataDir, "-l", pg.LogPath, "-o", opts,
		"-w", "-t", "60", "start").CombinedOutput(); err != nil {
		t.Fatalf("testutil: pg_ctl start (durable): %v\n%s\n--- log ---\n%s", err, out, tailFile(pg.LogPath, 30))
	}
	return pg
}
