package props

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestQueriesAsViews runs generated SELECTs (query_gen_test.go) as
// materialized views: each query PostgreSQL runs becomes a view in
// streamdb and in PostgreSQL 15 (WITH NO DATA, refreshed before each
// comparison); then rounds of inserts, updates and deletes go to both,
// and after each round the view's rows must equal PostgreSQL's as a
// multiset. A view streamdb refuses with 0A000 (docs/differences.md) is
// counted, not failed. Where PostgreSQL's REFRESH fails (a division by
// zero) the view is not compared: streamdb skips such a row
// (streamdb_view_errors); where only streamdb's view skipped a row, the
// difference is evaluation order, as in TestQueries. It makes a quarter
// as many views as $STREAMDB_PROP_CASES says queries (make queries).
func TestQueriesAsViews(t *testing.T) {
	r := propRand(t)
	n := max(1, propCases(t, 400)/4)
	// A view takes seconds on a loaded machine (its CREATE, three
	// FLUSHes and comparisons): make queries' full size needs hours.
	p := startPair(t, max(40*time.Minute, time.Duration(n)*4*time.Second))
	createQueryTables(t, r, p)
	g := newQgen(r)
	f := &failures{t: t}
	// Differences found before a fatal error (a timeout, a full disk)
	// are reported too.
	defer f.done()
	var pgRejects, refused, checked, order, views int
	const batch = 6
	var live []string // "name\x00query" of the views of the current batch
	made := map[string]int{}
	reasons := map[string]int{} // the refusals (0A000) by their message
	nextKey := 1000
	flushBatch := func() {
		for round := range 3 {
			if round > 0 {
				viewDML(p, r, &nextKey)
			}
			if _, err := p.sdb.Exec(p.ctx, "FLUSH"); err != nil {
				t.Fatalf("FLUSH: %v", err)
			}
			for _, v := range live {
				name, q, _ := strings.Cut(v, "\x00")
				if o := simple(t, p.ctx, p.pg, "REFRESH MATERIALIZED VIEW "+name); o.code != "" {
					continue // the query fails on these rows in PostgreSQL
				}
				sel := "SELECT * FROM " + name
				got, want := simple(t, p.ctx, p.sdb, sel), simple(t, p.ctx, p.pg, sel)
				checked++
				if sameQueryOutcome(got, want, false) {
					continue
				}
				errs := simple(t, p.ctx, p.sdb, fmt.Sprintf("SELECT count(*) FROM streamdb_view_errors WHERE view = '%s'", name))
				if errs.code == "" && len(errs.rows) == 1 && string(errs.rows[0][0]) != "0" {
					order++
					continue
				}
				f.add(fmt.Sprintf("view after DML round %d", round), q, got, want)
			}
		}
		for _, v := range live {
			name, _, _ := strings.Cut(v, "\x00")
			p.both("DROP MATERIALIZED VIEW " + name)
		}
		live = live[:0]
	}
	for i := range n {
		q := g.query()
		want := simple(t, p.ctx, p.pg, q.sql)
		if want.code != "" {
			pgRejects++
			continue
		}
		// The view names its columns: generated ones repeat names.
		sd, err := p.pg.Prepare(p.ctx, "", q.sql)
		if err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
		cols := make([]string, len(sd.Fields))
		for j := range cols {
			cols[j] = fmt.Sprintf("x%d", j+1)
		}
		name := fmt.Sprintf("gv%d", i)
		create := fmt.Sprintf("CREATE MATERIALIZED VIEW %s (%s) AS %s", name, strings.Join(cols, ", "), q.sql)
		if got := simple(t, p.ctx, p.sdb, create); got.code == "0A000" {
			refused++
			// The message's start: some go on to quote the query.
			reasons[got.msg[:min(len(got.msg), 90)]]++
			continue
		} else if got.code != "" {
			f.add("CREATE MATERIALIZED VIEW", create, got, outcome{})
			continue
		}
		if o := simple(t, p.ctx, p.pg, create+" WITH NO DATA"); o.code != "" {
			t.Fatalf("%s WITH NO DATA: %v", create, o)
		}
		views++
		for _, k := range viewFeatures {
			if strings.Contains(q.sql, k) {
				made[k]++
			}
		}
		live = append(live, name+"\x00"+q.sql)
		if len(live) == batch {
			flushBatch()
		}
	}
	flushBatch()
	t.Logf("%d queries: %d refused by PostgreSQL, %d views refused by streamdb (0A000), %d views made; %d comparisons after DML rounds, %d differ only in evaluation order (a row streamdb's view skipped on an error)",
		n, pgRejects, refused, views, checked, order)
	var drawn []string
	for _, k := range viewFeatures {
		drawn = append(drawn, fmt.Sprintf("%s %d", k, made[k]))
	}
	t.Logf("views made with: %s", strings.Join(drawn, ", "))
	t.Logf("views refused (0A000), most frequent reasons first:\n%s", topReasons(reasons, 10))
}

// topReasons lists the n most frequent messages, with their counts.
func topReasons(reasons map[string]int, n int) string {
	msgs := slices.Collect(maps.Keys(reasons))
	slices.SortFunc(msgs, func(a, b string) int {
		if c := cmp.Compare(reasons[b], reasons[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	for _, m := range msgs[:min(n, len(msgs))] {
		fmt.Fprintf(&b, "  %5d %s\n", reasons[m], m)
	}
	return b.String()
}

// viewFeatures are fragments of the views made that the log counts, to
// show what the views covered.
var viewFeatures = []string{"WITH TIES", "DISTINCT ON", "LIMIT", "OFFSET", "jsonb", "FROM qj", ".j -> '", ".j ->> '", " @> ", "jsonb_typeof(", " IN (", "ROW(", " << ", " # ", "(~ "}

// viewDML is one round of changes to the generator's tables, the same on
// both servers: a few inserts of new keys, updates of a column of a key
// (which may not exist) and deletes.
func viewDML(p *pair, r *rand.Rand, nextKey *int) {
	for _, tbl := range append(append([]string{}, queryTables...), jsonTable) {
		for range 1 + r.IntN(3) {
			switch r.IntN(3) {
			case 0:
				p.both(fmt.Sprintf("INSERT INTO %s VALUES (%s)", tbl, strings.Join(queryRow(r, tbl, *nextKey), ", ")))
				*nextKey++
			case 1:
				set := fmt.Sprintf("c%d = %s", 1+r.IntN(4), queryValue(r))
				if tbl == jsonTable && r.IntN(2) == 0 {
					set = "j = " + jsonValues[r.IntN(len(jsonValues))]
				}
				p.both(fmt.Sprintf("UPDATE %s SET %s WHERE c0 = %d", tbl, set, r.IntN(46)-7))
			default:
				p.both(fmt.Sprintf("DELETE FROM %s WHERE c0 = %d", tbl, r.IntN(46)-7))
			}
		}
	}
}
