package e2e

import (
	"testing"
)

// TestOrderedAggregatesLikePostgres: percentile_cont, percentile_disc and
// mode WITHIN GROUP (ORDER BY ...), and string_agg ordered by its value,
// give PostgreSQL's results ad hoc (grouped, with NULLs, DESC) and in a
// materialized view through inserts and deletes; a fraction outside 0..1
// is 22003, and string_agg ordered by another column matches too.
func TestOrderedAggregatesLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
	execBoth(t, sdb, ref, "CREATE TABLE oa (id int PRIMARY KEY, g int, v int, n numeric, s text)")
	execBoth(t, sdb, ref, "INSERT INTO oa VALUES (1, 1, 10, 1.5, 'b'), (2, 1, 20, 2.25, 'a'), (3, 1, 20, NULL, 'c'), (4, 2, 5, 7, NULL), (5, 2, NULL, 8, 'd'), (6, 2, 9, 9.5, 'd'), (7, 3, 4, 0, 'z')")
	queries := []string{
		"SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY v), percentile_disc(0.5) WITHIN GROUP (ORDER BY v), mode() WITHIN GROUP (ORDER BY v) FROM oa GROUP BY g",
		"SELECT percentile_cont(0.3) WITHIN GROUP (ORDER BY n), percentile_cont(0.3) WITHIN GROUP (ORDER BY n DESC), percentile_disc(0) WITHIN GROUP (ORDER BY v), percentile_disc(1) WITHIN GROUP (ORDER BY v) FROM oa",
		"SELECT mode() WITHIN GROUP (ORDER BY s), mode() WITHIN GROUP (ORDER BY s DESC) FROM oa",
		"SELECT g, string_agg(s, ',' ORDER BY s), string_agg(s, '' ORDER BY s DESC) FROM oa GROUP BY g",
		"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY v) FROM oa WHERE v > 100",
	}
	sameRowsAsPostgres(t, sdb, ref, queries...)
	view := "SELECT g, percentile_disc(0.5) WITHIN GROUP (ORDER BY v) AS p, mode() WITHIN GROUP (ORDER BY v) AS m, string_agg(s, ',' ORDER BY s) AS l FROM oa GROUP BY g"
	exec(t, sdb, "CREATE MATERIALIZED VIEW oa_v AS "+view)
	if _, err := ref.Exec(ctx, "CREATE VIEW oa_v AS "+view); err != nil {
		t.Fatal(err)
	}
	execBoth(t, sdb, ref, "INSERT INTO oa VALUES (8, 1, 10, 3, 'e'), (9, 3, 4, 1, 'y')")
	execBoth(t, sdb, ref, "DELETE FROM oa WHERE id IN (2, 3, 6)")
	flush(t, sdb)
	sameRowsAsPostgres(t, sdb, ref, append(queries, "SELECT * FROM oa_v")...)
	for q, code := range map[string]string{
		"SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY v) FROM oa": "22003",
		"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM oa": "42883",
	} {
		_, err := sdb.Exec(ctx, q)
		wantCode(t, err, code)
		_, err = ref.Exec(ctx, q)
		wantCode(t, err, code)
	}
	sameRowsAsPostgres(t, sdb, ref, "SELECT string_agg(s, ',' ORDER BY id) FROM oa")
}
