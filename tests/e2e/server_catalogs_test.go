package e2e

import (
	"testing"

	"streamdb/tests/testutil"
)

// TestServerCatalogs: pg_database lists the database and pg_settings the
// server's settings, with their current values, as tools read them.
func TestServerCatalogs(t *testing.T) {
	t.Parallel()
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_MAX_CONNECTIONS=77"}})
	conn := srv.Conn(t)
	wantRows(t, conn, "SELECT datname, encoding, datallowconn FROM pg_database", "streamdb 6 t")
	wantRows(t, conn, "SELECT pg_encoding_to_char(encoding) FROM pg_catalog.pg_database WHERE datname = 'streamdb'", "UTF8")
	wantRows(t, conn, "SELECT setting, context, source, boot_val FROM pg_settings WHERE name = 'max_connections'",
		"77 postmaster configuration file 100")
	exec(t, conn, "SET execution.checkpointing.interval = '7s'")
	wantRows(t, conn, "SELECT setting, context FROM pg_settings WHERE name = 'execution.checkpointing.interval'", "7s superuser")
	wantRows(t, conn, "SELECT setting, context FROM pg_settings WHERE name = 'DateStyle' OR name = 'datestyle'", "ISO, MDY user")
}
