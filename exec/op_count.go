package exec

import (
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"streamdb/metrics"
	"streamdb/plan"
)

// rateWindow is the shortest interval a rows/s figure is measured over.
const rateWindow = time.Second

// opStats are the figures of one operator of a view's dataflow: the rows
// (changes) it sent downstream, and their rate over the last rateWindow
// or more. The pipeline's goroutine writes them; readers load them.
type opStats struct {
	id   string // the node's operator id (plan.NodeIDs)
	node plan.Node
	rows atomic.Int64
	rate atomic.Uint64 // float64 bits: rows/s

	// sampled and sampledRows are the start of the current rate window
	// (pipeline goroutine only).
	sampled     time.Time
	sampledRows int64
	counter     prometheus.Counter
}

// countingOp counts the rows its operator sends to next, which is what the
// builder puts in front of every operator's downstream (builder.build). It
// samples the rate at barriers: epochs keep coming while no rows do, so
// the rate falls to 0 on an idle view.
type countingOp struct {
	st   *opStats
	next Operator
}

func (c *countingOp) Push(ch *Chunk) error {
	n := int64(ch.Len())
	c.st.rows.Add(n)
	c.st.counter.Add(float64(n))
	return c.next.Push(ch)
}

func (c *countingOp) Barrier(e Epoch) error {
	st := c.st
	now := time.Now()
	if st.sampled.IsZero() {
		st.sampled = now
	} else if d := now.Sub(st.sampled); d >= rateWindow {
		rows := st.rows.Load()
		st.rate.Store(math.Float64bits(float64(rows-st.sampledRows) / d.Seconds()))
		st.sampled, st.sampledRows = now, rows
	}
	return c.next.Barrier(e)
}

// counted puts a countingOp for n's output in front of next. The operator
// is named by n's operator id, or by its kind and place in the build when
// the plan has no ids.
func (b *builder) counted(n plan.Node, next Operator) Operator {
	id, ok := b.opIDs[n]
	if !ok {
		id = nodeKind(n) + "-" + strconv.Itoa(len(b.p.ops))
	}
	st := &opStats{id: id, node: n, counter: metrics.OperatorRowsOut.WithLabelValues(b.p.name, id)}
	b.p.ops = append(b.p.ops, st)
	return &countingOp{st: st, next: next}
}

// OperatorStat is one operator's figures, for streamdb_operators.
type OperatorStat struct {
	ViewID     uint32
	View       string
	Operator   string // operator id
	Kind       string // scan, filter, aggregate, ...
	RowsOut    int64
	RowsPerSec float64
	// StateTables are the state table indexes the operator keeps (see
	// streamdb_state), none for a stateless one.
	StateTables []uint16
	// CacheHits and CacheReads count the lookups its caches over Pebble
	// answered from memory and those that read Pebble (cacheStats);
	// Cached says it keeps such a cache.
	CacheHits, CacheReads int64
	Cached                bool
}

// OperatorStats lists the operators of every running view, in the order
// each dataflow was built (from the output towards the sources).
func (rt *Runtime) OperatorStats() []OperatorStat {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var out []OperatorStat
	for _, p := range rt.pipelines {
		tables := map[plan.Node][]uint16{}
		if p.layout != nil {
			for _, s := range p.layout.Slots {
				tables[s.Node] = s.Indexes
			}
		}
		for _, st := range p.ops {
			o := OperatorStat{ViewID: p.id, View: p.name, Operator: st.id, Kind: nodeKind(st.node),
				RowsOut: st.rows.Load(), RowsPerSec: math.Float64frombits(st.rate.Load()), StateTables: tables[st.node]}
			o.CacheHits, o.CacheReads, o.Cached = cacheFigures(p.id, o.StateTables)
			out = append(out, o)
		}
	}
	return out
}

// nodeKind names a plan node's operator kind for users.
func nodeKind(n plan.Node) string {
	switch n.(type) {
	case *plan.Scan:
		return "scan"
	case *plan.Filter:
		return "filter"
	case *plan.Project:
		return "project"
	case *plan.Window:
		return "window"
	case *plan.Union:
		return "union"
	case *plan.Join:
		return "join"
	case *plan.Sort, *plan.Limit, *plan.TopN:
		return "topn"
	case *plan.Aggregate:
		return "aggregate"
	default:
		return "operator"
	}
}
