package sqllogic

import (
	"slices"
	"strings"
)

// ignoreMarker in expected results matches any text.
const ignoreMarker = "<slt:ignore>"

// formatValue renders one text-format value as sqllogictest-rs's
// PostgreSQL engine does.
func formatValue(v []byte) string {
	switch {
	case v == nil:
		return "NULL"
	case len(v) == 0:
		return "(empty)"
	}
	return string(v)
}

// normalize trims s and collapses runs of ASCII whitespace to one space.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
	}), " ")
}

// sortRows applies a sort mode to result rows. RowSort sorts whole rows;
// ValueSort sorts all values, one per row.
func sortRows(rows [][]string, mode SortMode) [][]string {
	switch mode {
	case RowSort:
		rows = slices.Clone(rows)
		slices.SortFunc(rows, slices.Compare[[]string])
	case ValueSort:
		var vals []string
		for _, r := range rows {
			vals = append(vals, r...)
		}
		slices.Sort(vals)
		rows = make([][]string, len(vals))
		for i, v := range vals {
			rows[i] = []string{v}
		}
	}
	return rows
}

// valueWise turns rows into one value per row (control resultmode valuewise).
func valueWise(rows [][]string) [][]string {
	var out [][]string
	for _, r := range rows {
		for _, v := range r {
			out = append(out, []string{v})
		}
	}
	return out
}

// rowLines joins each row's values with single spaces.
func rowLines(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, " ")
	}
	return out
}

// resultsMatch compares actual rows with expected lines, whitespace
// normalised, honouring <slt:ignore>.
func resultsMatch(actual [][]string, expected []string) bool {
	if slices.ContainsFunc(expected, func(l string) bool { return strings.Contains(l, ignoreMarker) }) {
		return matchIgnoring(strings.Join(rowLines(actual), "\n"), strings.Join(expected, "\n"))
	}
	if len(actual) != len(expected) {
		return false
	}
	for i, row := range actual {
		vals := make([]string, len(row))
		for j, v := range row {
			vals[j] = normalize(v)
		}
		if strings.Join(vals, " ") != normalize(expected[i]) {
			return false
		}
	}
	return true
}

// matchIgnoring reports whether the fragments of expected between ignore
// markers appear in actual in order.
func matchIgnoring(actual, expected string) bool {
	pos := 0
	for _, frag := range strings.Split(expected, ignoreMarker) {
		if frag == "" {
			continue
		}
		i := strings.Index(actual[pos:], frag)
		if i < 0 {
			return false
		}
		pos += i + len(frag)
	}
	return true
}

// lineDiff renders a line diff of expected and actual, "-" for expected
// lines missing from actual and "+" for extra actual lines.
func lineDiff(expected, actual []string) string {
	n, m := len(expected), len(actual)
	var b strings.Builder
	if n*m > 4_000_000 { // too large for the quadratic diff: show both
		b.WriteString("[Expected]\n")
		for _, l := range expected {
			b.WriteString("    " + l + "\n")
		}
		b.WriteString("[Actual]\n")
		for _, l := range actual {
			b.WriteString("    " + l + "\n")
		}
		return b.String()
	}
	// lcs[i][j] is the LCS length of expected[i:] and actual[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	eq := func(i, j int) bool { return normalize(expected[i]) == normalize(actual[j]) }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if eq(i, j) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && eq(i, j):
			b.WriteString("    " + actual[j] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			b.WriteString("+   " + actual[j] + "\n")
			j++
		default:
			b.WriteString("-   " + expected[i] + "\n")
			i++
		}
	}
	return b.String()
}
