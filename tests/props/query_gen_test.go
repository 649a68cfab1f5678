package props

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// The query generator of TestQueries: random SELECTs over tables of five
// integer columns (c0..c4, NULLs included), VALUES lists, derived tables
// and CTEs (WITH [RECURSIVE], [NOT] MATERIALIZED), with arithmetic, CASE,
// BETWEEN, IN lists; scalar subqueries (with aggregates, correlated or
// not, nested), EXISTS, IN and op ANY/ALL subqueries in SELECT, WHERE,
// HAVING, ON and ORDER BY; aggregates with GROUP BY and HAVING (DISTINCT,
// FILTER, string_agg, bool_and/bool_or/every, avg, ordered-set and
// statistical ones, array_agg); window functions with ROWS, RANGE and
// GROUPS frames; ORDER BY with LIMIT; inner, left, right and full joins (ON,
// USING, NATURAL); UNION, INTERSECT and EXCEPT [ALL]; LATERAL;
// set-returning functions in FROM and in select lists; bitwise operators
// (& | # ~ << >>); row comparisons; DISTINCT ON; LIMIT and OFFSET given
// as expressions (NULL, ALL, arithmetic, an uncorrelated subquery) and
// FETCH FIRST ... WITH TIES; and jsonb built from the columns
// (jsonb_build_object, jsonb_build_array, to_jsonb) or read from the
// table qj's jsonb column, taken apart with -> ->> #> #>> @> <@ ? ?| ?&
// and jsonb_typeof, and grouped by a value extracted from it.
// Every expression is an integer, a boolean or a jsonb value, so that
// the comparison checks the query language, not number formatting. It
// does not generate
// what streamdb refuses on purpose (known_test.go): an ORDER BY inside
// string_agg or array_agg over anything but the aggregated value.

// queryTables are the tables a query reads, all with columns c0..c4.
var queryTables = []string{"q0", "q1"}

// genQuery is one generated query and whether its rows come in an order
// that it fixes (ORDER BY over every output column): otherwise they are
// compared as multisets.
type genQuery struct {
	sql     string
	ordered bool
}

// qgen generates queries; scopes are the aliases visible to an
// expression, innermost last (outer ones make a subquery correlated).
type qgen struct {
	r      *rand.Rand
	scopes []string
	alias  int
	tables []string // what a FROM item may name: queryTables and the CTEs in scope
	// jsonCol, when set, is the jsonb column of the FROM item in scope
	// (qj's j) that jsonb expressions may read.
	jsonCol string
}

func newQgen(r *rand.Rand) *qgen { return &qgen{r: r, tables: queryTables} }

// table is a relation of columns c0..c4 for a FROM item.
func (g *qgen) table() string { return g.tables[g.r.IntN(len(g.tables))] }

func (g *qgen) pct(p int) bool { return g.r.IntN(100) < p }

func (g *qgen) newAlias() string {
	g.alias++
	return fmt.Sprintf("s%d", g.alias)
}

// column is a column of the innermost scope, or sometimes of an outer one.
func (g *qgen) column() string {
	i := len(g.scopes) - 1
	if i > 0 && g.pct(35) {
		i = g.r.IntN(i)
	}
	return fmt.Sprintf("%s.c%d", g.scopes[i], g.r.IntN(5))
}

func (g *qgen) literal() string {
	if g.pct(5) {
		return "NULL"
	}
	return fmt.Sprint(g.r.IntN(13) - 4)
}

// intExpr is an integer expression of at most depth levels.
func (g *qgen) intExpr(depth int) string {
	if depth <= 0 {
		if g.pct(70) {
			return g.column()
		}
		return g.literal()
	}
	switch g.r.IntN(15) {
	case 0, 1, 2:
		return g.column()
	case 3:
		return g.literal()
	case 12:
		op := []string{"&", "|", "#"}[g.r.IntN(3)]
		return fmt.Sprintf("(%s %s %s)", g.intExpr(depth-1), op, g.intExpr(depth-1))
	case 13:
		if g.pct(30) {
			return fmt.Sprintf("(~ %s)", g.intExpr(depth-1))
		}
		// A literal shift of 0..4: PostgreSQL shifts as C does, so a
		// count past the width or negative is the hardware's answer.
		op := []string{"<<", ">>"}[g.r.IntN(2)]
		return fmt.Sprintf("(%s %s %d)", g.intExpr(depth-1), op, g.r.IntN(5))
	case 14:
		return g.jsonbInt(depth - 1)
	case 4, 5:
		op := []string{"+", "-", "*", "+", "-"}[g.r.IntN(5)]
		return fmt.Sprintf("(%s %s %s)", g.intExpr(depth-1), op, g.intExpr(depth-1))
	case 6:
		op := []string{"/", "%"}[g.r.IntN(2)]
		return fmt.Sprintf("(%s %s %s)", g.intExpr(depth-1), op, g.intExpr(depth-1))
	case 7:
		if g.pct(50) {
			return fmt.Sprintf("CASE WHEN %s THEN %s ELSE %s END", g.cond(depth-1), g.intExpr(depth-1), g.intExpr(depth-1))
		}
		// The operand is never a bare NULL: PostgreSQL types CASE NULL
		// WHEN 1 as text = integer and refuses it (42883), a quirk of
		// its unknown-type resolution that streamdb does not copy.
		operand := g.intExpr(depth - 1)
		if operand == "NULL" {
			operand = g.column()
		}
		return fmt.Sprintf("CASE %s WHEN %s THEN %s WHEN %s THEN %s END", operand, g.literal(), g.intExpr(depth-1), g.literal(), g.intExpr(depth-1))
	case 8:
		return fmt.Sprintf("coalesce(%s, %s)", g.intExpr(depth-1), g.intExpr(depth-1))
	case 9:
		return fmt.Sprintf("abs(%s)", g.intExpr(depth-1))
	default:
		return g.scalarSubquery(depth - 1)
	}
}

