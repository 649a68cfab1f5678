package binder_test

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"streamdb/exec"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sql"
	"streamdb/types"
)

// recordViews are views whose plans must record and read back as the same
// plan: each kind of node, and each way the binder builds an expression.
var recordViews = []string{
	`SELECT k, count(*) AS n, sum(v) AS total, avg(f), min(s), max(n), count(DISTINCT s) FROM ev GROUP BY k`,
	`SELECT k, v * 2 + 1 AS w, -v, -f, v % 7, f / 3, n / 3.5, s || '!' AS t, upper(s), length(vc) FROM ev WHERE v > 10 AND (s LIKE 'a%' OR s ILIKE '%B')`,
	`SELECT CASE WHEN v > 100 THEN 'big' WHEN v > 10 THEN 'mid' ELSE s END AS c, CASE k WHEN 1 THEN 1.5 END, coalesce(s, vc, 'none'), nullif(k, 3) FROM ev`,
	`SELECT b IS TRUE, b IS NOT TRUE, b IS FALSE, b IS NOT FALSE, s IS NULL, s IS NOT NULL, NOT b, k IN (1, 2, 3), k NOT IN (4, 5), k BETWEEN 2 AND 9 FROM ev`,
	`SELECT s::varchar(3), n::numeric(10,2), s::char(2), k::text, v::double precision, CAST(f AS int), ts::date FROM ev`,
	`SELECT ts + interval '1 hour', ts - interval '2 days', ts - d::timestamp, iv * 2, date_trunc('hour', ts), extract(epoch FROM ts), d + 3 FROM ev`,
	`SELECT k = ANY('{1,2,3}'), s <> ALL('{a,b}'), regexp_like(s, '^a.*'), NOT regexp_like(s, 'z', 'i'), s IS DISTINCT FROM vc, s IS NOT DISTINCT FROM vc, 'x' || NULL FROM ev`,
	`SELECT i.name, count(*) AS n, sum(e.v * i.price) AS revenue FROM ev e JOIN items i ON i.id = e.k AND e.v > i.price GROUP BY i.name`,
	`SELECT e.k, i.name FROM ev e LEFT JOIN items i ON i.id = e.k`,
	`SELECT k, v FROM ev ORDER BY v DESC, k LIMIT 5`,
	`SELECT * FROM (SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM ev) x WHERE rn <= 3`,
	`SELECT window_start, count(*) AS n, max(v) AS top FROM TUMBLE(ev, ts, interval '1 minute') GROUP BY window_start`,
	`SELECT window_start, window_end, k, sum(v) FROM HOP(ev, ts, interval '1 minute', interval '5 minutes') GROUP BY window_start, window_end, k`,
	`SELECT k FROM ev UNION ALL SELECT id FROM items`,
	`WITH big AS (SELECT k, v FROM ev WHERE v > 5) SELECT a.k, count(*) FROM big a JOIN big b ON a.k = b.k GROUP BY a.k`,
	`SELECT groups, total FROM (SELECT count(*) AS groups, sum(n) AS total FROM per_k) x`,
	`SELECT count(*) AS n, sum(price) AS value FROM items`,
	`SELECT k, 1e300 * 10 AS big, 'NaN'::float8, 0.1::numeric + 1, -0.0::float8, 'it''s' FROM wm`,
	// Subqueries, decorrelated into joins (view_subquery.go).
	`SELECT id FROM items WHERE EXISTS (SELECT 1 FROM ev WHERE ev.k = items.id) AND NOT EXISTS (SELECT 1 FROM ev WHERE ev.v = items.id)`,
	`SELECT id, price NOT IN (SELECT n FROM ev WHERE ev.k = items.id) AS r, id IN (SELECT k FROM ev) AS i FROM items WHERE EXISTS (SELECT 1 FROM wm)`,
	`SELECT id, (SELECT count(*) FROM ev WHERE ev.k = items.id) AS c, (SELECT max(v) FROM ev WHERE ev.k = items.id) AS m FROM items WHERE price > (SELECT avg(n) FROM ev)`,
	`SELECT id FROM items WHERE price < ANY (SELECT n FROM ev WHERE ev.k = items.id) AND id <> ANY (SELECT k FROM ev)`,
}

