package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// arrayExprs are array expressions whose result types (OIDs), text and
// binary forms, or SQLSTATEs must be PostgreSQL 15's.
var arrayExprs = []string{
	// Literals and casts.
	`'{1,2,3}'::int[]`,
	`'{ 1 , 2 }'::int4[]`,
	`'{}'::int[]`,
	`'{a,"b c",NULL,"",null,"NULL"}'::text[]`,
	`'{a\,b,"q\"x",c\\d, x y }'::text[]`,
	`'{1,2}'::_int4`,
	`'{1,2}'::int2[]`,
	`'{1,2}'::bigint[]`,
	`CAST('{1,NULL}' AS bigint[])`,
	`'{1.5,NaN,-0.00}'::numeric[]`,
	`'{1.5,Infinity}'::float8[]`,
	`'{1.5}'::real[]`,
	`'{t,false,NULL}'::bool[]`,
	`'{a,b}'::varchar[]`,
	`'{2020-01-02,infinity}'::date[]`,
	`'{"2020-01-02 03:04:05"}'::timestamp[]`,
	`'{"2020-01-02 03:04:05+02"}'::timestamptz[]`,
	`'{1 hour,"2 days"}'::interval[]`,
	`'{12:00:01.5,"13:00"}'::time[]`,
	`'{"12:00+02"}'::timetz[]`,
	`'{"\\\\x0102"}'::bytea[]`,
	`ARRAY[1,2]::text[]`,
	`ARRAY['1','2']::int[]`,
	`ARRAY[1.7,2.2]::int[]`,
	`ARRAY[1,2]::bigint[]`,
	`ARRAY[1,NULL,3]`,
	`ARRAY['a','b c']`,
	`ARRAY[1,2.5]`,
	`ARRAY[true,false]`,
	`ARRAY[date '2020-01-01']`,
	`'{1,2'::int[]`,
	`'1,2'::int[]`,
	`'{1,,2}'::int[]`,
	`'{1}x'::int[]`,
	`'{a}'::int[]`,
	`'{99999999999}'::int[]`,
	`'{2020-13-01}'::date[]`,
	`'{x}'::bool[]`,
	`1::int[]`,
	`'{a}'::nosuchtype[]`,
	// Comparisons.
	`ARRAY[1,2] = ARRAY[1,2]`,
	`ARRAY[1,2] <> ARRAY[1,3]`,
	`ARRAY[1,2] < ARRAY[1,2,3]`,
	`ARRAY[10] > ARRAY[9]`,
	`ARRAY[2] > ARRAY[1,5]`,
	`'{}'::int[] < ARRAY[1]`,
	`ARRAY[1,NULL] = ARRAY[1,NULL]`,
	`ARRAY[NULL::int] > ARRAY[1]`,
	`ARRAY[1] = ARRAY[1::bigint]`,
	`ARRAY[1,2] = '{1,2}'`,
	`ARRAY[1,2] >= '{1,1}'`,
	`ARRAY['b'] > ARRAY['a','z']`,
	`ARRAY[1] IS DISTINCT FROM ARRAY[2]`,
	`ARRAY[1] IS DISTINCT FROM NULL`,
	`ARRAY[1,NULL] IS NOT DISTINCT FROM ARRAY[1,NULL]`,
	`ARRAY[1] = ARRAY['a']`,
	// Containment and overlap.
	`ARRAY[1,2,3] @> ARRAY[3,1]`,
	`ARRAY[1,2] @> ARRAY[4]`,
	`ARRAY[1,2] @> '{}'`,
	`ARRAY[1,NULL] @> ARRAY[NULL::int]`,
	`ARRAY[1] <@ ARRAY[1,2]`,
	`ARRAY[1,2] <@ ARRAY[1]`,
	`ARRAY[1,2] && ARRAY[2,5]`,
	`ARRAY[1,2] && ARRAY[5]`,
	`ARRAY['a','b'] && '{b}'`,
	`ARRAY[1,2] @> ARRAY[1] AND ARRAY[3] <@ ARRAY[3,4]`,
	`ARRAY[1] @> NULL`,
	`ARRAY[1,2] @> ARRAY[1::bigint]`,
	// Concatenation.
	`ARRAY[1,2] || 3`,
	`0 || ARRAY[1]`,
	`ARRAY[1] || ARRAY[2,3]`,
	`ARRAY[1,2] || '{3,4}'`,
	`ARRAY[1] || NULL`,
	`ARRAY[1] || NULL::int`,
	`ARRAY['a'] || 'b'::text`,
	`'x'::text || ARRAY['y']`,
	`ARRAY[1] || ARRAY[2::bigint]`,
	`ARRAY[1] || 'a'::text`,
	`ARRAY[1] || 2.5`,
	`array_append(ARRAY[1], 2::bigint)`,
	// Functions.
	`cardinality(ARRAY[1,2,3])`,
	`cardinality('{}'::int[])`,
	`cardinality(NULL::int[])`,
	`array_length(ARRAY[1,2,3], 1)`,
	`array_lower(ARRAY[1,2], 1)`,
	`array_upper(ARRAY[1,2], 1)`,
	`array_ndims(ARRAY[1,2])`,
	`array_ndims('{}'::int[])`,
	`array_dims(ARRAY[1,2,3])`,
	`array_dims('{}'::text[])`,
	`array_position(ARRAY[1,2,3,2], 2)`,
	`array_position(ARRAY[1,2,3,2], 2, 3)`,
	`array_position(ARRAY[1,2], 5)`,
	`array_position(ARRAY[1,NULL], NULL)`,
	`array_position(ARRAY['a','b'], 'b')`,
	`array_positions(ARRAY[1,2,1], 1)`,
	`array_positions(ARRAY[1,2,1], 7)`,
	`array_positions(NULL::int[], 1)`,
	`array_append(ARRAY[1,2], 3)`,
	`array_append(NULL::int[], 3)`,
	`array_append(ARRAY['a'], NULL)`,
	`array_prepend(0, ARRAY[1])`,
	`array_cat(ARRAY[1], ARRAY[2,3])`,
	`array_cat(NULL::int[], ARRAY[2])`,
	`array_cat(ARRAY[1], NULL)`,
	`array_remove(ARRAY[1,2,1,3], 1)`,
	`array_remove(ARRAY[1,NULL,2], NULL)`,
	`array_remove(ARRAY['a','b'], 'c')`,
	`array_replace(ARRAY[1,2,1], 1, 9)`,
	`array_replace(ARRAY[1,NULL], NULL, 0)`,
	`array_fill(7, ARRAY[3])`,
	`array_fill('x'::text, ARRAY[2])`,
	`array_fill(1, ARRAY[0])`,
	`array_to_string(ARRAY[1,NULL,3], ',', '*')`,
	`array_to_string(ARRAY[true,false], '-')`,
	`string_to_array('a,b,,c', ',')`,
	`(ARRAY[5,6,7])[2]`,
	`(ARRAY[5,6,7])[9]`,
	`('{a,b}'::text[])[1]`,
	`('{1.5,2}'::numeric[])[1] + 1`,
	`3 = ANY (ARRAY[1,2,3])`,
	`3 = ANY ('{1,2}'::int[])`,
	`4 > ALL (ARRAY[1,2,3])`,
	`'b' = ANY ('{a,b}'::text[])`,
	`-1 = ANY (ARRAY[1,-1])`,
	`2 - 1 = ALL ('{1}'::int[])`,
	`'a' || 'b' = ANY ('{ab}'::text[])`,
	`array_position('{}'::text[], 'a', NULL)`,
	`array_position(ARRAY['a'], 'a', NULL)`,
}