// cond is a boolean expression.
func (g *qgen) cond(depth int) string {
	if depth <= 0 {
		return fmt.Sprintf("%s %s %s", g.intExpr(0), g.cmp(), g.intExpr(0))
	}
	switch g.r.IntN(14) {
	case 0, 1, 2:
		return fmt.Sprintf("%s %s %s", g.intExpr(depth-1), g.cmp(), g.intExpr(depth-1))
	case 13:
		return g.jsonbCond(depth - 1)
	case 3:
		not := ""
		if g.pct(30) {
			not = "NOT "
		}
		return fmt.Sprintf("%s %sBETWEEN %s AND %s", g.intExpr(depth-1), not, g.intExpr(0), g.intExpr(0))
	case 4:
		return fmt.Sprintf("%s IS %sNULL", g.intExpr(depth-1), g.maybe("NOT "))
	case 5:
		return fmt.Sprintf("NOT (%s)", g.cond(depth-1))
	case 6:
		return fmt.Sprintf("(%s AND %s)", g.cond(depth-1), g.cond(depth-1))
	case 7:
		return fmt.Sprintf("(%s OR %s)", g.cond(depth-1), g.cond(depth-1))
	case 8:
		return fmt.Sprintf("%s %sIN (%s, %s, %s)", g.intExpr(depth-1), g.maybe("NOT "), g.literal(), g.literal(), g.literal())
	case 9:
		return fmt.Sprintf("%sEXISTS (%s)", g.maybe("NOT "), g.subSelect(depth-1, false))
	case 10:
		return fmt.Sprintf("%s %sIN (%s)", g.intExpr(depth-1), g.maybe("NOT "), g.subSelect(depth-1, true))
	case 11:
		q := []string{"ANY", "ALL", "SOME"}[g.r.IntN(3)]
		return fmt.Sprintf("%s %s %s (%s)", g.intExpr(depth-1), g.cmp(), q, g.subSelect(depth-1, true))
	default:
		if g.pct(50) {
			return g.rowCond(depth - 1)
		}
		return fmt.Sprintf("%s %s %s", g.intExpr(depth-1), g.cmp(), g.scalarSubquery(depth-1))
	}
}

// rowCond compares row values field by field: with a comparison
// operator, IS [NOT] DISTINCT FROM, IS [NOT] NULL or an IN list.
func (g *qgen) rowCond(depth int) string {
	row := func(n int) string {
		fields := make([]string, n)
		for i := range fields {
			fields[i] = g.intExpr(depth)
		}
		return "(" + strings.Join(fields, ", ") + ")"
	}
	n := 2 + g.r.IntN(2)
	left := row(n)
	if g.pct(20) {
		left = "ROW" + left
	}
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprintf("%s IS %sDISTINCT FROM %s", left, g.maybe("NOT "), row(n))
	case 1:
		return fmt.Sprintf("%s IS %sNULL", left, g.maybe("NOT "))
	case 2:
		return fmt.Sprintf("%s %sIN (%s, %s)", left, g.maybe("NOT "), row(n), row(n))
	default:
		return fmt.Sprintf("%s %s %s", left, g.cmp(), row(n))
	}
}

func (g *qgen) maybe(s string) string {
	if g.pct(40) {
		return s
	}
	return ""
}

func (g *qgen) cmp() string {
	return []string{"=", "<>", "<", "<=", ">", ">="}[g.r.IntN(6)]
}

