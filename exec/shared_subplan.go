package exec

import (
	"fmt"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// Under DataflowSharedSubplans a view computes each distinct subplan over
// streams once: a second occurrence of the same windows, filters,
// projections and aggregates over the same stream (Nexmark q5 counts bids
// per auction and window twice, grouped in two orders) takes the first
// one's output through its tee. Two aggregates are the same when they
// group by the same expressions in any order and compute the same
// aggregates in any order; a projection puts the shared output's columns
// in the second occurrence's order.

// sharedSubplan is the operator a subplan's occurrences share.
type sharedSubplan struct {
	tee *teeOp
	// cols names the shared output's columns (see outputKeys), to map a
	// later occurrence's columns onto them.
	cols []string
}

// buildShared builds n once per distinct subplan. It reports false when n
// is not shared (wrong layout, a scan, or a node that cannot be shared),
// and the caller builds it as usual.
func (b *builder) buildShared(n plan.Node, next Operator) (Operator, bool, error) {
	if _, ok := n.(*plan.Scan); ok {
		return nil, false, nil // scans share through addStreamScan
	}
	key := subplanKey(b.dataflow, n)
	if key == "" {
		return nil, false, nil
	}
	cols := outputKeys(n)
	if sh, ok := b.subplans[key]; ok {
		perm := make([]expr.Expr, len(cols))
		schema := n.Schema()
		for j, c := range cols {
			i := slices.Index(sh.cols, c)
			if i < 0 {
				return nil, false, fmt.Errorf("internal error: shared subplan lacks column %s", c)
			}
			perm[j] = &expr.ColRef{Idx: i, Name: schema[j].Name, T: schema[j].Type}
		}
		out := next
		if !isIdentity(perm) {
			out = &projectOp{exprs: perm, next: next}
		}
		sh.tee.outputs = append(sh.tee.outputs, out)
		// The shared readers must decode what this occurrence reads too.
		b.orScanNeeds(n)
		return sh.tee, true, nil
	}
	sh := &sharedSubplan{tee: &teeOp{outputs: []Operator{next}}, cols: cols}
	if b.subplans == nil {
		b.subplans = map[string]*sharedSubplan{}
	}
	b.subplans[key] = sh
	op, err := b.buildOperator(n, sh.tee)
	return op, true, err
}

// orScanNeeds adds the columns the scans under n read to the readers they
// share.
func (b *builder) orScanNeeds(n plan.Node) {
	for _, s := range plan.Scans(n) {
		sh, shared := b.shared[sharedScanKey(b.dataflow, s)]
		if need, ok := b.need[s]; shared && ok {
			sh.addNeed(need)
		}
	}
}

func isIdentity(exprs []expr.Expr) bool {
	for j, e := range exprs {
		if c, ok := e.(*expr.ColRef); !ok || c.Idx != j {
			return false
		}
	}
	return true
}

// outputKeys names n's output columns by what they compute: for an
// aggregate, its grouping expressions and aggregate calls (so that two
// aggregates listing them in different orders can be matched); otherwise
// positions.
func outputKeys(n plan.Node) []string {
	if a, ok := n.(*plan.Aggregate); ok {
		keys, _ := aggregateKeys(a)
		return keys
	}
	out := make([]string, len(n.Schema()))
	for i := range out {
		out[i] = fmt.Sprint(i)
	}
	return out
}

// aggregateKeys names an aggregate's output columns; ok is false when one
// of its expressions has no key.
func aggregateKeys(a *plan.Aggregate) (keys []string, ok bool) {
	ok = true
	keys = make([]string, 0, len(a.GroupBy)+len(a.Aggs))
	for _, g := range a.GroupBy {
		k := exprKey(g)
		ok = ok && k != ""
		keys = append(keys, "g:"+k)
	}
	for _, c := range a.Aggs {
		k := aggKey(c)
		ok = ok && k != ""
		keys = append(keys, "a:"+k)
	}
	return dedupe(keys), ok
}

// dedupe numbers repeated names (GROUP BY a, a), so each column has its own.
func dedupe(names []string) []string {
	seen := map[string]int{}
	for i, s := range names {
		seen[s]++
		if seen[s] > 1 {
			names[i] = fmt.Sprintf("%s#%d", s, seen[s])
		}
	}
	return names
}

// subplanKey identifies what n computes, or is "" when n cannot be
// shared: only stream scans, windows, filters, projections and aggregates
// are, and only expressions made of column references, constants and
// functions.
func subplanKey(dataflow catalog.FormatVersion, n plan.Node) string {
	var sb strings.Builder
	if !writeSubplanKey(&sb, dataflow, n, true) {
		return ""
	}
	return sb.String()
}

// writeSubplanKey writes n's key. Only the top node's key may ignore the
// order of its output columns (an aggregate's): a node above an aggregate
// refers to its columns by position, so below the top the order counts.
func writeSubplanKey(sb *strings.Builder, dataflow catalog.FormatVersion, n plan.Node, top bool) bool {
	switch n := n.(type) {
	case *plan.Scan:
		k := sharedScanKey(dataflow, n)
		sb.WriteString("scan[" + k + "]")
		return k != ""
	case *plan.Window:
		fmt.Fprintf(sb, "window[%d,%d,%d](", n.TimeCol, n.Size, n.Slide)
	case *plan.Filter:
		k := exprKey(n.Cond)
		sb.WriteString("filter[" + k + "](")
		if k == "" {
			return false
		}
	case *plan.Project:
		sb.WriteString("project[")
		for _, e := range n.Exprs {
			k := exprKey(e)
			if k == "" {
				return false
			}
			sb.WriteString(k + ";")
		}
		sb.WriteString("](")
	case *plan.Aggregate:
		// Group keys and aggregates as sets: outputKeys maps the order.
		keys, ok := aggregateKeys(n)
		if !ok {
			return false
		}
		if top {
			slices.Sort(keys)
		}
		sb.WriteString("agg[" + strings.Join(keys, ";") + "](")
	default:
		return false
	}
	for _, c := range n.Children() {
		if !writeSubplanKey(sb, dataflow, c, false) {
			return false
		}
	}
	sb.WriteString(")")
	return true
}

// exprKey renders e exactly (column positions, types, constants), or ""
// when e holds something else (a parameter).
func exprKey(e expr.Expr) string {
	switch e := e.(type) {
	case *expr.ColRef:
		return fmt.Sprintf("$%d:%s", e.Idx, e.T)
	case *expr.Const:
		if e.D.IsNull() {
			return "null:" + e.T.String()
		}
		return fmt.Sprintf("%q:%d:%s", types.FormatText(e.D, e.T), e.D.K, e.T)
	case *expr.Func:
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			if parts[i] = exprKey(a); parts[i] == "" {
				return ""
			}
		}
		return fmt.Sprintf("%s/%s/%t/%t(%s)", e.Name, e.T, e.Infix, e.Lazy != nil, strings.Join(parts, ","))
	}
	return ""
}

