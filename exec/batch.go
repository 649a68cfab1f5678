package exec

import (
	"context"
	"sort"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// RunBatch evaluates a plan once over the committed state in r (a Pebble
// snapshot) and returns all result rows. Ad-hoc SELECTs use StreamBatch,
// which hands the rows over as they are made; RunBatch is for what needs
// them all (a join's inputs, a sort, a subquery's result).
func RunBatch(ctx context.Context, n plan.Node, r storage.Reader) ([]types.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	switch n := n.(type) {
	case RowSource:
		return collectBatch(ctx, n, r)
	case *plan.Values:
		out := make([]types.Row, 0, len(n.Rows))
		for _, exprs := range n.Rows {
			row, err := evalRow(exprs, nil)
			if err != nil {
				return nil, err
			}
			out = append(out, row)
		}
		return out, nil
	case *plan.Scan:
		if n.Rows != nil && n.Each == nil {
			return n.Rows(), nil
		}
		return collectBatch(ctx, n, r)
	case *plan.Filter, *plan.Project, *plan.Window, *plan.Union, *plan.Aggregate:
		return collectBatch(ctx, n, r)
	case *plan.Join:
		left, err := RunBatch(ctx, n.Left, r)
		if err != nil {
			return nil, err
		}
		right, err := RunBatch(ctx, n.Right, r)
		if err != nil {
			return nil, err
		}
		return batchJoin(ctx, n, left, right)
	case *plan.TopN:
		return batchTopN(ctx, n, r)
	case *plan.WindowFunc:
		in, err := RunBatch(ctx, n.Input, r)
		if err != nil {
			return nil, err
		}
		return runWindowFunc(n, in)
	case *plan.Sort:
		in, err := RunBatch(ctx, n.Input, r)
		if err != nil {
			return nil, err
		}
		return sortRows(n.Keys, in)
	case *plan.Limit:
		if !n.WithTies {
			return collectBatch(ctx, n, r)
		}
		if n.CountExpr != nil || n.OffsetExpr != nil {
			return nil, sqlerr.New(sqlerr.InternalError, "LIMIT or OFFSET was not evaluated before the query ran")
		}
		in, err := RunBatch(ctx, n.Input, r)
		if err != nil {
			return nil, err
		}
		if n.Offset > 0 {
			if n.Offset >= int64(len(in)) {
				return nil, nil
			}
			in = in[n.Offset:]
		}
		if n.Count >= 0 && n.Count < int64(len(in)) {
			end, err := tiesEnd(n, in)
			if err != nil {
				return nil, err
			}
			in = in[:end]
		}
		return in, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported in a query yet", n.Describe())
}

// batchAggregator folds rows into the groups of an aggregate one at a
// time, so that its input need not be held (StreamBatch).
type batchAggregator struct {
	a      *plan.Aggregate
	groups map[string]*batchGroup
	order  []*batchGroup
	kb     []byte
}

type batchGroup struct {
	key  types.Row
	accs []Accumulator
}

func newBatchAggregator(a *plan.Aggregate) *batchAggregator {
	g := &batchAggregator{a: a, groups: map[string]*batchGroup{}}
	if len(a.GroupBy) == 0 {
		g.groups[""] = g.newGroup(types.Row{})
	}
	return g
}

func (g *batchAggregator) newGroup(key types.Row) *batchGroup {
	grp := &batchGroup{key: key, accs: make([]Accumulator, len(g.a.Aggs))}
	for i, c := range g.a.Aggs {
		grp.accs[i] = NewAccumulator(c, true)
	}
	g.order = append(g.order, grp)
	return grp
}

func (g *batchAggregator) add(row types.Row) error {
	g.kb = g.kb[:0]
	key := make(types.Row, len(g.a.GroupBy))
	for i, e := range g.a.GroupBy {
		v, err := e.Eval(row)
		if err != nil {
			return err
		}
		key[i] = v
		g.kb = keyenc.AppendCmp(g.kb, v)
	}
	grp, ok := g.groups[string(g.kb)]
	if !ok {
		grp = g.newGroup(key)
		g.groups[string(g.kb)] = grp
	}
	for i, c := range g.a.Aggs {
		v := types.Null
		if c.Arg != nil {
			var err error
			if v, err = c.Arg.Eval(row); err != nil {
				return err
			}
		}
		if err := grp.accs[i].Add(v, 1); err != nil {
			return err
		}
	}
	return nil
}

func (g *batchAggregator) result() []types.Row {
	out := make([]types.Row, 0, len(g.order))
	for _, grp := range g.order {
		row := append(types.Row{}, grp.key...)
		for _, acc := range grp.accs {
			row = append(row, acc.Result())
		}
		out = append(out, row)
	}
	return out
}

func sortRows(keys []plan.SortKey, rows []types.Row) ([]types.Row, error) {
	type keyed struct {
		row  types.Row
		vals []types.Datum
		// arrays holds the elements of the non-NULL array keys, which
		// order element by element rather than by their text.
		arrays [][]types.Datum
	}
	ks := make([]keyed, len(rows))
	for i, row := range rows {
		vals := make([]types.Datum, len(keys))
		var arrays [][]types.Datum
		for j, k := range keys {
			v, err := k.Expr.Eval(row)
			if err != nil {
				return nil, err
			}
			vals[j] = v
			if t := k.Expr.Type(); t.IsArray() && !v.IsNull() {
				if arrays == nil {
					arrays = make([][]types.Datum, len(keys))
				}
				elems, err := expr.ArrayValues(v, t)
				if err != nil {
					return nil, err
				}
				arrays[j] = append([]types.Datum{}, elems...) // non-nil when empty

			}
		}
		ks[i] = keyed{row, vals, arrays}
	}
	sort.SliceStable(ks, func(a, b int) bool {
		for j, k := range keys {
			c := types.Compare(ks[a].vals[j], ks[b].vals[j])
			if ks[a].arrays != nil && ks[b].arrays != nil && ks[a].arrays[j] != nil && ks[b].arrays[j] != nil {
				c = expr.CompareArrays(ks[a].arrays[j], ks[b].arrays[j])
			}
			if c == 0 {
				continue
			}
			if k.Desc {
				return c > 0
			}
			return c < 0
		}
		return false
	})
	for i := range ks {
		rows[i] = ks[i].row
	}
	return rows, nil
}
