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
	// The built-in functions, aggregates and window functions are in
	// pg_catalog, listed by name with their signatures.
	out = run(`\df lower`)
	mustHaveRow(t, `\df lower`, out, "pg_catalog", "lower", "text", "text", "func")
	out = run(`\df+ lower`)
	mustHaveRow(t, `\df+ lower`, out, "pg_catalog", "lower", "text", "text", "func", "immutable", "safe",
		"streamdb", "invoker", "", "internal", "lower", "lowercase")
	out = run(`\df round`)
	mustHaveRow(t, `\df round`, out, "pg_catalog", "round", "numeric", "numeric, integer", "func")
	out = run(`\dfa string_agg`)
	mustHaveRow(t, `\dfa string_agg`, out, "pg_catalog", "string_agg", "text", "text, text", "agg")
	out = run(`\dfw row_number`)
	mustHaveRow(t, `\dfw row_number`, out, "pg_catalog", "row_number", "bigint", "", "window")
	out = run(`\du`)
	mustHaveRow(t, `\du`, out, "streamdb", "Superuser, Create role, Create DB, Bypass RLS")
	out = run(`\l`)
	mustHaveRow(t, `\l`, out, "streamdb", "streamdb", "UTF8")
	out = run(`\dn`)
	mustHaveRow(t, `\dn`, out, "public", "pg_database_owner")
}