// within binds a new alias for a FROM item and runs fn in its scope.
func (g *qgen) within(fn func(alias string) string) string {
	a := g.newAlias()
	g.scopes = append(g.scopes, a)
	defer func() { g.scopes = g.scopes[:len(g.scopes)-1] }()
	return fn(a)
}

// scalarSubquery is a subquery of one row and one integer column: an
// aggregate, often correlated with the query around it.
func (g *qgen) scalarSubquery(depth int) string {
	return "(" + g.within(func(a string) string {
		t := g.table()
		// The argument names a column of the subquery, so that the
		// aggregate is the subquery's (SQL makes an aggregate of outer
		// columns only the outer query's).
		arg := fmt.Sprintf("%s.c%d", a, g.r.IntN(5))
		if g.pct(40) {
			arg = fmt.Sprintf("(%s %s %s)", arg, []string{"+", "-", "*"}[g.r.IntN(3)], g.intExpr(0))
		}
		agg := []string{"max(%s)", "min(%s)", "count(%s)", "sum(%s)", "count(*)"}[g.r.IntN(5)]
		if !strings.Contains(agg, "%s") {
			agg += "%.0s"
		}
		where := ""
		if g.pct(80) {
			where = " WHERE " + g.cond(depth)
		}
		return fmt.Sprintf("SELECT "+agg+" FROM %s AS %s%s", arg, t, a, where)
	}) + ")"
}

// subSelect is a subquery for EXISTS (any columns) or IN and ANY/ALL (one
// integer column).
func (g *qgen) subSelect(depth int, oneColumn bool) string {
	return g.within(func(a string) string {
		t := g.table()
		sel := "1"
		if oneColumn || g.pct(50) {
			sel = g.intExpr(min(depth, 1))
		}
		where := ""
		if g.pct(85) {
			where = " WHERE " + g.cond(depth)
		}
		if g.pct(15) {
			return fmt.Sprintf("SELECT %s FROM %s AS %s%s GROUP BY %s", sel, t, a, where, sel)
		}
		return fmt.Sprintf("SELECT %s FROM %s AS %s%s", sel, t, a, where)
	})
}

// query is a top-level SELECT, sometimes under WITH.
func (g *qgen) query() genQuery {
	g.alias = 0
	g.tables = queryTables
	g.jsonCol = ""
	switch g.r.IntN(14) {
	case 0:
		return g.withCTE()
	case 1:
		return g.recursive()
	}
	return g.from()
}

// from is a query of one of the generator's shapes.
func (g *qgen) from() genQuery {
	switch g.r.IntN(14) {
	case 0, 1:
		return g.joined()
	case 5:
		return g.srf()
	case 2:
		return g.setOp()
	case 3:
		return g.lateral()
	case 4:
		return g.windowed()
	case 6:
		return g.overJSON()
	}
	var q genQuery
	g.within(func(a string) string {
		q = g.single(g.fromItem(a), a)
		return ""
	})
	return q
}

// fromItem is a FROM item of columns c0..c4 under alias a in which c0 is
// unique (windows order by it): a table or CTE, a VALUES list, or a
// derived table filtering one. Derived tables and VALUES see no outer
// scope (they are not LATERAL).
func (g *qgen) fromItem(a string) string {
	switch g.r.IntN(10) {
	case 0:
		rows := make([]string, 1+g.r.IntN(5))
		for i := range rows {
			vals := []string{fmt.Sprint(i*2 - 3)}
			for range 4 {
				// The first row has no NULL, so that every column is an
				// integer (a column of NULLs only would be text).
				if i == 0 {
					vals = append(vals, fmt.Sprint(g.r.IntN(13)-4))
				} else {
					vals = append(vals, g.literal())
				}
			}
			rows[i] = "(" + strings.Join(vals, ", ") + ")"
		}
		return fmt.Sprintf("(VALUES %s) AS %s(c0, c1, c2, c3, c4)", strings.Join(rows, ", "), a)
	case 1:
		outer, json := g.scopes, g.jsonCol
		g.scopes, g.jsonCol = nil, ""
		defer func() { g.scopes, g.jsonCol = outer, json }()
		sub := g.within(func(b string) string {
			return fmt.Sprintf("SELECT %s.c0, %s.c1, %s AS c2, %s.c3, %s.c4 FROM %s AS %s WHERE %s", b, b, g.intExpr(1), b, b, g.table(), b, g.cond(1))
		})
		return fmt.Sprintf("(%s) AS %s", sub, a)
	}
	return fmt.Sprintf("%s AS %s", g.table(), a)
}

