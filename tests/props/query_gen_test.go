package props

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The query generator of TestQueries: random SELECTs over tables of five
// integer columns (c0..c4), with arithmetic, CASE, BETWEEN, IN lists,
// scalar subqueries (with aggregates, correlated or not), EXISTS, IN and
// op ANY/ALL subqueries, aggregates with GROUP BY and HAVING (ordered-set
// and statistical ones, array_agg), window functions with ROWS frames,
// ORDER BY with LIMIT, joins, UNION [ALL] and LATERAL. Every expression is an integer (or boolean) so that the
// comparison checks the query language, not number formatting.

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
}

func newQgen(r *rand.Rand) *qgen { return &qgen{r: r} }

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
	switch g.r.IntN(12) {
	case 0, 1, 2:
		return g.column()
	case 3:
		return g.literal()
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
	switch g.r.IntN(13) {
	case 0, 1, 2:
		return fmt.Sprintf("%s %s %s", g.intExpr(depth-1), g.cmp(), g.intExpr(depth-1))
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
		return fmt.Sprintf("%s %s %s", g.intExpr(depth-1), g.cmp(), g.scalarSubquery(depth-1))
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
		t := queryTables[g.r.IntN(len(queryTables))]
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
		t := queryTables[g.r.IntN(len(queryTables))]
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

// query is a top-level SELECT.
func (g *qgen) query() genQuery {
	g.alias = 0
	return genQuery{}.from(g)
}

func (genQuery) from(g *qgen) genQuery {
	switch g.r.IntN(12) {
	case 0:
		return g.joined()
	case 1:
		return g.union()
	case 2:
		return g.lateral()
	case 3:
		return g.windowed()
	}
	var q genQuery
	g.within(func(a string) string {
		t := queryTables[g.r.IntN(len(queryTables))]
		where := ""
		if g.pct(60) {
			where = " WHERE " + g.cond(2)
		}
		if g.pct(30) {
			q = g.grouped(t, a, where)
			return ""
		}
		n := 1 + g.r.IntN(3)
		items := make([]string, n)
		for i := range items {
			if g.pct(25) {
				items[i] = g.cond(2)
			} else {
				items[i] = g.intExpr(2)
			}
		}
		q.sql = fmt.Sprintf("SELECT %s FROM %s AS %s%s", strings.Join(items, ", "), t, a, where)
		if g.pct(40) {
			q.sql += " ORDER BY " + positions(n)
			q.ordered = true
			if g.pct(50) {
				q.sql += fmt.Sprintf(" LIMIT %d", 1+g.r.IntN(6))
			}
		}
		return ""
	})
	return q
}

// grouped is a query with GROUP BY (or a whole-table aggregate) and
// HAVING.
func (g *qgen) grouped(t, a, where string) genQuery {
	aggs := func() string {
		switch g.r.IntN(8) {
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
		}
		return fmt.Sprintf("%s(%s)", []string{"sum", "min", "max", "count"}[g.r.IntN(4)], g.intExpr(1))
	}
	var key string
	if g.pct(80) {
		key = g.column()
		if g.pct(40) {
			key = fmt.Sprintf("(%s %s %d)", key, []string{"+", "*", "%"}[g.r.IntN(3)], 2+g.r.IntN(3))
		}
	}
	items := []string{aggs()}
	if key != "" {
		items = append([]string{key}, items...)
	}
	if g.pct(40) {
		items = append(items, aggs())
	}
	q := genQuery{sql: fmt.Sprintf("SELECT %s FROM %s AS %s%s", strings.Join(items, ", "), t, a, where)}
	if key != "" {
		q.sql += " GROUP BY " + key
	}
	if g.pct(40) {
		q.sql += fmt.Sprintf(" HAVING %s %s %s", aggs(), g.cmp(), g.literal())
	}
	if g.pct(40) {
		q.sql += " ORDER BY " + positions(len(items))
		q.ordered = true
	}
	return q
}

// windowed is a query with a window function over a window ordered by
// the primary key c0 (so that its value does not depend on the order of
// peers), with or without a partition and a ROWS frame.
func (g *qgen) windowed() genQuery {
	var q genQuery
	g.within(func(a string) string {
		t := queryTables[g.r.IntN(len(queryTables))]
		over := ""
		if g.pct(60) {
			over = "PARTITION BY " + g.column() + " "
		}
		over += fmt.Sprintf("ORDER BY %s.c0%s", a, g.maybe(" DESC"))
		var fn string
		switch g.r.IntN(9) {
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
		default:
			fn = fmt.Sprintf("%s(%s)", []string{"sum", "count", "min", "max"}[g.r.IntN(4)], g.intExpr(1))
			if g.pct(60) {
				lo := []string{"UNBOUNDED PRECEDING", "1 PRECEDING", "2 PRECEDING", "CURRENT ROW"}[g.r.IntN(4)]
				hi := []string{"CURRENT ROW", "1 FOLLOWING", "UNBOUNDED FOLLOWING"}[g.r.IntN(3)]
				over += " ROWS BETWEEN " + lo + " AND " + hi
			}
		}
		where := ""
		if g.pct(40) {
			where = " WHERE " + g.cond(1)
		}
		q.sql = fmt.Sprintf("SELECT %s.c0, %s OVER (%s) FROM %s AS %s%s", a, fn, over, t, a, where)
		if g.pct(40) {
			q.sql += " ORDER BY 1, 2"
			q.ordered = true
		}
		return ""
	})
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

// joined is an inner or left join of two tables, ON a condition over
// both, with WHERE and an ORDER BY over every output column.
func (g *qgen) joined() genQuery {
	var q genQuery
	g.within(func(a string) string {
		return g.within(func(b string) string {
			kind := []string{"JOIN", "LEFT JOIN", "JOIN"}[g.r.IntN(3)]
			on := fmt.Sprintf("%s.c%d = %s.c%d", a, g.r.IntN(5), b, g.r.IntN(5))
			if g.pct(40) {
				on += " AND " + g.cond(1)
			}
			items := []string{fmt.Sprintf("%s.c0", a), fmt.Sprintf("%s.c%d", b, g.r.IntN(5)), g.intExpr(1)}
			q.sql = fmt.Sprintf("SELECT %s FROM %s AS %s %s %s AS %s ON %s", strings.Join(items, ", "),
				queryTables[g.r.IntN(2)], a, kind, queryTables[g.r.IntN(2)], b, on)
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

// union is UNION or UNION ALL of two single-table queries.
func (g *qgen) union() genQuery {
	part := func() string {
		return g.within(func(a string) string {
			return fmt.Sprintf("SELECT %s, %s FROM %s AS %s WHERE %s", g.intExpr(1), g.intExpr(1), queryTables[g.r.IntN(2)], a, g.cond(1))
		})
	}
	op := []string{"UNION", "UNION ALL"}[g.r.IntN(2)]
	return genQuery{sql: part() + " " + op + " " + part()}
}

// lateral joins a table with a LATERAL aggregate subquery correlated with
// it.
func (g *qgen) lateral() genQuery {
	var q genQuery
	g.within(func(a string) string {
		sub := g.within(func(b string) string {
			agg := []string{"max", "min", "sum", "count"}[g.r.IntN(4)]
			return fmt.Sprintf("SELECT %s(%s.c%d) AS x FROM %s AS %s WHERE %s", agg, b, g.r.IntN(5), queryTables[g.r.IntN(2)], b, g.cond(1))
		})
		q.sql = fmt.Sprintf("SELECT %s.c0, l.x, %s FROM %s AS %s, LATERAL (%s) AS l ORDER BY 1, 2, 3", a, g.intExpr(1), queryTables[g.r.IntN(2)], a, sub)
		q.ordered = true
		return ""
	})
	return q
}
