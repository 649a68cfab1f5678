package props

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// envChurnRounds sets how many rounds TestSubqueryViewsChurn runs.
const envChurnRounds = "STREAMDB_CHURN_ROUNDS"

// TestSubqueryViewsChurn stresses materialized views whose subqueries
// become joins of their input tables (sql/view_subquery.go): DISTINCT ON
// over a scalar subquery with NOT IN, NOT IN and NOT EXISTS anti joins,
// correlated and uncorrelated scalar subqueries over q0, q1 and qj (the
// query generator's tables), and generated queries (query_gen_test.go)
// that hold a subquery. Each round, one session writes inserts, updates
// and deletes to the tables (single statements and transactions that
// change two, so two inputs of a join change in one epoch) while two other
// sessions create views and drop older ones (so views attach while their
// inputs change); then, after a FLUSH, every live view must hold what
// PostgreSQL 15 answers to its query once given the same writes in the
// same order. Then a second burst of writes goes to the views already
// running and they are checked again. A view that differs is read again
// after another FLUSH, and the report says whether the difference lasted
// and what streamdb's ad hoc query answers. STREAMDB_PROP_SEED replays the
// statements (not their timing); $STREAMDB_CHURN_ROUNDS sets the rounds
// (default 3; make views-churn runs more).
func TestSubqueryViewsChurn(t *testing.T) {
	r := propRand(t)
	rounds := 3
	if s := os.Getenv(envChurnRounds); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("$%s=%q is not a positive number", envChurnRounds, s)
		}
		rounds = n
	}
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(10+5*rounds)*time.Minute)
	defer cancel()
	p := &pair{t: t, ctx: ctx, sdb: srv.Conn(t), pg: pg.Conn(t)}
	writer := srv.Conn(t)
	creators := [2]*pgx.Conn{srv.Conn(t), srv.Conn(t)}
	createQueryTables(t, r, p)
	c := &churn{r: r, g: newQgen(r), nextKey: 1000}

	type view struct{ name, query string }
	var live []view
	var checked, lasting, refused, order int
	made := map[string]int{}
	check := func(round int, phase string) {
		if _, err := p.sdb.Exec(ctx, "FLUSH"); err != nil {
			t.Fatalf("round %d %s: FLUSH: %v", round, phase, err)
		}
		for _, v := range live {
			want := simple(t, ctx, p.pg, v.query)
			if want.code != "" {
				continue // the query fails on these rows in PostgreSQL
			}
			got := simple(t, ctx, p.sdb, "SELECT * FROM "+v.name)
			checked++
			if sameQueryOutcome(got, want, false) {
				continue
			}
			errs := simple(t, ctx, p.sdb, fmt.Sprintf("SELECT count(*) FROM streamdb_view_errors WHERE view = '%s'", v.name))
			if errs.code == "" && len(errs.rows) == 1 && string(errs.rows[0][0]) != "0" {
				order++ // a row the view skipped on an error (TestQueriesAsViews)
				continue
			}
			adhoc := simple(t, ctx, p.sdb, v.query)
			if _, err := p.sdb.Exec(ctx, "FLUSH"); err != nil {
				t.Fatalf("round %d %s: FLUSH: %v", round, phase, err)
			}
			again := simple(t, ctx, p.sdb, "SELECT * FROM "+v.name)
			lasted := !sameQueryOutcome(again, want, false)
			if lasted {
				lasting++
			}
			t.Errorf("round %d %s: view %s differs from PostgreSQL (after another FLUSH: lasting %v)\n  %s\n  view:       %v\n  again:      %v\n  ad hoc:     %v\n  PostgreSQL: %v",
				round, phase, v.name, lasted, v.query, got, again, adhoc, want)
		}
	}

	for round := range rounds {
		// The statements of this round: the writes, and each creator's
		// DDL, decided up front from the seed.
		writes := c.writes(30 + r.IntN(40))
		var ddl [2][]string
		var created []view
		for i := range 4 + r.IntN(4) {
			shape, q := c.view()
			if o := simple(t, ctx, p.pg, q); o.code != "" {
				continue // PostgreSQL refuses it, or fails on these rows
			}
			// The view names its columns: generated ones repeat names.
			sd, err := p.pg.Prepare(ctx, "", q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			cols := make([]string, len(sd.Fields))
			for j := range cols {
				cols[j] = fmt.Sprintf("x%d", j+1)
			}
			made[shape]++
			name := fmt.Sprintf("cv%d_%d", round, i)
			ddl[i%2] = append(ddl[i%2], fmt.Sprintf("CREATE MATERIALIZED VIEW %s (%s) AS %s", name, strings.Join(cols, ", "), q))
			created = append(created, view{name, q})
		}
		// Older views are dropped while the new ones are created.
		var kept []view
		for i, v := range live {
			if r.IntN(2) == 0 {
				ddl[i%2] = append(ddl[i%2], "DROP MATERIALIZED VIEW "+v.name)
			} else {
				kept = append(kept, v)
			}
		}

		var mu sync.Mutex
		notMade := map[string]bool{}
		var wg sync.WaitGroup
		run := func(conn *pgx.Conn, stmts []string, pace bool, seed uint64) {
			defer wg.Done()
			pr := rand.New(rand.NewPCG(seed, seed))
			for _, sql := range stmts {
				if _, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
					var pe *pgconn.PgError
					if errors.As(err, &pe) && pe.Code == "0A000" && strings.HasPrefix(sql, "CREATE") {
						// A generated view streamdb refuses by design
						// (docs/differences.md).
						mu.Lock()
						notMade[strings.Fields(sql)[3]] = true
						mu.Unlock()
						continue
					}
					t.Errorf("round %d: %s: %v", round, sql, err)
					return
				}
				if pace && pr.IntN(4) == 0 {
					// Spread the writes over several epochs: some land
					// before a view attaches, some after.
					time.Sleep(time.Duration(pr.IntN(20)) * time.Millisecond)
				}
			}
		}
		wg.Add(3)
		go run(writer, writes, true, r.Uint64())
		go run(creators[0], ddl[0], false, 0)
		go run(creators[1], ddl[1], false, 0)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		for _, w := range writes {
			p.one(p.pg, w)
		}
		live = kept
		for _, v := range created {
			if notMade[v.name] {
				refused++
			} else {
				live = append(live, v)
			}
		}
		check(round, "after views were created and dropped during writes")

		// Writes to the running views, both tables in the same epochs.
		writes = c.writes(20 + r.IntN(30))
		wg.Add(1)
		run(writer, writes, r.IntN(2) == 0, r.Uint64())
		for _, w := range writes {
			p.one(p.pg, w)
		}
		check(round, "after writes to running views")
		if t.Failed() {
			t.FailNow()
		}
	}
	var drawn []string
	for _, s := range churnShapes {
		drawn = append(drawn, fmt.Sprintf("%s %d", s, made[s]))
	}
	t.Logf("%d rounds, %d view comparisons, %d differences that lasted past another FLUSH, %d only in evaluation order; %d generated views refused by streamdb (0A000); views made: %s",
		rounds, checked, lasting, order, refused, strings.Join(drawn, ", "))
}