// TestPlanRecords records each view's plan, reads it back, and checks that
// both render alike and that every expression computes the same values
// (or fails alike) on sample rows.
func TestPlanRecords(t *testing.T) {
	cat := sql.NewOfflineCatalog()
	for _, q := range []string{
		`CREATE STREAM ev (k int, v bigint, f double precision, n numeric, s text, vc varchar(10), b boolean, ts timestamp, d date, iv interval) WITH (subject = 'ev')`,
		`CREATE STREAM wm (k int, ts timestamp, WATERMARK FOR ts AS ts - interval '5 seconds') WITH (subject = 'wm')`,
		`CREATE TABLE items (id int PRIMARY KEY, name text, price numeric)`,
		`CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS n FROM ev GROUP BY k`,
	} {
		if err := cat.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range recordViews {
		st, err := front.Parse("CREATE MATERIALIZED VIEW v AS " + q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		root, err := cat.BindViewStatement(st, st.Node.(*front.CreateMaterializedView))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		data, err := plan.Encode(root, cat.Lookup)
		if err != nil {
			t.Errorf("%s: not recorded: %v", q, err)
			continue
		}
		back, err := plan.Decode(data, cat.Lookup)
		if err != nil {
			t.Errorf("%s: does not read back: %v", q, err)
			continue
		}
		if a, b := plan.Explain(root), plan.Explain(back); a != b {
			t.Errorf("%s: reads back as another plan:\n%s\nwant\n%s", q, b, a)
		}
		if a, b := exec.ExplainStreaming(root), exec.ExplainStreaming(back); a != b {
			t.Errorf("%s: reads back as another dataflow:\n%s\nwant\n%s", q, b, a)
		}
		sameValues(t, q, root, back)
	}
}

// sameValues evaluates the expressions of a and b, two plans of the same
// shape, over sample rows of their inputs.
func sameValues(t *testing.T, q string, a, b plan.Node) {
	t.Helper()
	var ea, eb []expr.Expr
	var ins []plan.Node
	collect := func(n plan.Node, out *[]expr.Expr, inputs bool) {
		var walk func(plan.Node)
		walk = func(n plan.Node) {
			add := func(in plan.Node, es ...expr.Expr) {
				for _, e := range es {
					if e != nil {
						*out = append(*out, e)
						if inputs {
							ins = append(ins, in)
						}
					}
				}
			}
			switch n := n.(type) {
			case *plan.Filter:
				add(n.Input, n.Cond)
			case *plan.Project:
				add(n.Input, n.Exprs...)
			case *plan.Aggregate:
				add(n.Input, n.GroupBy...)
			case *plan.Scan:
				if n.Watermark != nil {
					add(n, n.Watermark.Expr)
				}
			}
			for _, c := range n.Children() {
				walk(c)
			}
		}
		walk(n)
	}
	collect(a, &ea, true)
	collect(b, &eb, false)
	if len(ea) != len(eb) {
		t.Errorf("%s: %d expressions read back as %d", q, len(ea), len(eb))
		return
	}
	for i := range ea {
		for r, row := range sampleRows(ins[i].Schema()) {
			va, erra := ea[i].Eval(row)
			vb, errb := eb[i].Eval(row)
			if (erra == nil) != (errb == nil) || (erra == nil && types.Compare(va, vb) != 0) {
				t.Errorf("%s: %s on sample row %d: %v (%v), read back %v (%v)", q, ea[i], r, va, erra, vb, errb)
			}
		}
	}
}

// sampleRows are rows of cols: all NULL, then two of typical values.
func sampleRows(cols []types.Column) []types.Row {
	rows := make([]types.Row, 3)
	for r := range rows {
		rows[r] = make(types.Row, len(cols))
		if r == 0 {
			continue
		}
		for i, c := range cols {
			rows[r][i] = sampleValue(c.Type, r)
		}
	}
	return rows
}

func sampleValue(t types.Type, r int) types.Datum {
	switch t {
	case types.Bool:
		return types.NewBool(r == 1)
	case types.Int2, types.Int4, types.Int8:
		return types.NewInt(int64(r*37 - 40))
	case types.Float4, types.Float8:
		return types.NewFloat(float64(r) * 2.75)
	case types.Numeric:
		d, _, _ := apd.NewFromString(fmt.Sprintf("%d.125", r*11))
		return types.NewDecimal(d)
	case types.Text, types.Varchar, types.Unknown:
		return types.NewString([]string{"", "abc", "Xyz b"}[r])
	case types.Date:
		return types.NewDate(int64(19000 + r))
	case types.Timestamp, types.Timestamptz:
		return types.NewTimestamp2000(int64(r) * 1_700_000_000_123_456)
	case types.Interval:
		return types.NewInterval(int32(r), 2, 3_000_000)
	}
	return types.Null
}
