package props

import "fmt"

// srf joins a FROM item with a set-returning function of its columns
// (generate_series, unnest of one or two arrays, ROWS FROM, WITH
// ORDINALITY; implicitly LATERAL), or calls them in the select list, where
// several run side by side and the shorter are padded with NULLs. Series
// bounds are kept small (a column modulo 4) so that no query explodes.
func (g *qgen) srf() genQuery {
	var q genQuery
	g.within(func(a string) string {
		left := g.fromItem(a)
		col := func() string { return fmt.Sprintf("%s.c%d", a, 1+g.r.IntN(4)) }
		series := func() string {
			return fmt.Sprintf("generate_series(%s %% 4, %s)", col(), []string{"2", "3", col() + " % 4"}[g.r.IntN(3)])
		}
		array := func() string { return fmt.Sprintf("ARRAY[%s, %s, %s]", col(), g.intExpr(1), col()) }
		where := ""
		if g.pct(40) {
			where = " WHERE " + g.cond(1)
		}
		switch g.r.IntN(4) {
		case 0:
			q.sql = fmt.Sprintf("SELECT %s.c0, s.x, s.n FROM %s, %s WITH ORDINALITY AS s(x, n)%s ORDER BY 1, 2, 3", a, left, series(), where)
		case 1:
			q.sql = fmt.Sprintf("SELECT %s.c0, s.x, s.y FROM %s, unnest(%s, ARRAY[%s]) AS s(x, y)%s ORDER BY 1, 2, 3", a, left, array(), col(), where)
		case 2:
			q.sql = fmt.Sprintf("SELECT %s.c0, s.x, s.y, s.n FROM %s LEFT JOIN ROWS FROM (%s, unnest(%s)) WITH ORDINALITY AS s(x, y, n) ON s.x > %s.c0%s ORDER BY 1, 2, 3, 4",
				a, left, series(), array(), a, where)
		default:
			q.sql = fmt.Sprintf("SELECT %s.c0, %s, unnest(%s) FROM %s%s ORDER BY 1, 2, 3", a, series(), array(), left, where)
		}
		q.ordered = true
		return ""
	})
	return q
}