// TestArraysLikePostgres runs every expression of arrayExprs through
// streamdb and PostgreSQL 15, in text and in binary, and compares result
// types, values and SQLSTATEs.
func TestArraysLikePostgres(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	ctx := testutil.Context(t, 3*time.Minute)
	sd, want := srv.Conn(t).PgConn(), pg.Conn(t).PgConn()
	var queries []query
	for _, e := range arrayExprs {
		queries = append(queries, query{sql: "SELECT " + e})
	}
	sameResultsAsPostgres(ctx, t, sd, want, queries)
}

// TestArrayColumnsLikePostgres: array columns of a table, a materialized
// view over it and a view over a stream (JSON arrays in the events) read
// back as PostgreSQL's table does, in text and binary, through the array
// operators, unnest and array_agg, and after a restart.
func TestArrayColumnsLikePostgres(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	ctx := testutil.Context(t, 3*time.Minute)
	conn, pgConn := srv.Conn(t), pg.Conn(t)
	const cols = `id int PRIMARY KEY, tags text[], ns int[], big bigint[], ts timestamptz[], fs float8[]`
	rows := `(1, '{a,b}', ARRAY[1,2], '{10}', '{"2020-01-02 03:04:05+00"}', '{1.5}'),
		(2, ARRAY['c d', NULL], '{}', NULL, '{}', '{NaN,-0}'),
		(3, NULL, '{3,NULL}', '{9223372036854775807}', NULL, NULL)`
	for _, c := range []*pgx.Conn{conn, pgConn} {
		exec(t, c, `CREATE TABLE arr (`+cols+`)`, `INSERT INTO arr VALUES `+rows)
	}
	exec(t, conn, `CREATE MATERIALIZED VIEW arrv AS SELECT * FROM arr`,
		`CREATE MATERIALIZED VIEW arrx AS SELECT id, tags || 'x'::text AS t2, cardinality(ns) AS c, ns[1] AS first, ns @> '{1}' AS has1 FROM arr`,
		`CREATE STREAM arrs (id int, ns int[], tags text[])`)
	_, js := testutil.JetStream(t, srv.NATSURL())
	testutil.Publish(t, js, "arrs", `{"id": 1, "ns": [1, 2, null], "tags": ["a", "b c"]}`, `{"id": 2, "ns": "{4,5}", "tags": []}`)
	exec(t, conn, `CREATE MATERIALIZED VIEW arrsv AS SELECT id, ns, tags FROM arrs`)
	exec(t, pgConn, `CREATE TABLE arrs (id int, ns int[], tags text[])`,
		`INSERT INTO arrs VALUES (1, '{1,2,NULL}', '{a,"b c"}'), (2, '{4,5}', '{}')`)
	flush(t, conn)
	testutil.Poll(t, time.Minute, "the stream's view", func() error {
		if n := testutil.Scalar(t, conn, `SELECT count(*) FROM arrsv`); n != "2" {
			return fmt.Errorf("%s rows", n)
		}
		return nil
	})
	// The views' plans, array operators and functions included, are
	// read back after a restart.
	exec(t, conn, `CREATE MATERIALIZED VIEW arrops AS SELECT id, ARRAY[id, 2] AS a, ns || 0 AS b, array_position(ns, 2) AS p,
		ns = '{1,2}' AS e, tags <@ '{a,b,c}' AS c, array_remove(ns, 1) AS r FROM arr`)
	flush(t, conn)
	srv.Restart(t)
	conn = srv.Conn(t)
	for _, c := range []struct{ streamdb, pg string }{
		{`SELECT * FROM arrops ORDER BY id`, `SELECT id, ARRAY[id, 2] AS a, ns || 0 AS b, array_position(ns, 2) AS p,
		ns = '{1,2}' AS e, tags <@ '{a,b,c}' AS c, array_remove(ns, 1) AS r FROM arr ORDER BY id`},
		{`SELECT * FROM arr ORDER BY id`, ""},
		{`SELECT * FROM arrv ORDER BY id`, `SELECT * FROM arr ORDER BY id`},
		{`SELECT * FROM arrx ORDER BY id`, `SELECT id, tags || 'x'::text AS t2, cardinality(ns) AS c, ns[1] AS first, ns @> '{1}' AS has1 FROM arr ORDER BY id`},
		{`SELECT * FROM arrsv ORDER BY id`, `SELECT * FROM arrs ORDER BY id`},
		{`SELECT id FROM arr WHERE tags && '{b,z}' OR ns = '{}' ORDER BY id`, ""},
		{`SELECT id, x FROM arr, unnest(ns) AS x ORDER BY id, x`, ""},
		{`SELECT array_agg(id ORDER BY id) FROM arr`, ""},
		{`SELECT array_agg(tags[1] ORDER BY tags[1]) FROM arr`, ""},
		{`SELECT id FROM arr WHERE 2 = ANY (ns) ORDER BY id`, ""},
		{`SELECT id, ns FROM arr ORDER BY ns, id`, ""},
		{`SELECT id, tags FROM arr ORDER BY tags DESC, id`, ""},
		{`SELECT id FROM arrsv ORDER BY ns DESC`, `SELECT id FROM arrs ORDER BY ns DESC`},
	} {
		want := c.pg
		if want == "" {
			want = c.streamdb
		}
		for _, binary := range []bool{false, true} {
			got, exp := query{sql: c.streamdb}.run(ctx, conn.PgConn(), binary), query{sql: want}.run(ctx, pgConn.PgConn(), binary)
			if got != exp {
				t.Errorf("%s (binary %v):\n got  %s\n want %s", c.streamdb, binary, got, exp)
			}
		}
	}
}
