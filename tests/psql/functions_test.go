package psql

import (
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestCatalogFunctionsMatchPostgres runs the functions, operators and
// catalog queries that drivers and tools send (pgjdbc, psycopg,
// SQLAlchemy, Grafana, DBeaver) against streamdb and against PostgreSQL 15
// with the same table, and compares column names and rows. Arrays are
// compared in their text form.
func TestCatalogFunctionsMatchPostgres(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	const ddl = "CREATE TABLE accounts (id BIGINT PRIMARY KEY, name VARCHAR(20) NOT NULL, balance NUMERIC(10,2))"
	pgConn, sdbConn := pg.Conn(t), srv.Conn(t)
	execAll(t, pgConn, ddl)
	execAll(t, sdbConn, ddl)
	queries := []string{
		"SELECT 'pg_catalog' ~ '^pg_', 'public' ~ '^pg_', 'public' !~ '^pg_'",
		"SELECT current_schema(), current_schema, current_schemas(true), current_schemas(false)",
		"SELECT (current_schemas(true))[1], (current_schemas(true))[3], array_upper(current_schemas(true), 1)",
		"SELECT ARRAY['a', 'b c', NULL], ARRAY[1, 2], array_to_string(ARRAY['x', 'y'], '-'), string_to_array('a,b', ',')",
		"SELECT 3 = ANY(ARRAY[1, 2, 3]), 4 = ANY(ARRAY[1, 2]), 3 > ALL(ARRAY[1, 2]), 5 = ANY(ARRAY[1, NULL])",
		"SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = ANY(current_schemas(true)) ORDER BY 1",
		"SELECT current_setting('server_version_num')::int >= 150000, current_setting('standard_conforming_strings')",
		"SELECT 'pg_class'::regclass, 'pg_catalog.pg_class'::regclass::oid, 'int4'::regtype, 'integer'::regtype::oid, 'pg_catalog.array_in'::regproc::oid",
		"SELECT typname, typlen, typarray, typelem, typcategory, typinput = 'array_in'::regproc FROM pg_type WHERE typname IN ('int8', '_int8', 'text', '_text', 'numeric', 'interval') ORDER BY 1",
		"SELECT c.relname, c.relkind, a.attname, a.attnum, a.attnotnull, t.typname, a.atttypmod FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid JOIN pg_type t ON t.oid = a.atttypid WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 ORDER BY c.relname, a.attnum",
		"SELECT i.indisprimary, i.indkey, pg_get_indexdef(i.indexrelid), ci.relname FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid WHERE i.indrelid = 'accounts'::regclass",
		"SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'accounts'::regclass",
		"SELECT quote_ident('Mixed Case'), quote_ident('plain'), format('%s.%I = %L', 'public', 'A', 'it''s'), replace('pg_temp_3', 'pg_temp_', 'pg_toast_temp_')",
		"SELECT pg_typeof(1), pg_typeof('a'::text), pg_typeof(1.5), now() > '2000-01-01'::timestamptz, current_timestamp IS NOT NULL",
		"SELECT obj_description('accounts'::regclass, 'pg_class'), has_table_privilege('accounts', 'SELECT'), pg_get_expr(NULL, 0) IS NULL",
	}
	for _, q := range queries {
		wantCols, want, err := testutil.QueryText(pgConn, 30*time.Second, q, "NULL")
		if err != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, err)
		}
		gotCols, got, err := testutil.QueryText(sdbConn, 30*time.Second, q, "NULL")
		if err != nil {
			t.Errorf("streamdb: %s: %v", q, err)
			continue
		}
		if g, w := strings.Join(gotCols, "|"), strings.Join(wantCols, "|"); g != w {
			t.Errorf("%s\ncolumns: streamdb %s, PostgreSQL %s", q, g, w)
		}
		if g, w := rowsText(got), rowsText(want); g != w {
			t.Errorf("%s\nstreamdb:\n%s\nPostgreSQL:\n%s", q, g, w)
		}
	}
}

func rowsText(rows [][]string) string {
	var lines []string
	for _, r := range rows {
		lines = append(lines, strings.Join(r, " | "))
	}
	return strings.Join(lines, "\n")
}