// single is a query over one FROM item: a projection with WHERE and
// ORDER BY, or a grouped query.
func (g *qgen) single(item, a string) genQuery {
	var q genQuery
	where := ""
	if g.pct(60) {
		where = " WHERE " + g.cond(2)
	}
	if g.pct(30) {
		return g.grouped(item, a, where)
	}
	n := 1 + g.r.IntN(3)
	items := make([]string, n)
	for i := range items {
		switch {
		case g.pct(10):
			items[i] = g.jsonbValue(1)
		case g.pct(25):
			items[i] = g.cond(2)
		default:
			items[i] = g.intExpr(2)
		}
	}
	distinct := ""
	var on string // the DISTINCT ON expression, which the ORDER BY leads with
	if g.pct(12) {
		on = []string{"1", fmt.Sprintf("%s.c%d", a, g.r.IntN(5)), fmt.Sprintf("(%s.c%d %s %d)", a, g.r.IntN(5), []string{"%", "&", ">>"}[g.r.IntN(3)], 1+g.r.IntN(3))}[g.r.IntN(3)]
		distinct = "DISTINCT ON (" + on + ") "
	}
	q.sql = fmt.Sprintf("SELECT %s%s FROM %s%s", distinct, strings.Join(items, ", "), item, where)
	if on != "" || g.pct(40) {
		// ORDER BY every output column fixes the order; a leading
		// subquery key orders before them.
		q.sql += " ORDER BY "
		if on != "" {
			q.sql += on + ", "
		} else if g.pct(25) {
			q.sql += g.scalarSubquery(1) + ", "
		}
		if on == "" && g.pct(20) {
			// WITH TIES over a prefix of the columns: which rows tie
			// does not depend on the order among peers, so the rows are
			// one multiset (without an OFFSET, which would pick peers).
			q.sql += positions(1+g.r.IntN(n)) + " FETCH FIRST " + g.limitValue(true, true) + " ROWS WITH TIES"
			return q
		}
		q.sql += positions(n)
		q.ordered = true
		if g.pct(50) {
			q.sql += g.limitClause()
		}
	}
	return q
}

// limitValue is a LIMIT, OFFSET or FETCH count: mostly a small number,
// else arithmetic, NULL or an uncorrelated scalar subquery (negative
// ones included: both refuse them). fetch: FETCH FIRST, which takes an
// expression only in parentheses. ties: a WITH TIES count, never NULL
// (streamdb refuses the literal before errors PostgreSQL finds first).
func (g *qgen) limitValue(fetch, ties bool) string {
	switch g.r.IntN(8) {
	case 0:
		e := fmt.Sprintf("%d %s %d", g.r.IntN(5), []string{"+", "-", "*"}[g.r.IntN(3)], g.r.IntN(4))
		if fetch || g.pct(50) {
			e = "(" + e + ")"
		}
		return e
	case 1:
		if ties {
			return "(1 - 1)"
		}
		if fetch {
			return "(NULL)"
		}
		return "NULL"
	case 2:
		outer, json := g.scopes, g.jsonCol
		g.scopes, g.jsonCol = nil, ""
		defer func() { g.scopes, g.jsonCol = outer, json }()
		return g.within(func(b string) string {
			return fmt.Sprintf("(SELECT count(*) %% 5 FROM %s AS %s WHERE %s)", g.table(), b, g.cond(0))
		})
	}
	return fmt.Sprint(g.r.IntN(6))
}

// limitClause is LIMIT and OFFSET (in either form) after an ORDER BY that
// fixes the order.
func (g *qgen) limitClause() string {
	switch g.r.IntN(6) {
	case 0:
		return " OFFSET " + g.limitValue(false, false)
	case 1:
		return fmt.Sprintf(" LIMIT %s OFFSET %s", g.limitValue(false, false), g.limitValue(false, false))
	case 2:
		return " LIMIT ALL OFFSET " + g.limitValue(false, false)
	case 3:
		return fmt.Sprintf(" OFFSET %s ROWS FETCH NEXT %s ROWS ONLY", g.limitValue(true, false), g.limitValue(true, false))
	case 4:
		return fmt.Sprintf(" OFFSET %s ROWS FETCH FIRST %s ROWS WITH TIES", g.limitValue(true, false), g.limitValue(true, true))
	}
	return " LIMIT " + g.limitValue(false, false)
}

// withCTE is a query under WITH: one or two CTEs filtering a table
// (MATERIALIZED or not), which the query's FROM items may name.
func (g *qgen) withCTE() genQuery {
	var ctes []string
	names := slices.Clone(queryTables)
	for i := range 1 + g.r.IntN(2) {
		name := fmt.Sprintf("w%d", i)
		body := g.within(func(b string) string {
			return fmt.Sprintf("SELECT * FROM %s AS %s WHERE %s", g.table(), b, g.cond(1))
		})
		mat := []string{"", "", "MATERIALIZED ", "NOT MATERIALIZED "}[g.r.IntN(4)]
		ctes = append(ctes, fmt.Sprintf("%s AS %s(%s)", name, mat, body))
		names = append(names, name)
		g.tables = names
	}
	q := g.from()
	q.sql = "WITH " + strings.Join(ctes, ", ") + " " + q.sql
	return q
}

