package e2e

import (
	"testing"
)

// TestValuesListsLikePostgres: a VALUES list in FROM (with and without a
// column list, columns of a common type, NULLs) and as the subquery of IN
// gives PostgreSQL's rows; rows of different lengths are 42601.
func TestValuesListsLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
	var err error
	execBoth(t, sdb, ref,
		"CREATE TABLE vt (id int PRIMARY KEY, name text)",
		"INSERT INTO vt VALUES (1, 'one'), (2, 'two'), (3, 'three')",
	)
	sameRowsAsPostgres(t, sdb, ref,
		"SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(x, y)",
		"SELECT * FROM (VALUES (1, 'a'), (2.5, NULL)) AS v",
		"SELECT v.x + 1, column2 FROM (VALUES (1, 10), (2, 20)) v(x) WHERE x > 1",
		"SELECT vt.name, v.label FROM vt JOIN (VALUES (1, 'first'), (3, 'third')) AS v(id, label) ON v.id = vt.id",
		"SELECT id FROM vt WHERE id IN (VALUES (2), (3), (NULL))",
		"SELECT count(*), sum(column1) FROM (VALUES (1), (2), (3)) AS v",
	)
	q := "SELECT * FROM (VALUES (1, 2), (3)) AS v"
	_, err = sdb.Exec(ctx, q)
	wantCode(t, err, "42601")
	_, err = ref.Exec(ctx, q)
	wantCode(t, err, "42601")
}
