package e2e

import (
	"testing"
)

// TestStatisticalAggregatesLikePostgres: stddev, stddev_pop, stddev_samp,
// variance, var_pop and var_samp over integers and numerics give
// PostgreSQL's numeric results digit for digit (its scale rules), over
// floats the same value to 12 digits; array_agg (with and without ORDER
// BY, NULLs included) and bool_and/bool_or/every agree too, ad hoc and in
// a materialized view through inserts and deletes.
func TestStatisticalAggregatesLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
	execBoth(t, sdb, ref, "CREATE TABLE sa (id int PRIMARY KEY, g int, v int, n numeric, f float8, b boolean, s text)")
	execBoth(t, sdb, ref, "INSERT INTO sa VALUES (1, 1, 10, 1.5, 0.25, true, 'b'), (2, 1, 20, 2.25, 1e10, false, 'a'), (3, 1, NULL, NULL, NULL, NULL, 'c'), "+
		"(4, 2, 5, 7, -3, true, NULL), (5, 2, 7, 8.125, 2, true, 'd e'), (6, 3, 4, 0, 1, NULL, 'z'), (7, 2, -9, 1e-3, 7.5, true, 'q')")
	queries := []string{
		"SELECT g, stddev(v), stddev_pop(v), stddev_samp(v), variance(v), var_pop(v), var_samp(v) FROM sa GROUP BY g",
		"SELECT stddev(n), stddev_pop(n), variance(n), var_pop(n), var_samp(n / 3) FROM sa",
		"SELECT g, round(stddev(f)::numeric, 6), round(var_pop(f)::numeric, 2), round(stddev_pop(f::real)::numeric, 6) FROM sa GROUP BY g",
		"SELECT stddev(v), variance(v) FROM sa WHERE v > 100",
		"SELECT g, array_agg(v ORDER BY v), array_agg(s ORDER BY s DESC), array_agg(b ORDER BY b) FROM sa GROUP BY g",
		"SELECT array_agg(v ORDER BY v DESC), array_agg(n ORDER BY n) FROM sa WHERE g = 2",
		"SELECT g, bool_and(b), bool_or(b), every(b), bool_and(v > 0) FROM sa GROUP BY g",
	}
	sameRowsAsPostgres(t, sdb, ref, queries...)
	view := "SELECT g, stddev(v) AS sd, var_pop(n) AS vp, array_agg(v ORDER BY v) AS a, every(b) AS e FROM sa GROUP BY g"
	exec(t, sdb, "CREATE MATERIALIZED VIEW sa_v AS "+view)
	if _, err := ref.Exec(ctx, "CREATE VIEW sa_v AS "+view); err != nil {
		t.Fatal(err)
	}
	execBoth(t, sdb, ref, "INSERT INTO sa VALUES (8, 1, 11, 3.75, 4, true, 'e'), (9, 3, 4, 1, 2, false, 'y')")
	execBoth(t, sdb, ref, "DELETE FROM sa WHERE id IN (2, 3, 7)")
	execBoth(t, sdb, ref, "UPDATE sa SET n = 2.5, v = 6 WHERE id = 5")
	flush(t, sdb)
	sameRowsAsPostgres(t, sdb, ref, append(queries, "SELECT * FROM sa_v")...)
	// Ordered by another column, as PostgreSQL orders it.
	sameRowsAsPostgres(t, sdb, ref, "SELECT array_agg(s ORDER BY id) FROM sa")
	for q, code := range map[string]string{
		"SELECT stddev(s) FROM sa":                    "42883",
		"SELECT var_pop(b) FROM sa":                   "42883",
		"SELECT stddev(v) FROM sa GROUP BY stddev(v)": "42803",
	} {
		_, err := sdb.Exec(ctx, q)
		wantCode(t, err, code)
	}
}