// recursive is a query over a WITH RECURSIVE CTE that steps c0 of a
// table's rows up to a bound (so it ends), changing the other columns on
// the way; its c0 is not unique, so only single-item queries read it.
func (g *qgen) recursive() genQuery {
	base := g.within(func(b string) string {
		return fmt.Sprintf("SELECT * FROM %s AS %s WHERE %s", g.table(), b, g.cond(1))
	})
	step := fmt.Sprintf("SELECT r.c0 + %d, r.c1 + coalesce(r.c2, 1), r.c2, %s, r.c4 FROM r WHERE r.c0 < %d",
		1+g.r.IntN(3), []string{"r.c3", "-r.c3", "r.c3 % 3", "coalesce(r.c3, r.c0)"}[g.r.IntN(4)], g.r.IntN(12))
	union := []string{"UNION", "UNION ALL"}[g.r.IntN(2)]
	var q genQuery
	g.within(func(a string) string {
		q = g.single("r AS "+a, a)
		return ""
	})
	q.sql = fmt.Sprintf("WITH RECURSIVE r(c0, c1, c2, c3, c4) AS (%s %s %s) %s", base, union, step, q.sql)
	return q
}

// grouped is a query with GROUP BY (or a whole-table aggregate) and
// HAVING.
func (g *qgen) grouped(item, a, where string) genQuery {
	// aggs is an aggregate call; HAVING compares one of integer (or
	// numeric) type.
	aggs := func(number bool) string {
		k := g.r.IntN(14)
		for number && (k == 5 || k == 6 || k == 7) {
			k = g.r.IntN(14)
		}
		switch k {
		case 0:
			return "count(*)"
		case 1:
			return fmt.Sprintf("count(DISTINCT %s)", g.column())
		case 2:
			f := []string{"0", "0.25", "0.5", "0.9", "1"}[g.r.IntN(5)]
			fn := []string{"percentile_disc", "percentile_cont"}[g.r.IntN(2)]
			return fmt.Sprintf("%s(%s) WITHIN GROUP (ORDER BY %s%s)", fn, f, g.column(), g.maybe(" DESC"))
		case 3:
			return fmt.Sprintf("mode() WITHIN GROUP (ORDER BY %s%s)", g.column(), g.maybe(" DESC"))
		case 4:
			fn := []string{"stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp"}[g.r.IntN(6)]
			return fmt.Sprintf("%s(%s)", fn, g.intExpr(1))
		case 5:
			c := g.column()
			// As text: streamdb carries arrays as their text form.
			return fmt.Sprintf("array_to_string(array_agg(%s ORDER BY %s%s), ',', '*')", c, c, g.maybe(" DESC"))
		case 6:
			e := g.intExpr(1)
			// Ordered by the aggregated text: streamdb refuses another
			// order key (known_test.go).
			return fmt.Sprintf("string_agg(%s::text, '%s' ORDER BY %s::text%s)", e, []string{",", ";", ""}[g.r.IntN(3)], e, g.maybe(" DESC"))
		case 7:
			return fmt.Sprintf("%s(%s)", []string{"bool_and", "bool_or", "every"}[g.r.IntN(3)], g.cond(1))
		case 8:
			fn := []string{"sum", "count", "avg", "max"}[g.r.IntN(4)]
			return fmt.Sprintf("%s(DISTINCT %s)", fn, g.intExpr(1))
		case 9:
			fn := []string{"sum", "count", "min", "avg"}[g.r.IntN(4)]
			return fmt.Sprintf("%s(%s) FILTER (WHERE %s)", fn, g.intExpr(1), g.cond(1))
		case 10:
			return "count(*) FILTER (WHERE " + g.cond(1) + ")"
		case 11:
			return fmt.Sprintf("avg(%s)", g.intExpr(1))
		}
		return fmt.Sprintf("%s(%s)", []string{"sum", "min", "max", "count"}[g.r.IntN(4)], g.intExpr(1))
	}
	var key string
	switch {
	case !g.pct(80):
	case g.jsonCol != "" && g.pct(70):
		key = g.jsonbKey()
	default:
		key = g.column()
		if g.pct(40) {
			key = fmt.Sprintf("(%s %s %d)", key, []string{"+", "*", "%"}[g.r.IntN(3)], 2+g.r.IntN(3))
		}
	}
	items := []string{aggs(false)}
	if key != "" {
		items = append([]string{key}, items...)
	}
	if g.pct(40) {
		items = append(items, aggs(false))
	}
	q := genQuery{sql: fmt.Sprintf("SELECT %s FROM %s%s", strings.Join(items, ", "), item, where)}
	if key != "" {
		q.sql += " GROUP BY " + key
	}
	if g.pct(40) {
		q.sql += fmt.Sprintf(" HAVING %s %s %s", aggs(true), g.cmp(), g.havingOperand(key))
	}
	if g.pct(40) {
		if g.pct(25) {
			q.sql += " ORDER BY " + positions(1+g.r.IntN(len(items))) + " FETCH FIRST " + g.limitValue(true, true) + " ROWS WITH TIES"
			return q
		}
		q.sql += " ORDER BY " + positions(len(items))
		q.ordered = true
		if g.pct(30) {
			q.sql += g.limitClause()
		}
	}
	return q
}

