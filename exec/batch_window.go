package exec

import (
	"sort"

	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// runWindowFunc evaluates a window function over all of its input rows
// (ad-hoc queries): rows are sorted by partition and ORDER BY key, and
// each row gets its function's value appended. The output keeps the
// sorted order, which a query's ORDER BY may change.
//
// Frames move forward only (their start and end never go back as the
// current row advances), so an aggregate over a frame adds the rows
// entering it and retracts the rows leaving it, as views' accumulators
// do. Float and numeric aggregates whose frame start moves are
// recomputed per row instead: a fresh float summation rounds as
// PostgreSQL's does, and a numeric result takes the scale of the values
// in the frame only.
func runWindowFunc(w *plan.WindowFunc, in []types.Row) ([]types.Row, error) {
	type keyed struct {
		row  types.Row
		part string
		keys []types.Datum
	}
	ks := make([]keyed, len(in))
	for i, row := range in {
		var part []byte
		for _, e := range w.PartitionBy {
			v, err := e.Eval(row)
			if err != nil {
				return nil, err
			}
			part = keyenc.AppendCmp(part, v)
		}
		keys := make([]types.Datum, len(w.Order))
		for j, k := range w.Order {
			v, err := k.Expr.Eval(row)
			if err != nil {
				return nil, err
			}
			keys[j] = v
		}
		ks[i] = keyed{row, string(part), keys}
	}
	sort.SliceStable(ks, func(a, b int) bool {
		if ks[a].part != ks[b].part {
			return ks[a].part < ks[b].part
		}
		return compareKeys(w.Order, ks[a].keys, ks[b].keys) < 0
	})
	rows := make([]types.Row, len(ks))
	keys := make([][]types.Datum, len(ks))
	for i, k := range ks {
		rows[i], keys[i] = k.row, k.keys
	}
	out := make([]types.Row, len(rows))
	for ps := 0; ps < len(rows); {
		pe := ps + 1
		for pe < len(rows) && ks[pe].part == ks[ps].part {
			pe++
		}
		p := &partition{w: w, rows: rows[ps:pe], keys: keys[ps:pe]}
		vals, err := p.eval()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			out[ps+i] = append(append(make(types.Row, 0, len(rows[ps+i])+1), rows[ps+i]...), v)
		}
		ps = pe
	}
	return out, nil
}

// partition is one partition's rows in window order.
type partition struct {
	w         *plan.WindowFunc
	rows      []types.Row
	keys      [][]types.Datum
	peerStart []int // first row of each row's peer group
	peerEnd   []int // one past its last row
	// groupOf is each row's peer group's number and groupStart each
	// group's first row, for GROUPS frames (made on first use).
	groupOf, groupStart []int
}

// groupBound is the first row of the peer group off groups after row i's
// (before it when off < 0), or one past that group's last row (end),
// clamped to the partition.
func (p *partition) groupBound(i int, off int64, end bool) int {
	if p.groupOf == nil {
		p.groupOf = make([]int, len(p.rows))
		for j := range p.rows {
			if p.peerStart[j] == j {
				p.groupStart = append(p.groupStart, j)
			}
			p.groupOf[j] = len(p.groupStart) - 1
		}
	}
	n := int64(len(p.groupStart))
	g := int64(p.groupOf[i]) + min(max(off, -n), n) // no overflow
	if end {
		g++
	}
	switch {
	case g < 0:
		return 0
	case g >= n:
		return len(p.rows)
	}
	return p.groupStart[g]
}

func (p *partition) peers() {
	n := len(p.rows)
	p.peerStart, p.peerEnd = make([]int, n), make([]int, n)
	for s := 0; s < n; {
		e := s + 1
		for e < n && compareKeys(p.w.Order, p.keys[s], p.keys[e]) == 0 {
			e++
		}
		for i := s; i < e; i++ {
			p.peerStart[i], p.peerEnd[i] = s, e
		}
		s = e
	}
}

func (p *partition) arg(k, i int) (types.Datum, error) {
	return p.w.Args[k].Eval(p.rows[i])
}

func (p *partition) eval() ([]types.Datum, error) {
	p.peers()
	n := len(p.rows)
	out := make([]types.Datum, n)
	switch p.w.Func {
	case plan.RowNumber:
		for i := range out {
			out[i] = types.NewInt(int64(i + 1))
		}
	case plan.Rank:
		for i := range out {
			out[i] = types.NewInt(int64(p.peerStart[i] + 1))
		}
	case plan.DenseRank:
		r := int64(0)
		for i := range out {
			if p.peerStart[i] == i {
				r++
			}
			out[i] = types.NewInt(r)
		}
	case "percent_rank":
		for i := range out {
			if n == 1 {
				out[i] = types.NewFloat(0)
			} else {
				out[i] = types.NewFloat(float64(p.peerStart[i]) / float64(n-1))
			}
		}
	case "cume_dist":
		for i := range out {
			out[i] = types.NewFloat(float64(p.peerEnd[i]) / float64(n))
		}
	case "ntile":
		return p.ntile()
	case "lag", "lead":
		return p.lagLead()
	case "first_value", "last_value", "nth_value":
		return p.valueAt()
	default:
		return p.aggregate()
	}
	return out, nil
}