// one runs one statement on one connection; an error fails the test.
func (p *pair) one(c *pgx.Conn, sql string) {
	p.t.Helper()
	if _, err := c.Exec(p.ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		p.t.Fatalf("%s: %v", sql, err)
	}
}

// churn draws the writes and views of TestSubqueryViewsChurn.
type churn struct {
	r       *rand.Rand
	g       *qgen
	nextKey int
}

// churnWritten are the tables TestSubqueryViewsChurn writes to: all the
// generator's tables.
var churnWritten = append(append([]string{}, queryTables...), jsonTable)

// writes returns n statements: inserts of new keys, updates of a column
// of the rows with some keys and deletes (of keys that may not exist),
// each to one of churnWritten or, as a transaction, to two of them.
func (c *churn) writes(n int) []string {
	one := func(tbl string) string {
		switch c.r.IntN(4) {
		case 0, 1:
			c.nextKey++
			return fmt.Sprintf("INSERT INTO %s VALUES (%s)", tbl, strings.Join(queryRow(c.r, tbl, c.nextKey), ", "))
		case 2:
			return fmt.Sprintf("UPDATE %s SET c%d = %s WHERE c0 %% 9 = %d", tbl, 1+c.r.IntN(4), queryValue(c.r), c.r.IntN(9))
		default:
			k := c.r.IntN(46) - 7
			if c.r.IntN(2) == 0 {
				k = 1000 + c.r.IntN(c.nextKey-999)
			}
			return fmt.Sprintf("DELETE FROM %s WHERE c0 = %d", tbl, k)
		}
	}
	out := make([]string, n)
	for i := range out {
		t1 := c.r.IntN(len(churnWritten))
		if c.r.IntN(3) == 0 {
			t2 := (t1 + 1 + c.r.IntN(len(churnWritten)-1)) % len(churnWritten)
			out[i] = fmt.Sprintf("BEGIN; %s; %s; COMMIT", one(churnWritten[t1]), one(churnWritten[t2]))
		} else {
			out[i] = one(churnWritten[t1])
		}
	}
	return out
}

// churnShapes name the view shapes, for the log; "generated" is a query
// of the generator that holds a subquery.
var churnShapes = []string{"distinct-on-scalar-not-in", "distinct-on-scalar-where-not-in", "distinct-on-where-scalar-not-in", "not-in", "not-in-select", "not-exists", "distinct-on-not-exists", "scalar-correlated", "scalar-not-in-correlated", "generated"}