// havingOperand is what HAVING compares an aggregate with: a literal, an
// uncorrelated scalar subquery, or one correlated with the grouping key
// (the only column of the outer query a subquery in HAVING may name).
func (g *qgen) havingOperand(key string) string {
	switch g.r.IntN(3) {
	case 0:
		outer, json := g.scopes, g.jsonCol
		g.scopes, g.jsonCol = nil, ""
		defer func() { g.scopes, g.jsonCol = outer, json }()
		return g.scalarSubquery(1)
	case 1:
		// A grouping expression is not matched inside a subquery, only a
		// grouping column.
		if key != "" && !strings.Contains(key, "(") {
			return "(" + g.within(func(b string) string {
				agg := []string{"count(*)", fmt.Sprintf("max(%s.c%d)", b, g.r.IntN(5)), fmt.Sprintf("sum(%s.c%d)", b, g.r.IntN(5))}[g.r.IntN(3)]
				return fmt.Sprintf("SELECT %s FROM %s AS %s WHERE %s.c%d %s %s", agg, g.table(), b, b, g.r.IntN(5), g.cmp(), key)
			}) + ")"
		}
	}
	return g.literal()
}

// windowed is a query with a window function over a window ordered by
// the FROM item's unique c0 (so that its value does not depend on the
// order of peers), with or without a partition and a ROWS, RANGE or
// GROUPS frame.
func (g *qgen) windowed() genQuery {
	var q genQuery
	g.within(func(a string) string {
		item := g.fromItem(a)
		over := ""
		if g.pct(60) {
			over = "PARTITION BY " + g.column() + " "
		}
		over += fmt.Sprintf("ORDER BY %s.c0%s", a, g.maybe(" DESC"))
		var fn string
		switch g.r.IntN(10) {
		case 0:
			fn = fmt.Sprintf("%s(%s, %d, %s)", []string{"lag", "lead"}[g.r.IntN(2)], g.intExpr(1), 1+g.r.IntN(3), g.literal())
		case 1:
			fn = fmt.Sprintf("%s(%s)", []string{"lag", "lead", "first_value", "last_value"}[g.r.IntN(4)], g.intExpr(1))
		case 2:
			fn = fmt.Sprintf("nth_value(%s, %d)", g.intExpr(1), 1+g.r.IntN(3))
		case 3:
			fn = fmt.Sprintf("ntile(%d)", 1+g.r.IntN(4))
		case 4:
			fn = []string{"row_number()", "rank()", "dense_rank()"}[g.r.IntN(3)]
		case 5:
			// As text with two digits: a float's last digit is the
			// printing's, not the query's.
			fn = []string{"cume_dist()", "percent_rank()"}[g.r.IntN(2)]
			q.sql = fmt.Sprintf("SELECT %s.c0, round((%s OVER (%s))::numeric, 2) FROM %s", a, fn, over, item)
			return ""
		default:
			fn = fmt.Sprintf("%s(%s)", []string{"sum", "count", "min", "max", "first_value", "last_value"}[g.r.IntN(6)], g.intExpr(1))
			if g.pct(60) {
				lo := []string{"UNBOUNDED PRECEDING", "1 PRECEDING", "2 PRECEDING", "CURRENT ROW"}[g.r.IntN(4)]
				hi := []string{"CURRENT ROW", "1 FOLLOWING", "3 FOLLOWING", "UNBOUNDED FOLLOWING"}[g.r.IntN(4)]
				over += " " + []string{"ROWS", "ROWS", "RANGE", "GROUPS"}[g.r.IntN(4)] + " BETWEEN " + lo + " AND " + hi
			}
		}
		q.sql = fmt.Sprintf("SELECT %s.c0, %s OVER (%s) FROM %s", a, fn, over, item)
		return ""
	})
	if g.pct(40) {
		q.sql += " ORDER BY 1, 2"
		q.ordered = true
	} else if g.pct(20) {
		q.sql = "SELECT * FROM (" + q.sql + ") AS wq WHERE wq.c0 > " + g.literal()
	}
	return q
}

