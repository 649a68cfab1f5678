package e2e

import (
	"testing"
)

// TestWindowFunctionsLikePostgres: lag/lead (offset, default),
// first_value/last_value/nth_value, ntile, percent_rank, cume_dist and
// aggregates OVER windows with ROWS and RANGE frames, named windows and
// partitions with NULLs and ties give PostgreSQL's rows in ad-hoc
// queries; bad arguments give its SQLSTATEs; a view refuses them (0A000).
func TestWindowFunctionsLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
	execBoth(t, sdb, ref, "CREATE TABLE wf (id int PRIMARY KEY, g int, v int, n numeric, f float8, s text)")
	execBoth(t, sdb, ref, "INSERT INTO wf VALUES (1, 1, 10, 1.5, 0.5, 'b'), (2, 1, 20, 2.25, 1, 'a'), (3, 1, NULL, NULL, NULL, 'c'), "+
		"(4, 2, 5, 7, -3, NULL), (5, 2, 7, 8.125, 2, 'd'), (6, 3, 4, 0, 1, 'z'), (7, 2, 7, 1, 7.5, 'q'), (8, NULL, 3, 2, 2, 'n'), (9, 1, 20, 4, 4, 'm')")
	queries := []string{
		"SELECT id, lag(v) OVER (ORDER BY id), lead(v) OVER (ORDER BY id), lag(s, 2, 'none') OVER (PARTITION BY g ORDER BY id), lead(n, 3, -1) OVER (ORDER BY id DESC) FROM wf",
		"SELECT id, first_value(v) OVER w, last_value(v) OVER w, nth_value(s, 2) OVER w FROM wf WINDOW w AS (PARTITION BY g ORDER BY id)",
		"SELECT id, first_value(id) OVER (PARTITION BY g ORDER BY v), last_value(id) OVER (PARTITION BY g ORDER BY v, id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM wf",
		"SELECT id, ntile(3) OVER (ORDER BY id), ntile(2) OVER (PARTITION BY g ORDER BY id), percent_rank() OVER (ORDER BY v), cume_dist() OVER (PARTITION BY g ORDER BY v) FROM wf",
		"SELECT id, rank() OVER (ORDER BY v DESC), dense_rank() OVER (PARTITION BY g ORDER BY v), row_number() OVER (ORDER BY id) FROM wf",
		"SELECT id, sum(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), count(*) OVER (ORDER BY g), count(v) OVER (PARTITION BY g), avg(n) OVER (PARTITION BY g ORDER BY id) FROM wf",
		"SELECT id, min(s) OVER (ORDER BY id ROWS 2 PRECEDING), max(v) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING), sum(n) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 4 FOLLOWING) FROM wf",
		"SELECT id, sum(id) OVER (ORDER BY v RANGE BETWEEN 3 PRECEDING AND 2 FOLLOWING), count(*) OVER (ORDER BY v DESC RANGE BETWEEN 5 PRECEDING AND CURRENT ROW), sum(id) OVER (ORDER BY n RANGE BETWEEN 1.5 PRECEDING AND 0.5 FOLLOWING) FROM wf",
		"SELECT id, sum(f) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), stddev_samp(v) OVER (PARTITION BY g), var_pop(n) OVER (ORDER BY id ROWS 3 PRECEDING) FROM wf",
		"SELECT id, sum(v) OVER (w ORDER BY id) FROM wf WINDOW w AS (PARTITION BY g)",
		"SELECT id, stddev(v) OVER (PARTITION BY g), variance(n) OVER (ORDER BY id ROWS 2 PRECEDING) FROM wf",
		"SELECT g, v, lag(v) OVER (ORDER BY id) - v AS d FROM wf WHERE g IS NOT NULL ORDER BY id LIMIT 5",
		"SELECT * FROM (SELECT id, lead(id) OVER (ORDER BY id) AS nx FROM wf) q WHERE nx > 5",
	}
	sameRowsAsPostgres(t, sdb, ref, queries...)
	for q, code := range map[string]string{
		"SELECT ntile(0) OVER () FROM wf":                                                           "22014",
		"SELECT nth_value(v, 0) OVER () FROM wf":                                                    "22016",
		"SELECT sum(v) OVER (ORDER BY id, g RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM wf":     "42P20",
		"SELECT sum(v) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM wf": "42P20",
		"SELECT sum(v) OVER w FROM wf":                                                              "42704",
	} {
		_, err := sdb.Exec(ctx, q)
		wantCode(t, err, code)
		_, err = ref.Exec(ctx, q)
		wantCode(t, err, code)
	}
	_, err := sdb.Exec(ctx, "CREATE MATERIALIZED VIEW wf_v AS SELECT id, lag(v) OVER (ORDER BY id) FROM wf")
	wantCode(t, err, "0A000")
}
