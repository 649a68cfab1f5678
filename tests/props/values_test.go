package props

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// valueCase is one value written to one column type. Its literal goes in
// under id; when PostgreSQL keeps it, PostgreSQL's own text output goes in
// again as a text parameter under id+1 and its binary output as a binary
// parameter under id+2.
type valueCase struct {
	ct   colType
	id   int
	expr string
}

// failures collects the differences of a run and reports the first ones.
type failures struct {
	t      *testing.T
	n      int
	known  int
	report []string
}

// maxReported bounds the differences reported one by one; set
// $STREAMDB_PROP_REPORT to see more.
func maxReported() int {
	if n, err := strconv.Atoi(os.Getenv("STREAMDB_PROP_REPORT")); err == nil && n > 0 {
		return n
	}
	return 40
}

func (f *failures) add(kind, stmt string, got, want outcome) {
	if reason := knownDifference(kind, stmt, got, want); reason != "" {
		f.known++
		if f.known <= 10 {
			f.t.Logf("known difference (%s): %s\n  streamdb:   %v\n  PostgreSQL: %v", reason, stmt, got, want)
		}
		return
	}
	f.n++
	if f.n <= maxReported() {
		r := fmt.Sprintf("%s: %s\n  streamdb:   %v\n  PostgreSQL: %v", kind, stmt, got, want)
		f.report = append(f.report, r)
		// Logged when found too, so that a long run (make queries)
		// stopped before its end still shows what it found.
		f.t.Logf("difference %d: %s", f.n, r)
	}
}

func (f *failures) done() {
	for _, r := range f.report {
		f.t.Error(r)
	}
	if f.n > maxReported() {
		f.t.Errorf("... and %d more differences", f.n-maxReported())
	}
	if f.known > 0 {
		f.t.Logf("%d known differences skipped (see known_test.go)", f.known)
	}
}