// positions is "1, 2, ..., n": ORDER BY every output column.
func positions(n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprint(i + 1)
	}
	return strings.Join(p, ", ")
}

// joined is a join of two FROM items (inner, left, right or full; ON a
// condition over both, USING a column, or NATURAL), with WHERE and an
// ORDER BY over every output column.
func (g *qgen) joined() genQuery {
	var q genQuery
	g.within(func(a string) string {
		left := g.fromItem(a)
		return g.within(func(b string) string {
			right := g.fromItem(b)
			kind := []string{"JOIN", "LEFT JOIN", "JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT JOIN"}[g.r.IntN(6)]
			items := []string{fmt.Sprintf("%s.c0", a), fmt.Sprintf("%s.c%d", b, g.r.IntN(5)), g.intExpr(1)}
			var cond string
			switch g.r.IntN(6) {
			case 0:
				c := fmt.Sprintf("c%d", g.r.IntN(5))
				cond = " USING (" + c + ")"
				items[1] = c // the merged column
			case 1:
				kind = "NATURAL " + kind
				items[1] = fmt.Sprintf("c%d", g.r.IntN(5))
			default:
				cond = fmt.Sprintf(" ON %s.c%d = %s.c%d", a, g.r.IntN(5), b, g.r.IntN(5))
				if g.pct(40) {
					cond += " AND " + g.cond(1)
				}
			}
			q.sql = fmt.Sprintf("SELECT %s FROM %s %s %s%s", strings.Join(items, ", "), left, kind, right, cond)
			if g.pct(50) {
				q.sql += " WHERE " + g.cond(1)
			}
			q.sql += " ORDER BY 1, 2, 3"
			q.ordered = true
			return ""
		})
	})
	return q
}

// setOp is UNION, INTERSECT or EXCEPT [ALL] of two or three queries over
// one FROM item each, sometimes with ORDER BY.
func (g *qgen) setOp() genQuery {
	part := func() string {
		return g.within(func(a string) string {
			return fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s", g.intExpr(1), g.intExpr(1), g.fromItem(a), g.cond(1))
		})
	}
	op := func() string {
		return []string{"UNION", "INTERSECT", "EXCEPT"}[g.r.IntN(3)] + g.maybe(" ALL")
	}
	q := genQuery{sql: part() + " " + op() + " " + part()}
	if g.pct(30) {
		q.sql = "(" + q.sql + ") " + op() + " " + part()
	}
	if g.pct(30) {
		q.sql += " ORDER BY 1, 2"
		q.ordered = true
	}
	return q
}

// lateral joins a FROM item with a LATERAL aggregate subquery correlated
// with it, or with a LATERAL row set (LEFT JOIN ... ON true keeps rows
// it has none for).
func (g *qgen) lateral() genQuery {
	var q genQuery
	g.within(func(a string) string {
		left := g.fromItem(a)
		var sub string
		join := ", LATERAL"
		if g.pct(50) {
			sub = g.within(func(b string) string {
				agg := []string{"max", "min", "sum", "count"}[g.r.IntN(4)]
				return fmt.Sprintf("SELECT %s(%s.c%d) AS x FROM %s AS %s WHERE %s", agg, b, g.r.IntN(5), g.table(), b, g.cond(1))
			})
		} else {
			sub = g.within(func(b string) string {
				return fmt.Sprintf("SELECT %s AS x FROM %s AS %s WHERE %s", g.intExpr(1), g.table(), b, g.cond(1))
			})
			if g.pct(50) {
				join = " LEFT JOIN LATERAL"
			}
		}
		on := ""
		if join != ", LATERAL" {
			on = " ON true"
		}
		q.sql = fmt.Sprintf("SELECT %s.c0, l.x, %s FROM %s%s (%s) AS l%s ORDER BY 1, 2, 3", a, g.intExpr(1), left, join, sub, on)
		q.ordered = true
		return ""
	})
	return q
}

// jsonbValue is a jsonb value built from integer expressions (or, in a
// query over qj, its column j): an object, an array, a scalar.
func (g *qgen) jsonbValue(depth int) string {
	if g.jsonCol != "" && g.pct(50) {
		return g.jsonCol
	}
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprintf("jsonb_build_object('a', %s, 'b', %s)", g.intExpr(depth), g.intExpr(depth))
	case 1:
		return fmt.Sprintf("jsonb_build_array(%s, %s, %s)", g.intExpr(depth), g.intExpr(depth), g.intExpr(depth))
	case 2:
		return fmt.Sprintf("jsonb_build_object('a', jsonb_build_array(%s, %s), 'c', jsonb_build_object('d', %s))", g.intExpr(depth), g.intExpr(depth), g.intExpr(depth))
	}
	e := g.intExpr(depth)
	if e == "NULL" {
		e = "NULL::int" // to_jsonb needs a type
	}
	return fmt.Sprintf("to_jsonb(%s)", e)
}