// ntile splits the partition into k buckets as PostgreSQL does: sizes
// differ by at most one, the larger ones first. k is read on the first
// row.
func (p *partition) ntile() ([]types.Datum, error) {
	out := make([]types.Datum, len(p.rows))
	kv, err := p.arg(0, 0)
	if err != nil {
		return nil, err
	}
	if kv.IsNull() {
		return out, nil
	}
	k := kv.I
	if k <= 0 {
		return nil, sqlerr.New(sqlerr.InvalidArgumentForNtile, "argument of ntile must be greater than zero")
	}
	n := int64(len(p.rows))
	size, rem := n/k, n%k
	bucket, left := int64(1), size
	if rem > 0 {
		left++
	}
	for i := range out {
		if left == 0 {
			bucket++
			left = size
			if bucket <= rem {
				left++
			}
		}
		out[i] = types.NewInt(bucket)
		left--
	}
	return out, nil
}

// lagLead is lag/lead(value [, offset [, default]]): the value offset
// rows before (lag) or after (lead) in the partition, else the default
// evaluated on the current row.
func (p *partition) lagLead() ([]types.Datum, error) {
	out := make([]types.Datum, len(p.rows))
	for i := range out {
		off := int64(1)
		if len(p.w.Args) > 1 {
			o, err := p.arg(1, i)
			if err != nil {
				return nil, err
			}
			if o.IsNull() {
				continue
			}
			off = o.I
		}
		if p.w.Func == "lag" {
			off = -off
		}
		if j := int64(i) + off; j >= 0 && j < int64(len(p.rows)) {
			v, err := p.arg(0, int(j))
			if err != nil {
				return nil, err
			}
			out[i] = v
			continue
		}
		if len(p.w.Args) > 2 {
			v, err := p.arg(2, i)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
	}
	return out, nil
}

// frame is row i's frame, [start, end) (empty when end <= start).
func (p *partition) frame(i int) (int, int, error) {
	f := p.w.Frame
	n := len(p.rows)
	bound := func(b plan.FrameBound, rangeExpr func() (types.Datum, error), end bool) (int, error) {
		switch b.Kind {
		case plan.UnboundedPreceding:
			return 0, nil
		case plan.UnboundedFollowing:
			return n, nil
		case plan.CurrentRow:
			if f.Rows {
				if end {
					return i + 1, nil
				}
				return i, nil
			}
			if end {
				return p.peerEnd[i], nil
			}
			return p.peerStart[i], nil
		}
		if f.Groups {
			off := b.Offset.I
			if b.Kind == plan.OffsetPreceding {
				off = -off
			}
			return p.groupBound(i, off, end), nil
		}
		if f.Rows {
			off := b.Offset.I
			if b.Kind == plan.OffsetPreceding {
				off = -off
			}
			j := int64(i) + off
			if end {
				j++
			}
			return int(min(max(j, 0), int64(n))), nil
		}
		// RANGE with an offset: the first row whose key is not before the
		// bound value (start), or the first row after it (end). A NULL
		// key's frame is its peers.
		if p.keys[i][0].IsNull() {
			if end {
				return p.peerEnd[i], nil
			}
			return p.peerStart[i], nil
		}
		v, err := rangeExpr()
		if err != nil {
			return 0, err
		}
		desc := p.w.Order[0].Desc
		return sort.Search(n, func(j int) bool {
			c := types.Compare(p.keys[j][0], v)
			if desc {
				c = -c
			}
			if end {
				return c > 0
			}
			return c >= 0
		}), nil
	}
	s, err := bound(f.Start, func() (types.Datum, error) { return f.RangeStart.Eval(p.rows[i]) }, false)
	if err != nil {
		return 0, 0, err
	}
	e, err := bound(f.End, func() (types.Datum, error) { return f.RangeEnd.Eval(p.rows[i]) }, true)
	return s, e, err
}

// valueAt is first_value, last_value and nth_value over each row's frame.
func (p *partition) valueAt() ([]types.Datum, error) {
	out := make([]types.Datum, len(p.rows))
	for i := range out {
		s, e, err := p.frame(i)
		if err != nil {
			return nil, err
		}
		j := -1
		switch p.w.Func {
		case "first_value":
			j = s
		case "last_value":
			j = e - 1
		case "nth_value":
			nv, err := p.arg(1, i)
			if err != nil {
				return nil, err
			}
			if nv.IsNull() {
				continue
			}
			if nv.I <= 0 {
				return nil, sqlerr.New(sqlerr.InvalidArgumentForNthValue, "argument of nth_value must be greater than zero")
			}
			if nv.I <= int64(e-s) {
				j = s + int(nv.I) - 1
			}
		}
		if j >= s && j < e {
			if out[i], err = p.arg(0, j); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// aggregate evaluates an aggregate over each row's frame.
func (p *partition) aggregate() ([]types.Datum, error) {
	call := *p.w.Agg
	out := make([]types.Datum, len(p.rows))
	argAt := func(j int) (types.Datum, error) {
		if call.Arg == nil {
			return types.Null, nil
		}
		return call.Arg.Eval(p.rows[j])
	}
	argType := types.Unknown
	if call.Arg != nil {
		argType = call.Arg.Type()
	}
	fresh := argType == types.Float4 || argType == types.Float8 || (argType == types.Numeric && call.Func != "min" && call.Func != "max")
	acc := NewAccumulator(call, false)
	lo, hi := 0, 0 // rows in acc
	for i := range out {
		s, e, err := p.frame(i)
		if err != nil {
			return nil, err
		}
		e = max(e, s)
		if fresh && s > lo {
			acc, lo, hi = NewAccumulator(call, false), s, s
		}
		for ; hi < e; hi++ {
			v, err := argAt(hi)
			if err != nil {
				return nil, err
			}
			if err := acc.Add(v, 1); err != nil {
				return nil, err
			}
		}
		for ; lo < s; lo++ {
			v, err := argAt(lo)
			if err != nil {
				return nil, err
			}
			if err := acc.Add(v, -1); err != nil {
				return nil, err
			}
		}
		out[i] = acc.Result()
	}
	return out, nil
}
