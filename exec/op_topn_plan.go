package exec

import (
	"context"
	"sort"
	"strconv"

	"streamdb/metrics"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// buildTopN chains the streaming operator of a Sort, Limit or TopN in
// front of next.
func (b *builder) buildTopN(n plan.Node, next Operator) (Operator, error) {
	t := plan.StreamingTopN(n)
	if t == nil {
		return b.build(n.Children()[0], next)
	}
	if err := plan.CheckStreamableTopN(t); err != nil {
		return nil, err
	}
	c := findTopNCloser(t, b.watermarkFor)
	cfg := topNConfig{dataflow: b.dataflow, vnodes: b.vnodes, setInput: b.inputKey(t.Input) != nil}
	if c == nil {
		// Partitions of windows are freed by the watermark instead.
		cfg.limit = b.cacheLimit(topNCacheKind, &b.rt.topNCache)
	}
	prefix, err := b.opPrefix()
	if err != nil {
		return nil, err
	}
	op, err := newTopNOp(t, appendOnly(t.Input), prefix, b.rt.store, cfg, next)
	if err != nil {
		return nil, err
	}
	if op.cache != nil {
		op.cache.gauge = metrics.TopNStateRows.WithLabelValues(b.p.name, strconv.Itoa(int(b.lastOp)))
	}
	if c != nil {
		op.closeWindowsBy(c)
	}
	return b.build(t.Input, op)
}

// topNUniqueKey is UniqueKey of a Sort, Limit or TopN: a row_number()
// result is keyed by its partition columns and the row number; otherwise
// the rows kept are a subset of the input's, keyed as the input is.
func topNUniqueKey(n plan.Node, scanKey func(*plan.Scan) []int) []int {
	t := plan.StreamingTopN(n)
	if t == nil {
		return uniqueKey(n.Children()[0], scanKey)
	}
	if t.Func == plan.RowNumber {
		key := make([]int, 0, len(t.PartitionBy)+1)
		for _, p := range t.PartitionBy {
			i, ok := colRefIndex(p)
			if !ok {
				key = nil
				break
			}
			key = append(key, i)
		}
		if key != nil || len(t.PartitionBy) == 0 {
			return append(key, t.RankCol())
		}
	}
	return uniqueKey(t.Input, scanKey)
}

// batchTopN evaluates a TopN over all its input: partitions in the order
// of their keys, rows in rank order.
func batchTopN(ctx context.Context, t *plan.TopN, r storage.Reader) ([]types.Row, error) {
	in, err := RunBatch(ctx, t.Input, r)
	if err != nil {
		return nil, err
	}
	parts := map[string][]*rankEntry{}
	for _, row := range in {
		pk, err := partitionKey(t, row, keyenc.AppendCmp)
		if err != nil {
			return nil, err
		}
		e, err := newRankEntry(t.Order, row)
		if err != nil {
			return nil, err
		}
		e.count = 1
		parts[pk] = append(parts[pk], e)
	}
	keys := make([]string, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []types.Row
	for _, k := range keys {
		s := parts[k]
		sort.SliceStable(s, func(i, j int) bool { return compareEntries(t.Order, s[i], s[j]) < 0 })
		out = append(out, rankedRows(t, rankListOf(s))...)
	}
	return out, nil
}

// explainStreamingTree is plan.Explain of the dataflow StartView builds:
// ORDER BY ... LIMIT shows as the TopN that runs it, a Sort without
// LIMIT is left out, and aggregates, joins and top-Ns show the state
// their watermarks free.
func explainStreamingTree(root plan.Node) string {
	return plan.ExplainAs(root, func(n plan.Node) plan.Node {
		switch n := n.(type) {
		case *plan.Sort:
			return n.Input
		case *plan.Limit:
			return plan.LimitAsTopN(n)
		case *plan.TopN:
			return explainTopN(n)
		case *plan.Join:
			return explainJoin(n)
		case *plan.Aggregate:
			return explainAggregate(n)
		}
		return n
	})
}