// jsonbInt is an integer read out of a jsonb value: the length of an
// element's text, an array's length, a number guarded by its type. None
// can fail, so that which rows a planner evaluates it on does not matter.
func (g *qgen) jsonbInt(depth int) string {
	v := g.jsonbValue(depth)
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprintf("length(%s ->> '%s')", v, []string{"a", "b", "c", "0", "1"}[g.r.IntN(5)])
	case 1:
		return fmt.Sprintf("length(%s ->> %d)", v, g.r.IntN(4)-1)
	case 2:
		return fmt.Sprintf("length(%s #>> '{%s}')", v, []string{"a,0", "a,1", "c,d", "b", "1"}[g.r.IntN(5)])
	case 3:
		return fmt.Sprintf("jsonb_array_length(CASE jsonb_typeof(%s -> 'a') WHEN 'array' THEN %s -> 'a' ELSE '[]' END)", v, v)
	case 4:
		k := []string{"'a'", "'b'", "0", "-1"}[g.r.IntN(4)]
		return fmt.Sprintf("CASE jsonb_typeof(%s -> %s) WHEN 'number' THEN (%s ->> %s)::int END", v, k, v, k)
	}
	return fmt.Sprintf("length(%s::text)", v)
}

// jsonbKey is a grouping key extracted from the jsonb column in scope: a
// member as jsonb or as text, the value's type, a containment test. It
// is in parentheses, so that havingOperand does not compare it with an
// integer column.
func (g *qgen) jsonbKey() string {
	m := []string{"a", "b", "c"}[g.r.IntN(3)]
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprintf("(%s -> '%s')", g.jsonCol, m)
	case 1:
		return fmt.Sprintf("(%s ->> '%s')", g.jsonCol, m)
	case 2:
		return fmt.Sprintf("jsonb_typeof(%s)", g.jsonCol)
	}
	return fmt.Sprintf("(%s @> %s)", g.jsonCol, []string{`'{"a": 3}'`, `'[1]'`, `'{}'`}[g.r.IntN(3)])
}

// jsonbCond is a boolean over jsonb values.
func (g *qgen) jsonbCond(depth int) string {
	v := g.jsonbValue(depth)
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprintf("%s @> %s", v, g.jsonbValue(depth))
	case 1:
		return fmt.Sprintf("%s <@ %s", v, g.jsonbValue(depth))
	case 2:
		return fmt.Sprintf("%s ? '%s'", v, []string{"a", "b", "c", "x"}[g.r.IntN(4)])
	case 3:
		return fmt.Sprintf("%s %s array['a', '%s']", v, []string{"?|", "?&"}[g.r.IntN(2)], []string{"b", "c", "x"}[g.r.IntN(3)])
	case 4:
		return fmt.Sprintf("jsonb_typeof(%s -> 'a') = '%s'", v, []string{"number", "array", "null"}[g.r.IntN(3)])
	}
	return fmt.Sprintf("%s %s %s", v, []string{"=", "<>", "<", ">="}[g.r.IntN(4)], g.jsonbValue(depth))
}

// jsonTable is the table of integer columns c0..c4 and a jsonb column j
// that overJSON reads; it is not in queryTables (its * has six columns).
const jsonTable = "qj"

// jsonValues are the values of qj.j: objects, arrays, scalars, JSON null
// and SQL NULL.
var jsonValues = []string{
	`'{"a": 3, "b": [1, 2]}'`, `'{"a": [1, -2], "c": {"d": 4}}'`, `'{"b": 1}'`, `'{"a": null}'`,
	`'[1, 2, 3]'`, `'[]'`, `'{}'`, `'5'`, `'"a"'`, `'null'`, `'true'`, "NULL",
}

// overJSON is a query over qj, whose jsonb column the jsonb expressions
// read; sometimes a join with an integer table.
func (g *qgen) overJSON() genQuery {
	var q genQuery
	g.within(func(a string) string {
		g.jsonCol = a + ".j"
		defer func() { g.jsonCol = "" }()
		item := jsonTable + " AS " + a
		if g.pct(30) {
			b := g.newAlias()
			item += fmt.Sprintf(" JOIN %s AS %s ON %s.c0 = %s.c%d", g.table(), b, b, a, g.r.IntN(5))
		}
		q = g.single(item, a)
		return ""
	})
	return q
}
