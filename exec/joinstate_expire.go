package exec

import (
	"container/heap"
	"fmt"
	"strings"
	"time"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// Join state freed by watermark. A join of two append-only inputs whose
// condition bounds the time of one side by a column of the other frees a
// row once the watermark of the other side shows that no row still to
// come can match it. Rows below a stream's watermark are dropped when read
// (watermark.go), so every row still to come on that side has its
// watermarked time at or past the watermark. Two conditions give a bound:
//
//   - an equi-key on window bounds: a.window_start = b.window_start over
//     TUMBLE or HOP of watermarked streams. A row of a with window start v
//     matches only rows of b in windows starting at v, whose times are
//     below v + b's window size: it is freed once b's watermark reaches
//     v + size (window_end: v).
//   - an interval: a.ts BETWEEN b.ts - INTERVAL '10' SECOND AND b.ts, or
//     any conjunct A <= B + c (or <, >=, >) where A is a side's
//     watermarked column (see watermarkedColumn) and B a column of the
//     other side. A row of B's side can match rows of A's side only with
//     A <= B + c: it is freed once A's watermark passes B + c.
//
// A side that retracts never has its rows freed: the retraction of a
// freed row would find nothing to retract its joined rows with. The side
// whose watermark frees the other's rows may retract only as an
// aggregate grouping by a window bound does: each of its changes, a
// retraction too, is of an open window, whose bound the watermark has not
// passed, so none of them can match a freed row either.

// joinExpiry says, per side, when a row can match no more.
type joinExpiry struct {
	sides [2]*sideExpiry // nil: that side's rows are kept
}

// sideExpiry frees one side's rows: a row whose deadline (its column col
// plus offset, in microseconds) is at or below the other side's watermark
// wm can match no row to come.
type sideExpiry struct {
	col    int
	offset int64
	wm     *watermarkState
	// what describes the rule for EXPLAIN.
	what string
	open expiryHeap
}

type expiring struct {
	deadline int64
	e        *joinEntry
}

// expiryHeap orders a side's rows by deadline, soonest first.
type expiryHeap []expiring

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].deadline < h[j].deadline }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiring)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = expiring{}
	*h = old[:len(old)-1]
	return x
}

// track indexes e, new on its side with the decoded row, by deadline. A
// row whose time column is NULL matches nothing by time and is kept.
func (x *joinExpiry) track(op *joinOp, e *joinEntry, row types.Row) {
	s := x.sides[e.side]
	if s == nil || row[s.col].IsNull() {
		return
	}
	heap.Push(&s.open, expiring{deadline: row[s.col].I + s.offset, e: e})
}

// freeClosed frees, at a barrier before the epoch's writes, the rows whose
// deadline the other side's watermark has reached: they leave memory and,
// by the barrier's write, Pebble. Nothing is emitted: the rows they joined
// stay, and an outer row's NULL-padded row is final.
func (c *joinCache) freeClosed(op *joinOp) {
	if c.expire == nil {
		return
	}
	for side, s := range c.expire.sides {
		if s == nil || !s.wm.valid.Load() {
			continue
		}
		wm := s.wm.value.Load()
		for s.open.Len() > 0 && s.open[0].deadline <= wm {
			e := heap.Pop(&s.open).(expiring).e
			if e.count <= 0 {
				continue // retracted already
			}
			b := op.state[side][e.key]
			e.count = 0
			op.markDirty(e)
			op.dropEntry(b, e)
		}
	}
}

// findJoinExpiry returns how n's rows are freed by watermark, or nil when
// its condition bounds no side's time or an input retracts; state gives
// the watermark each stream scan keeps.
func findJoinExpiry(n *plan.Join, state func(*plan.Scan) *watermarkState) *joinExpiry {
	inputs := [2]plan.Node{n.Left, n.Right}
	appendOnly := [2]bool{plan.AppendOnly(n.Left), plan.AppendOnly(n.Right)}
	var x joinExpiry
	for i := range n.LeftKeys {
		if !appendOnly[0] || !appendOnly[1] {
			break
		}
		lc, lok := colRefIndex(n.LeftKeys[i])
		rc, rok := colRefIndex(n.RightKeys[i])
		if !lok || !rok {
			continue
		}
		ls, loff, lok := traceWindowEnd(n.Left, lc)
		rs, roff, rok := traceWindowEnd(n.Right, rc)
		if !lok || !rok {
			continue
		}
		cols := [2]int{lc, rc}
		scans := [2]*plan.Scan{ls, rs}
		offs := [2]int64{loff, roff}
		for side := range 2 {
			if x.sides[side] == nil {
				o := 1 - side
				x.sides[side] = &sideExpiry{col: cols[side], offset: offs[o], wm: state(scans[o]),
					what: fmt.Sprintf("%s rows when watermark(%s) >= %s", sideName(side), scans[o].Object.Name,
						plusOffset(inputs[side].Schema()[cols[side]].Name, offs[o]))}
			}
		}
	}
	nl := len(n.Left.Schema())
	for _, b := range timeBounds(n.Cond) {
		// b: joined column hi bounds joined column lo: lo <= hi + c.
		sideLo, sideHi := b.lo/nl, b.hi/nl
		if sideLo > 1 || sideHi > 1 || sideLo == sideHi || x.sides[sideHi] != nil || !appendOnly[sideHi] {
			continue
		}
		loCol, hiCol := b.lo-sideLo*nl, b.hi-sideHi*nl
		scan, lag, ok := watermarkedColumn(inputs[sideLo], loCol)
		if !ok {
			continue
		}
		// Rows to come have lo >= watermark - lag; a row with
		// hi + c + lag < watermark matches none of them.
		x.sides[sideHi] = &sideExpiry{col: hiCol, offset: b.c + lag + 1, wm: state(scan),
			what: fmt.Sprintf("%s rows when watermark(%s) > %s", sideName(sideHi), scan.Object.Name,
				plusOffset(inputs[sideHi].Schema()[hiCol].Name, b.c+lag))}
	}
	if x.sides[0] == nil && x.sides[1] == nil {
		return nil
	}
	return &x
}

