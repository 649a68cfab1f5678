package exec

import (
	"strconv"

	"streamdb/catalog"
	"streamdb/metrics"
	"streamdb/plan"
)

// newJoin builds the join of n in front of next, in the state format of
// the view's layout: paged before DataflowJoinStateByKey (the formats
// before DataflowJoinStatePaged are moved forward at start, or refused);
// from it on, with its keys cached up to state.cache.join-keys-per-side,
// or, when the join's condition bounds time on both sides over
// watermarked streams, all in memory with rows freed as the watermarks
// pass them (joinExpiry).
func (b *builder) newJoin(n *plan.Join, next Operator) (*joinOp, error) {
	packed := [2]bool{appendOnly(n.Left), appendOnly(n.Right)}
	prefix, err := b.opPrefix()
	if err != nil {
		return nil, err
	}
	if b.dataflow < catalog.DataflowJoinStateByKey {
		return newJoinOp(n, prefix, b.rt.store.DB(), joinStateByPage, packed, next)
	}
	// Formats before DataflowJoinStateByKey are older than interval spans.
	limit := b.cacheLimit(joinCacheKind, &b.rt.joinCache)
	op, err := newCachedJoinOp(n, prefix, b.rt.store.DB(), joinStateByKey, packed, limit, findJoinExpiry(n, b.watermarkFor), next)
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
