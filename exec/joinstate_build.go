package exec

import (
	"strconv"

	"streamdb/catalog"
	"streamdb/metrics"
	"streamdb/plan"
)

// newJoin builds the join of n in front of next, its state keyed by side
// and join key (the formats before DataflowJoinStateByKey are moved
// forward at start, or refused), with its keys cached up to
// state.cache.join-keys-per-side, or, when the join's condition bounds
// time on both sides over watermarked streams, all in memory with rows
// freed as the watermarks pass them (joinExpiry).
func (b *builder) newJoin(n *plan.Join, next Operator) (*joinOp, error) {
	packed := [2]bool{appendOnly(n.Left), appendOnly(n.Right)}
	prefix, err := b.opPrefix()
	if err != nil {
		return nil, err
	}
	limit := b.cacheLimit(joinCacheKind, &b.rt.joinCache)
	op, err := newCachedJoinOp(n, prefix, b.rt.store.DB(), joinStateByKey, joinVNodes(b.dataflow, b.vnodes), packed, limit, findJoinExpiry(n, b.watermarkFor), next)
	if err != nil {
		return nil, err
	}
	op.cache.gauge = metrics.JoinStateRows.WithLabelValues(b.p.name, strconv.Itoa(int(b.lastOp)))
	op.appendKey = keyAppender(b.dataflow)
	return op, nil
}

// SetJoinCache sets state.cache.join-keys-per-side: the join keys each
// side of a join keeps in memory (0: all). A join started with 0 keeps
// everything until the view restarts.
func (rt *Runtime) SetJoinCache(n int64) { rt.joinCache.Store(n) }

// joinVNodes is the vnode count a join's page keys carry in a view of
// format dataflow with vnodes (catalog.StateVNodes): none before
// catalog.DataflowJoinVNodes.
func joinVNodes(dataflow catalog.FormatVersion, vnodes int) int {
	if dataflow < catalog.DataflowJoinVNodes {
		return 0
	}
	return vnodes
}