// watermarkedColumn reports whether column col of every change still to
// come from n is at or above the watermark of a stream scan less lag
// (microseconds): col is the scan's watermarked time column, through
// filters and projections, or a window bound of a TUMBLE/HOP over it,
// also through an aggregate grouping by that bound (which renames it, as
// q7's window_end AS date_time). A window's bounds are below its end,
// which is past the time of each of its rows, and rows below the
// watermark are dropped at the reader, so a window still to change ends
// past the watermark: window_end has lag 0, window_start the window's
// size. An aggregate changes only windows still open, retractions
// included.
func watermarkedColumn(n plan.Node, col int) (scan *plan.Scan, lag int64, ok bool) {
	if scan, scanCol, ok := traceToScan(n, col); ok {
		return scan, 0, scan.Watermark != nil && scan.Watermark.Col == scanCol
	}
	return traceWindowBound(n, col)
}

func sideName(side int) string { return [2]string{"left", "right"}[side] }

// describe is the EXPLAIN text of the rules, e.g. "left rows when
// watermark(bids) >= window_start + 10s".
func (x *joinExpiry) describe() string {
	var parts []string
	for _, s := range x.sides {
		if s != nil {
			parts = append(parts, s.what)
		}
	}
	return strings.Join(parts, "; ")
}

// timeBound is lo <= hi + c between two timestamp columns of a join's
// output (c in microseconds).
type timeBound struct {
	lo, hi int
	c      int64
}

// timeBounds finds the bounds the conjuncts of cond state between
// timestamp columns: A <= B + c, A < B + c, and the same with >= and >
// (so BETWEEN's two halves), where each side is a column, or a column
// plus or minus a constant interval of no months.
func timeBounds(cond expr.Expr) []timeBound {
	f, ok := cond.(*expr.Func)
	if !ok || len(f.Args) != 2 {
		return nil
	}
	switch f.Name {
	case "AND":
		return append(timeBounds(f.Args[0]), timeBounds(f.Args[1])...)
	case "<=", "<", ">=", ">":
	default:
		return nil
	}
	a, ac, aok := timeTerm(f.Args[0])
	b, bc, bok := timeTerm(f.Args[1])
	if !aok || !bok {
		return nil
	}
	// a + ac <= b + bc: a <= b + (bc - ac); for >=, b <= a + (ac - bc).
	if f.Name == "<=" || f.Name == "<" {
		return []timeBound{{lo: a, hi: b, c: bc - ac}}
	}
	return []timeBound{{lo: b, hi: a, c: ac - bc}}
}

// timeTerm reads e as a timestamp column plus a constant offset.
func timeTerm(e expr.Expr) (col int, c int64, ok bool) {
	if r, isRef := e.(*expr.ColRef); isRef {
		return r.Idx, 0, r.T == types.Timestamp
	}
	f, isFunc := e.(*expr.Func)
	if !isFunc || len(f.Args) != 2 || (f.Name != "+" && f.Name != "-") {
		return 0, 0, false
	}
	r, isRef := f.Args[0].(*expr.ColRef)
	k, isConst := f.Args[1].(*expr.Const)
	if !isRef || !isConst || r.T != types.Timestamp || k.D.IsNull() || k.D.K != types.KindInterval || k.D.Months != 0 {
		return 0, 0, false
	}
	c = k.D.I + int64(k.D.Days)*24*int64(time.Hour/time.Microsecond)
	if f.Name == "-" {
		c = -c
	}
	return r.Idx, c, true
}

// explainedJoin is a join shown by EXPLAIN with the state its watermarks
// free.
type explainedJoin struct {
	*plan.Join
	cleaning string
}

func (j explainedJoin) Describe() string {
	return j.Join.Describe() + " state cleaning: " + j.cleaning
}

// explainJoin is how EXPLAIN shows n: with its state cleaning, if any.
func explainJoin(n *plan.Join) plan.Node {
	x := findJoinExpiry(n, func(s *plan.Scan) *watermarkState { return &watermarkState{stream: s.Object.Name} })
	if x == nil {
		return n
	}
	return explainedJoin{Join: n, cleaning: x.describe()}
}
