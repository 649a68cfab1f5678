package differential

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// value is one field in PostgreSQL text format; null is SQL NULL.
type value struct {
	s    string
	null bool
}

func (v value) String() string {
	if v.null {
		return "NULL"
	}
	return strconv.Quote(v.s)
}

type row []value

func (r row) key() string {
	var b strings.Builder
	for _, v := range r {
		if v.null {
			b.WriteString("N|")
		} else {
			b.WriteString("V")
			b.WriteString(strconv.Itoa(len(v.s)))
			b.WriteString(":")
			b.WriteString(v.s)
			b.WriteString("|")
		}
	}
	return b.String()
}

func (r row) String() string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = v.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// result is a query result fetched in text format.
type result struct {
	cols []string
	oids []uint32
	rows []row
}

// query runs sql with the simple query protocol, so that every value comes
// back as the server's own text rendering.
func query(ctx context.Context, conn *pgx.Conn, sql string) (*result, error) {
	results, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(results) != 1 {
		return nil, fmt.Errorf("%d results, want 1", len(results))
	}
	rr := results[0]
	if rr.Err != nil {
		return nil, rr.Err
	}
	res := &result{}
	for _, fd := range rr.FieldDescriptions {
		res.cols = append(res.cols, fd.Name)
		res.oids = append(res.oids, fd.DataTypeOID)
	}
	for _, raw := range rr.Rows {
		r := make(row, len(raw))
		for i, b := range raw {
			if b == nil {
				r[i] = value{null: true}
			} else {
				r[i] = value{s: string(b)}
			}
		}
		res.rows = append(res.rows, r)
	}
	return res, nil
}

// comparer holds the comparison options of one query pair.
type comparer struct {
	floatCols map[int]bool // column indexes compared with tolerance
}

func newComparer(cols []string, floatNames []string) comparer {
	c := comparer{floatCols: map[int]bool{}}
	for _, f := range floatNames {
		for i, name := range cols {
			if name == f {
				c.floatCols[i] = true
			}
		}
	}
	return c
}

// relTol is the relative tolerance for sums and averages of doubles.
const relTol = 1e-9

func floatClose(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if x == y {
		return true
	}
	scale := math.Max(math.Max(math.Abs(x), math.Abs(y)), 1)
	return math.Abs(x-y) <= relTol*scale
}

func (c comparer) valueEqual(i int, want, got value) bool {
	if want.null || got.null {
		return want.null == got.null
	}
	if want.s == got.s {
		return true
	}
	return c.floatCols[i] && floatClose(want.s, got.s)
}

func (c comparer) rowEqual(want, got row) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if !c.valueEqual(i, want[i], got[i]) {
			return false
		}
	}
	return true
}

// compareSchema checks column names and types.
func compareSchema(want, got *result) []string {
	var issues []string
	if len(want.cols) != len(got.cols) {
		return []string{fmt.Sprintf("column count: postgres %d %v, streamdb %d %v",
			len(want.cols), want.cols, len(got.cols), got.cols)}
	}
	for i := range want.cols {
		if want.cols[i] != got.cols[i] {
			issues = append(issues, fmt.Sprintf("column %d name: postgres %q, streamdb %q", i+1, want.cols[i], got.cols[i]))
		}
		if want.oids[i] != got.oids[i] {
			issues = append(issues, fmt.Sprintf("column %q type OID: postgres %d, streamdb %d", want.cols[i], want.oids[i], got.oids[i]))
		}
	}
	return issues
}

// maxShown bounds the rows printed per difference list.
const maxShown = 5

