package e2e

import (
	"testing"
)

// TestGenerateSeriesLikePostgres: generate_series in FROM (integers with
// and without a step, descending, bigint, numeric, timestamps and dates
// with an interval step; aliased as t, t(col); joined with a table;
// aggregated) and as the only item of a FROM-less SELECT gives
// PostgreSQL's rows; a zero step is 22023, ambiguous arguments 42725,
// and a view refuses it (0A000).
func TestGenerateSeriesLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
	execBoth(t, sdb, ref, "CREATE TABLE gs (id int PRIMARY KEY, g int)")
	execBoth(t, sdb, ref, "INSERT INTO gs VALUES (1, 1), (2, 3), (3, 3), (4, 7)")
	sameRowsAsPostgres(t, sdb, ref,
		"SELECT * FROM generate_series(1, 5)",
		"SELECT g FROM generate_series(10, 1, -3) AS g",
		"SELECT x FROM generate_series(1, 10, 4) t(x) WHERE x > 1",
		"SELECT * FROM generate_series(5, 1)",
		"SELECT * FROM generate_series(9223372036854775800, 9223372036854775807, 3)",
		"SELECT * FROM generate_series(2147483645, 2147483647)",
		"SELECT * FROM generate_series(0.5, 2.75, 0.5)",
		"SELECT * FROM generate_series(timestamp '2026-01-01', timestamp '2026-01-02', interval '6 hours') AS t(ts)",
		"SELECT * FROM generate_series(date '2026-02-27', date '2026-03-02', interval '1 day')",
		"SELECT * FROM generate_series(timestamp '2026-01-31', '2026-05-01', '1 month')",
		"SELECT x.a, gs.id FROM generate_series(1, 4) x(a) JOIN gs ON gs.g = x.a",
		"SELECT x.a, count(gs.id) FROM generate_series(1, 8) AS x(a) LEFT JOIN gs ON gs.g = x.a GROUP BY x.a",
		"SELECT count(*), sum(n) FROM generate_series(1, 100000) n",
		"SELECT a * 10 + b FROM generate_series(1, 3) a, generate_series(0, 2) b",
		"SELECT generate_series(1, 3)",
		"SELECT generate_series(3, 1, -1) AS n",
		"SELECT * FROM generate_series(1, NULL)",
	)
	for q, code := range map[string]string{
		"SELECT * FROM generate_series(1, 3, 0)":                                        "22023",
		"SELECT * FROM generate_series('a', 'b')":                                       "42725",
		"SELECT * FROM generate_series(1, 3, interval '1 day')":                         "42883",
		"SELECT * FROM generate_series(timestamp '2026-01-01', timestamp '2026-01-02')": "42883",
	} {
		_, err := sdb.Exec(ctx, q)
		wantCode(t, err, code)
		_, err = ref.Exec(ctx, q)
		wantCode(t, err, code)
	}
	_, err := sdb.Exec(ctx, "CREATE MATERIALIZED VIEW gs_v AS SELECT gs.id, x FROM gs JOIN generate_series(1, 5) x ON x = gs.g")
	wantCode(t, err, "0A000")
}
