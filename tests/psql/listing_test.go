package psql

import (
	"testing"

	"streamdb/tests/testutil"
)

// TestListingCommands: psql's \df (pg_proc), \du, \l and \dn run without
// error and list what streamdb has: no user functions, the bootstrap
// superuser, one database and schema public.
func TestListingCommands(t *testing.T) {
	bin := psqlBin(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	run := func(c string) string { return runPsql(t, bin, srv.Port, "streamdb", c) }

	out := run(`\df`)
	mustContain(t, `\df`, out, "List of functions", "(0 rows)")
	out = run(`\dfS int4in`)
	mustHaveRow(t, `\dfS int4in`, out, "pg_catalog", "int4in")
	out = run(`\du`)
	mustHaveRow(t, `\du`, out, "streamdb", "Superuser, Create role, Create DB, Bypass RLS")
	out = run(`\l`)
	mustHaveRow(t, `\l`, out, "streamdb", "streamdb", "UTF8")
	out = run(`\dn`)
	mustHaveRow(t, `\dn`, out, "public", "pg_database_owner")
}