func aggKey(c plan.AggCall) string {
	arg := "*"
	if c.Arg != nil {
		if arg = exprKey(c.Arg); arg == "" {
			return ""
		}
	}
	return fmt.Sprintf("%s/%t/%s(%s)", c.Func, c.Distinct, c.T, arg)
}

// sharingNotes describes, for EXPLAIN, what a new view's dataflow computes
// once for several uses (DataflowSharedSubplans): one line per stream read
// by several scans and per subplan computed once for several uses.
func sharingNotes(root plan.Node) []string {
	type use struct {
		n     plan.Node
		count int
	}
	var order []string
	uses := map[string]*use{}
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		key := subplanKey(catalog.DataflowLatest, n)
		if s, ok := n.(*plan.Scan); ok {
			key = sharedScanKey(catalog.DataflowLatest, s)
		}
		if key != "" {
			u, seen := uses[key]
			if !seen {
				u = &use{n: n}
				uses[key] = u
				order = append(order, key)
			}
			u.count++
			if seen {
				return // built once: its inside is not built again
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	var notes []string
	for _, k := range order {
		u := uses[k]
		if u.count < 2 {
			continue
		}
		if s, ok := u.n.(*plan.Scan); ok {
			notes = append(notes, fmt.Sprintf("Shared: stream %s is read once for %d scans", s.Object.Name, u.count))
			continue
		}
		notes = append(notes, fmt.Sprintf("Shared: %s is computed once for %d uses", u.n.Describe(), u.count))
	}
	return notes
}
