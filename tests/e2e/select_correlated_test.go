package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestCorrelatedSubqueriesLikePostgres: correlated scalar, EXISTS, IN and
// op ANY/ALL subqueries in SELECT, WHERE, HAVING, ON and ORDER BY of
// ad-hoc queries give PostgreSQL's rows, NULLs included; an aggregate
// belongs to the subquery it is written in (issue 25's reproductions).
func TestCorrelatedSubqueriesLikePostgres(t *testing.T) {
	t.Parallel()
	sdb, ref, ctx := startWithPostgres(t)
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
	setup = append(setup, "INSERT INTO t2 VALUES (1, 3), (2, NULL), (3, 9), (4, 2), (5, 1)")
	execBoth(t, sdb, ref, setup...)
	queries := []string{
		// The reproductions of issue 25.
		"SELECT CASE WHEN c > (SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END FROM t1",
		"SELECT a, (SELECT count(*) FROM t1 AS x WHERE x.b < t1.b) FROM t1",
		"SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.x = t1.b)",
		"SELECT a FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE t2.x = t1.b)",
		"SELECT a FROM t1 WHERE c IN (SELECT y FROM t2 WHERE x <= t1.b)",
		"SELECT a FROM t1 WHERE c NOT IN (SELECT y FROM t2 WHERE x <= t1.b)",
		"SELECT a, c NOT IN (SELECT y FROM t2 WHERE x > t1.b) FROM t1",
		"SELECT a, b = ANY (SELECT y FROM t2 WHERE x < t1.a) FROM t1",
		"SELECT a, c > ALL (SELECT y FROM t2 WHERE x < t1.b) FROM t1",
		"SELECT a, c >= SOME (SELECT y FROM t2) FROM t1",
		"SELECT a, c < ALL (SELECT y FROM t2) FROM t1",
		// Nested: the innermost refers to the outermost query.
		"SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE x = t1.b AND y IN (SELECT c FROM t1 AS z WHERE z.a > t1.a))",
		"SELECT a, (SELECT max(y) FROM t2 WHERE x < (SELECT count(*) FROM t1 AS z WHERE z.b = t1.b)) FROM t1",
		// HAVING, ORDER BY, ON.
		"SELECT b, count(*) FROM t1 GROUP BY b HAVING count(*) > (SELECT count(*) FROM t2 WHERE x < t1.b)",
		"SELECT b, (SELECT y FROM t2 WHERE x = t1.b) FROM t1 GROUP BY b",
		"SELECT a FROM t1 ORDER BY (SELECT y FROM t2 WHERE x = t1.b) NULLS FIRST, a",
		"SELECT t1.a, t2.x FROM t1 JOIN t2 ON t2.x = (SELECT min(z.b) FROM t1 AS z WHERE z.a = t1.a)",
		"SELECT t1.a, t2.x FROM t1 LEFT JOIN t2 ON t2.y IN (SELECT c FROM t1 AS z WHERE z.a = t1.a)",
		// Aggregates inside a correlated subquery, grouping with outer values.
		"SELECT a, (SELECT sum(y + t1.a) FROM t2) FROM t1",
		"SELECT a, (SELECT count(*) FROM t2 GROUP BY t1.b > 1 LIMIT 1) FROM t1",
		"SELECT a FROM t1 WHERE d > (SELECT avg(d) FROM t1 AS z WHERE z.b = t1.b)",
		"SELECT (SELECT 1), (SELECT 2) ORDER BY (SELECT 2)",
	}
	sameRowsAsPostgres(t, sdb, ref, queries...)
	// In order where ORDER BY fixes it.
	ordered := "SELECT a FROM t1 ORDER BY (SELECT y FROM t2 WHERE x = t1.b) DESC NULLS LAST, a"
	if got, want := textRows(t, sdb, ordered), textRows(t, ref, ordered); strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("%s\n got %v\nwant %v (PostgreSQL)", ordered, got, want)
	}
	// Parameters inside and around a correlated subquery (extended
	// protocol), and the same query inside a transaction block.
	param := "SELECT count(*) FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.x = t1.b AND t2.y > $1) AND a > $2"
	var got, want int64
	if err := sdb.QueryRow(ctx, param, 2, 3).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if err := ref.QueryRow(ctx, param, 2, 3).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("%s with 2, 3: %d, PostgreSQL %d", param, got, want)
	}
	tx, err := sdb.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO t2 VALUES (0, 50)"); err != nil {
		t.Fatal(err)
	}
	var inBlock int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.x = t1.b AND t2.y = 50)").Scan(&inBlock); err != nil {
		t.Fatal(err)
	}
	if inBlock != 3 { // the rows with b = 0: a = 4, 8, 12
		t.Errorf("in a block after inserting x = 0: %d rows of t1 see it, want 3", inBlock)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// PostgreSQL's SQLSTATEs where it refuses.
	for q, code := range map[string]string{
		"SELECT a, (SELECT y FROM t2 WHERE x <= t1.b) FROM t1":                  "21000",
		"SELECT b, (SELECT y FROM t2 WHERE x = t1.c) FROM t1 GROUP BY b":        "42803",
		"SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.nope = t1.b)": "42703",
		// Found by the query generator (tests/props TestQueries).
		"SELECT b, count(*) FROM t1 GROUP BY NULL":                    "42601",
		"SELECT b FROM t1 GROUP BY -1":                                "42P10",
		"SELECT a FROM t1 ORDER BY 3":                                 "42P10",
		"SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 GROUP BY 2)": "42P10",
		"SELECT a % 2.5::float8 FROM t1":                              "42883",
	} {
		_, err := sdb.Exec(ctx, q)
		wantCode(t, err, code)
		_, err = ref.Exec(ctx, q)
		wantCode(t, err, code)
	}
	// Correlated subqueries in DML run as in PostgreSQL.
	sameEffectAsPostgres(t, sdb, ref, "DELETE FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE x = t1.b)", "SELECT a FROM t1")
	sameEffectAsPostgres(t, sdb, ref, "UPDATE t1 SET b = (SELECT max(y) FROM t2 WHERE x = t1.a) WHERE a < 5", "SELECT a, b FROM t1")
}
