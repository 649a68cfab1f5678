package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestValuesListsLikePostgres: a VALUES list in FROM (with and without a
// column list, columns of a common type, NULLs) and as the subquery of IN
// gives PostgreSQL's rows; rows of different lengths are 42601.
func TestValuesListsLikePostgres(t *testing.T) {
	t.Parallel()
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	ctx := testCtx(t, 2*time.Minute)
	sdb := srv.Conn(t)
	ref, err := pgx.Connect(ctx, pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close(context.Background())
	for _, q := range []string{
		"CREATE TABLE vt (id int PRIMARY KEY, name text)",
		"INSERT INTO vt VALUES (1, 'one'), (2, 'two'), (3, 'three')",
	} {
		exec(t, sdb, q)
		if _, err := ref.Exec(ctx, q); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, err)
		}
	}
	for _, q := range []string{
		"SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(x, y)",
		"SELECT * FROM (VALUES (1, 'a'), (2.5, NULL)) AS v",
		"SELECT v.x + 1, column2 FROM (VALUES (1, 10), (2, 20)) v(x) WHERE x > 1",
		"SELECT vt.name, v.label FROM vt JOIN (VALUES (1, 'first'), (3, 'third')) AS v(id, label) ON v.id = vt.id",
		"SELECT id FROM vt WHERE id IN (VALUES (2), (3), (NULL))",
		"SELECT count(*), sum(column1) FROM (VALUES (1), (2), (3)) AS v",
	} {
		want := testutil.SortedRows(t, ref, q)
		got := testutil.SortedRows(t, sdb, q)
		if strings.Join(got, ";") != strings.Join(want, ";") {
			t.Errorf("%s\n got %v\nwant %v (PostgreSQL)", q, got, want)
		}
	}
	q := "SELECT * FROM (VALUES (1, 2), (3)) AS v"
	_, err = sdb.Exec(ctx, q)
	wantCode(t, err, "42601")
	_, err = ref.Exec(ctx, q)
	wantCode(t, err, "42601")
}