// compareMultiset compares results as multisets of rows and describes the
// differences (empty when equal).
func (c comparer) compareMultiset(want, got *result) []string {
	counts := map[string]int{}
	byKey := map[string]row{}
	for _, r := range want.rows {
		k := r.key()
		counts[k]++
		byKey[k] = r
	}
	for _, r := range got.rows {
		k := r.key()
		counts[k]--
		byKey[k] = r
	}
	var missing, extra []row // missing: in PostgreSQL only; extra: in streamdb only
	for k, n := range counts {
		for ; n > 0; n-- {
			missing = append(missing, byKey[k])
		}
		for ; n < 0; n++ {
			extra = append(extra, byKey[k])
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return nil
	}
	// Pair rows whose differences are within the float tolerance.
	if len(c.floatCols) > 0 {
		var stillMissing []row
		used := make([]bool, len(extra))
		for _, m := range missing {
			found := false
			for j, e := range extra {
				if !used[j] && c.rowEqual(m, e) {
					used[j], found = true, true
					break
				}
			}
			if !found {
				stillMissing = append(stillMissing, m)
			}
		}
		var stillExtra []row
		for j, e := range extra {
			if !used[j] {
				stillExtra = append(stillExtra, e)
			}
		}
		missing, extra = stillMissing, stillExtra
		if len(missing) == 0 && len(extra) == 0 {
			return nil
		}
	}
	sortRows(missing)
	sortRows(extra)
	issues := []string{fmt.Sprintf("rows: postgres %d, streamdb %d; %d rows only in postgres, %d only in streamdb",
		len(want.rows), len(got.rows), len(missing), len(extra))}
	issues = append(issues, columnDiffs(want.cols, missing, extra, c)...)
	issues = append(issues, showRows("only in postgres (expected)", missing)...)
	issues = append(issues, showRows("only in streamdb (actual)", extra)...)
	return issues
}

// columnDiffs pairs differing rows by their first column (when it
// identifies them) and counts which columns differ, with an example each.
func columnDiffs(cols []string, missing, extra []row, c comparer) []string {
	first := func(rows []row) map[string][]row {
		m := map[string][]row{}
		for _, r := range rows {
			if len(r) > 0 {
				m[r[0].String()] = append(m[r[0].String()], r)
			}
		}
		return m
	}
	mm, em := first(missing), first(extra)
	type stat struct {
		n       int
		example string
	}
	stats := map[int]*stat{}
	paired := 0
	for k, ms := range mm {
		es := em[k]
		if len(ms) != 1 || len(es) != 1 || len(ms[0]) != len(es[0]) {
			continue
		}
		paired++
		for i := 1; i < len(ms[0]); i++ {
			if !c.valueEqual(i, ms[0][i], es[0][i]) {
				s := stats[i]
				if s == nil {
					s = &stat{example: fmt.Sprintf("%s=%s: postgres %s, streamdb %s", cols[0], k, ms[0][i], es[0][i])}
					stats[i] = s
				}
				s.n++
			}
		}
	}
	if paired == 0 {
		return nil
	}
	idx := make([]int, 0, len(stats))
	for i := range stats {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := []string{fmt.Sprintf("%d rows paired by %s; differing columns:", paired, cols[0])}
	for _, i := range idx {
		out = append(out, fmt.Sprintf("  %s: %d rows, e.g. %s", cols[i], stats[i].n, stats[i].example))
	}
	return out
}

// compareOrdered compares results row by row.
func (c comparer) compareOrdered(want, got *result) []string {
	var issues []string
	if len(want.rows) != len(got.rows) {
		issues = append(issues, fmt.Sprintf("rows: postgres %d, streamdb %d", len(want.rows), len(got.rows)))
	}
	for i := 0; i < len(want.rows) || i < len(got.rows); i++ {
		var w, g row
		if i < len(want.rows) {
			w = want.rows[i]
		}
		if i < len(got.rows) {
			g = got.rows[i]
		}
		if w != nil && g != nil && c.rowEqual(w, g) {
			continue
		}
		if len(issues) > 2*maxShown {
			issues = append(issues, "...")
			break
		}
		issues = append(issues, fmt.Sprintf("row %d: postgres %v, streamdb %v", i+1, w, g))
	}
	return issues
}

// sortRows orders rows by their keys, for stable reports.
func sortRows(rows []row) {
	keys := make([]string, len(rows))
	idx := make([]int, len(rows))
	for i, r := range rows {
		keys[i], idx[i] = r.key(), i
	}
	sort.Slice(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	sorted := make([]row, len(rows))
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
}

func showRows(title string, rows []row) []string {
	if len(rows) == 0 {
		return nil
	}
	out := []string{title + ":"}
	for i, r := range rows {
		if i == maxShown {
			out = append(out, fmt.Sprintf("  ... %d more", len(rows)-maxShown))
			break
		}
		out = append(out, "  "+r.String())
	}
	return out
}
