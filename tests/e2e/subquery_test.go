package e2e

import (
	"fmt"
	"testing"
)

// TestSubqueriesLikePostgres: scalar, EXISTS and IN subqueries in ad-hoc
// queries give PostgreSQL's rows (NULL rules of NOT IN, an empty scalar
// subquery as NULL, aggregates inside the subquery, nesting) or its
// SQLSTATE (more than one row: 21000); subqueries in views and DML are
// refused with 0A000 (correlated ones: select_correlated_test.go).
func TestSubqueriesLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
	var err error
	setup := []string{
		"CREATE TABLE t1 (a int PRIMARY KEY, b int, c int, d int, e int)",
		"CREATE TABLE t2 (x int PRIMARY KEY, y int)",
	}
	for i := 1; i <= 12; i++ {
		c := fmt.Sprint(i * 7 % 10)
		if i%5 == 0 {
			c = "NULL"
		}
		setup = append(setup, fmt.Sprintf("INSERT INTO t1 VALUES (%d, %d, %s, %d, %d)", i, i%4, c, i*3, 20-i))
	}
	setup = append(setup, "INSERT INTO t2 VALUES (1, 3), (2, NULL), (3, 9), (4, 2)")
	execBoth(t, sdb, ref, setup...)
	queries := []string{
		"SELECT CASE WHEN c > (SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END FROM t1",
		"SELECT a, (SELECT count(*) FROM t2) FROM t1",
		"SELECT a FROM t1 WHERE b IN (SELECT y FROM t2)",
		"SELECT a FROM t1 WHERE b NOT IN (SELECT y FROM t2)",
		"SELECT a FROM t1 WHERE b NOT IN (SELECT y FROM t2 WHERE y IS NOT NULL)",
		"SELECT a FROM t1 WHERE c IN (SELECT y FROM t2 WHERE y > 100)",
		"SELECT a FROM t1 WHERE c NOT IN (SELECT y FROM t2 WHERE y > 100)",
		"SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE y = 9)",
		"SELECT a FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE y = 99)",
		"SELECT (SELECT y FROM t2 WHERE x = 99), (SELECT max(y) FROM t2)",
		"SELECT a FROM t1 WHERE d > (SELECT max(y) FROM t2 WHERE x IN (SELECT b FROM t1 WHERE a < 4))",
		"SELECT b, count(*) FROM t1 GROUP BY b HAVING count(*) > (SELECT min(x) FROM t2)",
		"SELECT a FROM t1 WHERE e = (SELECT max(e) FROM t1)",
		"SELECT x, y IN (SELECT b FROM t1) FROM t2",
		"SELECT a FROM t1 WHERE a IN (SELECT x FROM t2 UNION SELECT y FROM t2)",
		"WITH big AS (SELECT a FROM t1 WHERE d > 20) SELECT x FROM t2 WHERE x IN (SELECT a - 10 FROM big)",
	}
	sameRowsAsPostgres(t, sdb, ref, queries...)
	// PostgreSQL's SQLSTATE where it refuses.
	_, err = sdb.Exec(ctx, "SELECT a, (SELECT y FROM t2) FROM t1")
	wantCode(t, err, "21000")
	_, err = ref.Exec(ctx, "SELECT a, (SELECT y FROM t2) FROM t1")
	wantCode(t, err, "21000")
	// What streamdb refuses on purpose, with 0A000 and a hint.
	_, err = sdb.Exec(ctx, "CREATE MATERIALIZED VIEW sub_v AS SELECT a FROM t1 WHERE b > (SELECT y FROM t2)")
	wantCode(t, err, "0A000")
	// Subqueries in DML's WHERE run as in PostgreSQL.
	sameEffectAsPostgres(t, sdb, ref, "DELETE FROM t1 WHERE b IN (SELECT y FROM t2)", "SELECT a FROM t1")
	// Inside a transaction block a subquery reads the block's snapshot
	// and its own writes, as the outer query does.
	tx, err := sdb.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO t2 VALUES (10, 100)"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM t1 WHERE d < (SELECT max(y) FROM t2)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 12 {
		t.Errorf("in a block after inserting y = 100: %d rows of t1 below max(y), want 12", n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}
