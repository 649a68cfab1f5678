package e2e

import (
	"slices"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestInfoSchemaConstraints: information_schema.table_constraints,
// key_column_usage, views and schemata answer as PostgreSQL 15's do over
// the same schema (a materialized view in streamdb, a plain view in
// PostgreSQL, where information_schema lists only those), including the
// join Metabase and DBeaver run to find primary keys.
func TestInfoSchemaConstraints(t *testing.T) {
	srv := startServer(t)
	sdb := srv.Conn(t)
	pg := testutil.StartPostgres(t)
	pgc := pg.Conn(t)
	schema := []string{
		"CREATE TABLE accounts (id BIGINT PRIMARY KEY, name VARCHAR(20) NOT NULL, balance NUMERIC(10,2))",
		"CREATE TABLE pairs (a INT, b TEXT NOT NULL, c INT NOT NULL, PRIMARY KEY (c, a))",
		"CREATE TABLE nokey (x INT)",
	}
	exec(t, sdb, schema...)
	exec(t, sdb, "CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n FROM accounts")
	exec(t, pgc, schema...)
	exec(t, pgc, "CREATE VIEW totals AS SELECT count(*) AS n FROM accounts")

	for _, q := range []string{
		`SELECT constraint_name, table_name, constraint_type, is_deferrable, initially_deferred, enforced
			FROM information_schema.table_constraints WHERE table_schema = 'public' AND constraint_type <> 'CHECK'`,
		// NOT NULL rows are named after OIDs, which differ.
		`SELECT table_name, count(*) FROM information_schema.table_constraints
			WHERE table_schema = 'public' AND constraint_type = 'CHECK' AND constraint_name LIKE '%_not_null' GROUP BY table_name`,
		`SELECT constraint_name, table_name, column_name, ordinal_position, position_in_unique_constraint
			FROM information_schema.key_column_usage WHERE table_schema = 'public'`,
		`SELECT tc.table_schema, tc.table_name, kcu.column_name, kcu.ordinal_position
			FROM information_schema.table_constraints tc
			JOIN information_schema.key_column_usage kcu
			  ON tc.constraint_name = kcu.constraint_name AND tc.table_schema = kcu.table_schema
			WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = 'public'`,
		`SELECT table_catalog IS NOT NULL, table_schema, table_name, check_option, is_updatable, is_insertable_into
			FROM information_schema.views WHERE table_schema = 'public'`,
		`SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT LIKE 'pg_toast%'`,
	} {
		got, want := testutil.SortedRows(t, sdb, q), testutil.SortedRows(t, pgc, q)
		if !slices.Equal(got, want) {
			t.Errorf("%s\n streamdb: %q\npostgres: %q", testutil.OneLine(q), got, want)
		}
	}
	def := textRows(t, sdb, "SELECT view_definition FROM information_schema.views WHERE table_name = 'totals'")
	if len(def) != 1 || !strings.Contains(def[0], "count(*) AS n") {
		t.Errorf("view_definition: %q", def)
	}
}