// TestValues writes every edge value of every column type and random values
// through a table and a stream of streamdb and a table of PostgreSQL, and
// compares what each server accepts and what reads back from the table, a
// view of the table (its changelog), a view of the stream, and min/max
// views, in the text and the binary format.
func TestValues(t *testing.T) {
	r := propRand(t)
	randomCases := propCases(t, 150)
	p := startPair(t, 10*time.Minute)
	for _, ct := range colTypes {
		p.both(fmt.Sprintf("CREATE TABLE t_%s (id int PRIMARY KEY, v %s)", ct.key, ct.decl))
		views := []string{
			fmt.Sprintf("CREATE STREAM s_%s (id int, v %s)", ct.key, ct.decl),
			fmt.Sprintf("CREATE MATERIALIZED VIEW tv_%s AS SELECT id, v FROM t_%s", ct.key, ct.key),
			fmt.Sprintf("CREATE MATERIALIZED VIEW sv_%s AS SELECT id, v FROM s_%s", ct.key, ct.key),
		}
		if ct.minmax {
			for _, rel := range []string{"t", "s"} {
				views = append(views, fmt.Sprintf("CREATE MATERIALIZED VIEW %sm_%s AS %s FROM %s_%s",
					rel, ct.key, aggList, rel, ct.key))
			}
		}
		for _, sql := range views {
			if _, err := p.sdb.Exec(p.ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
	}

	var cases []valueCase
	id := 0
	next := func(ct colType, expr string) {
		id += 10
		cases = append(cases, valueCase{ct: ct, id: id, expr: expr})
	}
	for _, ct := range colTypes {
		for _, e := range ct.edges {
			next(ct, e)
		}
	}
	for range randomCases {
		ct := colTypes[r.IntN(len(colTypes))]
		next(ct, ct.random(r))
	}
	r.Shuffle(len(cases), func(i, j int) { cases[i], cases[j] = cases[j], cases[i] })

	f := &failures{t: t}
	differed := map[string]map[int]bool{} // ids not to compare, by type key
	for _, c := range cases {
		writeValue(p, f, c, differed)
	}
	if _, err := p.sdb.Exec(p.ctx, "FLUSH"); err != nil {
		t.Fatalf("FLUSH: %v", err)
	}
	for _, ct := range colTypes {
		compareRows(p, f, ct, differed[ct.key], cases)
	}
	f.done()
	t.Logf("%d values (%d edge, %d random) of %d column types", len(cases), len(cases)-randomCases, randomCases, len(colTypes))
}

// aggList is the select list of the min/max views.
const aggList = "SELECT count(*) AS n, count(v) AS nv, min(v) AS lo, max(v) AS hi"

// writeValue inserts one case into both servers and, when PostgreSQL keeps
// it, its text and binary forms as parameters.
func writeValue(p *pair, f *failures, c valueCase, differed map[string]map[int]bool) {
	t := p.t
	key := c.ct.key
	skip := func(id int) {
		if differed[key] == nil {
			differed[key] = map[int]bool{}
		}
		differed[key][id] = true
	}
	insert := func(rel string, id int) string {
		return fmt.Sprintf("INSERT INTO %s_%s (id, v) VALUES (%d, %s)", rel, key, id, c.expr)
	}
	want := simple(t, p.ctx, p.pg, insert("t", c.id))
	for _, rel := range []string{"t", "s"} {
		sql := insert(rel, c.id)
		if got := simple(t, p.ctx, p.sdb, sql); !got.sameAs(want) {
			f.add("INSERT", sql, got, want)
			skip(c.id)
		}
	}
	if want.code != "" {
		return
	}
	sel := fmt.Sprintf("SELECT v FROM t_%s WHERE id = %d", key, c.id)
	text := simple(t, p.ctx, p.pg, sel)
	bin := extended(t, p.ctx, p.pg, sel, true)
	if text.code != "" || bin.code != "" || len(text.rows) != 1 {
		t.Fatalf("PostgreSQL: %s: %v / %v", sel, text, bin)
	}
	params := []param{
		{oid: 0, value: text.rows[0][0]},
		{oid: bin.oids[0], binary: true, value: bin.rows[0][0]},
	}
	for i, prm := range params {
		id := c.id + 1 + i
		stmt := fmt.Sprintf("INSERT INTO %%s_%s (id, v) VALUES (%d, $1)", key, id)
		desc := fmt.Sprintf(" -- $1 = %s", describeParam(prm))
		want := extended(t, p.ctx, p.pg, fmt.Sprintf(stmt, "t"), false, prm)
		for _, rel := range []string{"t", "s"} {
			sql := fmt.Sprintf(stmt, rel)
			if got := extended(t, p.ctx, p.sdb, sql, false, prm); !got.sameAs(want) {
				f.add("INSERT with a parameter", sql+desc+" (PostgreSQL's output of "+c.expr+")", got, want)
				skip(id)
			}
		}
	}
}

func describeParam(prm param) string {
	if prm.value == nil {
		return "NULL"
	}
	if prm.binary {
		return fmt.Sprintf("binary oid %d %x", prm.oid, prm.value)
	}
	return "text " + strconv.Quote(string(prm.value))
}

// compareRows compares what streamdb's table, its view, the stream's view
// and the min/max views return with PostgreSQL's table, row by row, in
// both formats. Rows whose INSERT already differed are left out.
func compareRows(p *pair, f *failures, ct colType, skip map[int]bool, cases []valueCase) {
	t := p.t
	exprOf := map[int]string{}
	for _, c := range cases {
		if c.ct.key == ct.key {
			exprOf[c.id] = c.expr
			exprOf[c.id+1] = "text parameter from PostgreSQL's output of " + c.expr
			exprOf[c.id+2] = "binary parameter from PostgreSQL's output of " + c.expr
		}
	}
	keep := func(o outcome) map[int]outcome {
		byID := map[int]outcome{}
		for _, row := range o.rows {
			id, err := strconv.Atoi(string(row[0]))
			if err != nil || skip[id] {
				continue
			}
			byID[id] = outcome{oids: o.oids, rows: [][][]byte{row}}
		}
		return byID
	}
	for _, binary := range []bool{false, true} {
		// The id column is read in text so that rows can be matched.
		query := func(c *pgx.Conn, rel string) outcome {
			sql := fmt.Sprintf("SELECT id::text, v FROM %s ORDER BY id", rel)
			if binary {
				return extended(t, p.ctx, c, sql, true)
			}
			return simple(t, p.ctx, c, sql)
		}
		format := map[bool]string{false: "text", true: "binary"}[binary]
		wantAll := query(p.pg, "t_"+ct.key)
		if wantAll.code != "" {
			t.Fatalf("PostgreSQL: t_%s: %v", ct.key, wantAll)
		}
		want := keep(wantAll)
		for _, rel := range []string{"t_", "tv_", "sv_"} {
			gotAll := query(p.sdb, rel+ct.key)
			if gotAll.code != "" {
				f.add("SELECT", rel+ct.key, gotAll, wantAll)
				continue
			}
			got := keep(gotAll)
			ids := map[int]bool{}
			for id := range want {
				ids[id] = true
			}
			for id := range got {
				ids[id] = true
			}
			sorted := make([]int, 0, len(ids))
			for id := range ids {
				sorted = append(sorted, id)
			}
			sort.Ints(sorted)
			for _, id := range sorted {
				g, w := got[id], want[id]
				if !g.sameAs(w) {
					f.add("SELECT in "+format, fmt.Sprintf("row %d of %s%s (%s %s)", id, rel, ct.key, ct.decl, exprOf[id]), g, w)
				}
			}
		}
		if ct.minmax && len(skip) == 0 {
			sql := aggList + " FROM t_" + ct.key
			var w outcome
			if binary {
				w = extended(t, p.ctx, p.pg, sql, true)
			} else {
				w = simple(t, p.ctx, p.pg, sql)
			}
			for _, rel := range []string{"tm_", "sm_"} {
				sql := "SELECT * FROM " + rel + ct.key
				var g outcome
				if binary {
					g = extended(t, p.ctx, p.sdb, sql, true)
				} else {
					g = simple(t, p.ctx, p.sdb, sql)
				}
				if !g.sameAs(w) {
					f.add("SELECT in "+format, sql+" (PostgreSQL: "+aggList+" FROM t_"+ct.key+")", g, w)
				}
			}
		}
	}
}
