package exec

import (
	"fmt"
	"testing"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// A recycled chunk hands out its first slab again, row by row, cleared.
func TestChunkRecycle(t *testing.T) {
	c := &Chunk{slabRows: 4}
	for i := range 4 {
		r := c.newRow(2)
		r[0], r[1] = types.NewInt(int64(i)), types.NewString("x")
		c.keepRow(r, Insert)
	}
	first := &c.Rows[0][0]
	c.recycle()
	if c.Len() != 0 {
		t.Fatalf("recycled chunk has %d rows", c.Len())
	}
	r := c.newRow(2)
	if &r[0] != first {
		t.Error("recycled chunk did not carve its first slab again")
	}
	if !r[0].IsNull() || !r[1].IsNull() {
		t.Errorf("recycled row not cleared: %v", r)
	}
	// Rows past the first slab: the next recycle makes it hold them all.
	for range 10 {
		c.keepRow(c.newRow(2), Insert)
	}
	c.recycle()
	if len(c.base) < 20 || len(c.slab) != len(c.base) {
		t.Errorf("after 10 rows of 2 the first slab holds %d datums, hands out %d", len(c.base), len(c.slab))
	}
}

// Only operators that read rows during Push and keep none of them let
// a source recycle its chunks.
func TestBorrowsRows(t *testing.T) {
	agg := &aggOp{}
	mat := &materializeOp{}
	cond := &expr.Const{D: types.NewBool(true), T: types.Bool}
	copying := &projectOp{exprs: []expr.Expr{&expr.ColRef{Idx: 1}}, next: mat}
	prefix := &projectOp{exprs: []expr.Expr{&expr.ColRef{Idx: 0}}, next: mat}
	for _, tc := range []struct {
		name string
		op   Operator
		want bool
	}{
		{"aggregate", agg, true},
		{"materialize", mat, false},
		{"filter into aggregate", &filterOp{cond: cond, next: agg}, true},
		{"filter into materialize", &filterOp{cond: cond, next: mat}, false},
		{"copying projection", copying, true},
		{"prefix projection into materialize", prefix, false},
		{"tee of aggregate and materialize", &teeOp{outputs: []Operator{agg, mat}}, false},
		{"tee of aggregate and copying projection", &teeOp{outputs: []Operator{agg, copying}}, true},
		{"window into materialize", &windowOp{next: mat}, true},
	} {
		if got := borrowsRows(tc.op); got != tc.want {
			t.Errorf("%s: borrowsRows = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A projection whose next operator only borrows rows builds every chunk
// in the same storage; one feeding an operator that keeps rows makes new
// rows each time, and the rows it kept stay intact.
func TestProjectionReusesRowsOnlyForBorrowers(t *testing.T) {
	swap := []expr.Expr{&expr.ColRef{Idx: 1}, &expr.ColRef{Idx: 0}}
	push := func(p *projectOp, a, b int64) {
		c := &Chunk{}
		c.Append(types.Row{types.NewInt(a), types.NewInt(b)}, Insert)
		if err := p.Push(c); err != nil {
			t.Fatal(err)
		}
	}
	keep := &keeper{}
	p := &projectOp{exprs: swap, next: keep}
	push(p, 1, 2)
	push(p, 3, 4)
	if p.reuse {
		t.Error("a projection into an operator that keeps rows reuses its storage")
	}
	var got []int64
	for _, r := range keep.rows {
		got = append(got, r[0].I, r[1].I)
	}
	if fmt.Sprint(got) != "[2 1 4 3]" {
		t.Errorf("kept rows %v, want [2 1 4 3]", got)
	}
	borrow := &projectOp{exprs: swap, next: &aggOp{}}
	borrow.init()
	_, first := borrow.output(1, 2)
	_, second := borrow.output(1, 2)
	if !borrow.reuse || &first[0] != &second[0] {
		t.Error("a projection into an aggregate does not reuse its storage")
	}
}

// keeper is an Operator that keeps every row pushed to it.
type keeper struct{ rows []types.Row }

func (k *keeper) Push(c *Chunk) error {
	k.rows = append(k.rows, c.Rows...)
	return nil
}
func (k *keeper) Barrier(Epoch) error { return nil }

// pushSizes is an Operator that records how many rows each Push brings,
// and borrows them (as aggregates do).
type pushSizes struct{ sizes []int }

func (p *pushSizes) Push(c *Chunk) error   { p.sizes = append(p.sizes, c.Len()); return nil }
func (p *pushSizes) Barrier(e Epoch) error { return nil }

// TestHopWindowPushesInPieces: a hopping window makes 5 rows of each input
// row and passes them on in pieces of about an input chunk, not as one.
func TestHopWindowPushesInPieces(t *testing.T) {
	next := &pushSizes{}
	w := newWindowOp(&plan.Window{TimeCol: 0, Size: 10_000_000, Slide: 2_000_000}, next)
	c := &Chunk{}
	for i := range chunkRows {
		c.Append(types.Row{types.NewTimestamp2000(int64(i) * 1000)}, Insert)
	}
	if err := w.Push(c); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range next.sizes {
		if n > chunkRows+5 {
			t.Fatalf("a push of %d rows (pushes %v)", n, next.sizes)
		}
		total += n
	}
	if total != 5*chunkRows {
		t.Fatalf("%d rows out of %d input rows, want 5 each", total, chunkRows)
	}
}

// An outputChunk hands operators before a borrowing one the same storage
// again, and others a new chunk each time, so the rows they kept stay
// intact.
func TestOutputChunkReusesOnlyForBorrowers(t *testing.T) {
	fill := func(o *outputChunk, next Operator, v int64) types.Row {
		c := o.get(next)
		r := c.newRow(1)
		r[0] = types.NewInt(v)
		c.keepRow(r, Insert)
		return r
	}
	var borrowing outputChunk
	first := fill(&borrowing, &aggOp{}, 1)
	second := fill(&borrowing, &aggOp{}, 2)
	if &first[0] != &second[0] {
		t.Error("an output chunk for an aggregate does not reuse its storage")
	}
	var keeping outputChunk
	first = fill(&keeping, &materializeOp{}, 1)
	second = fill(&keeping, &materializeOp{}, 2)
	if &first[0] == &second[0] || first[0].I != 1 {
		t.Error("an output chunk for an operator that keeps rows reuses its storage")
	}
}