// view returns a view query of a random shape, over the tables of
// churnWritten in random roles.
func (c *churn) view() (shape, query string) {
	perm := c.r.Perm(len(churnWritten))
	a, b, third := churnWritten[perm[0]], churnWritten[perm[1]], churnWritten[perm[2]]
	col := func() string { return fmt.Sprintf("c%d", 1+c.r.IntN(4)) }
	n := c.r.IntN(7) - 2
	cmp := []string{"=", "<>", "<", ">="}[c.r.IntN(4)]
	shape = churnShapes[c.r.IntN(len(churnShapes))]
	switch shape {
	case "distinct-on-scalar-not-in":
		// The shape the query generator found empty once: DISTINCT ON
		// over a scalar subquery whose WHERE has NOT IN.
		agg := []string{"count(*)", "max(s.%s)", "min(s.%s)", "sum(s.%s)"}[c.r.IntN(4)]
		if strings.Contains(agg, "%s") {
			agg = fmt.Sprintf(agg, col())
		}
		corr := ""
		if c.r.IntN(2) == 0 {
			corr = fmt.Sprintf("s.%s = o.%s AND ", col(), col())
		}
		on := []string{"1", "o." + col(), fmt.Sprintf("(o.%s %% 2)", col())}[c.r.IntN(3)]
		query = fmt.Sprintf("SELECT DISTINCT ON (%[1]s) %[1]s AS d, (SELECT %[2]s FROM %[3]s AS s WHERE %[4]ss.%[5]s NOT IN (SELECT i.%[6]s FROM %[7]s AS i WHERE i.%[8]s > %[9]d)) AS v FROM %[7]s AS o ORDER BY %[1]s, 2",
			on, agg, b, corr, col(), col(), a, col(), n)
	case "distinct-on-scalar-where-not-in":
		// The generated view that was found empty once (seed 103): an
		// uncorrelated scalar subquery in the select list, NOT IN over
		// a constant in WHERE, each over another table.
		query = fmt.Sprintf("SELECT DISTINCT ON ((o.c0 %% 3)) ((SELECT max((s.%[1]s * 6)) FROM %[2]s AS s) * o.%[3]s) FROM %[4]s AS o WHERE o.%[5]s NOT IN (SELECT %[6]d FROM %[7]s AS i) ORDER BY (o.c0 %% 3), 1",
			col(), b, col(), a, col(), n+4, third)
	case "distinct-on-where-scalar-not-in":
		on := []string{"1", "o." + col()}[c.r.IntN(2)]
		query = fmt.Sprintf("SELECT DISTINCT ON (%[1]s) %[1]s AS d, o.c0 FROM %[2]s AS o WHERE o.%[3]s %[4]s (SELECT count(s.%[5]s) FROM %[6]s AS s WHERE s.%[7]s NOT IN (SELECT i.%[8]s FROM %[2]s AS i)) ORDER BY %[1]s, o.c0 DESC",
			on, a, col(), cmp, col(), b, col(), col())
	case "not-in":
		query = fmt.Sprintf("SELECT o.c0, o.%[1]s FROM %[2]s AS o WHERE o.%[3]s NOT IN (SELECT i.%[4]s FROM %[5]s AS i WHERE i.%[6]s %[7]s %[8]d)",
			col(), a, col(), col(), b, col(), cmp, n)
	case "not-in-select":
		query = fmt.Sprintf("SELECT o.c0, o.%[1]s NOT IN (SELECT i.%[2]s FROM %[3]s AS i WHERE i.c0 %% 3 <> %[4]d) AS ni FROM %[5]s AS o",
			col(), col(), b, c.r.IntN(3), a)
	case "not-exists":
		query = fmt.Sprintf("SELECT o.c0, o.%[1]s FROM %[2]s AS o WHERE NOT EXISTS (SELECT 1 FROM %[3]s AS i WHERE i.%[4]s = o.%[5]s AND i.%[6]s %[7]s %[8]d)",
			col(), a, b, col(), col(), col(), cmp, n)
	case "distinct-on-not-exists":
		query = fmt.Sprintf("SELECT DISTINCT ON (o.%[1]s) o.%[1]s, o.c0 FROM %[2]s AS o WHERE NOT EXISTS (SELECT 1 FROM %[3]s AS i WHERE i.%[4]s = o.%[5]s) ORDER BY o.%[1]s, o.c0",
			col(), a, b, col(), col())
	case "scalar-correlated":
		query = fmt.Sprintf("SELECT o.c0, (SELECT %[1]s(i.%[2]s) FROM %[3]s AS i WHERE i.%[4]s = o.%[5]s) AS v FROM %[6]s AS o",
			[]string{"count", "sum", "max"}[c.r.IntN(3)], col(), b, col(), col(), a)
	case "scalar-not-in-correlated":
		query = fmt.Sprintf("SELECT o.c0, o.%[1]s FROM %[2]s AS o WHERE o.%[3]s %[4]s (SELECT count(*) FROM %[5]s AS i WHERE i.%[6]s = o.%[7]s AND i.%[8]s NOT IN (SELECT j.%[9]s FROM %[2]s AS j WHERE j.c0 %% 2 = %[10]d))",
			col(), a, col(), cmp, b, col(), col(), col(), col(), c.r.IntN(2))
	default: // generated
		for {
			q := c.g.query()
			if strings.Contains(q.sql, "(SELECT") {
				return shape, q.sql
			}
		}
	}
	return shape, query
}
