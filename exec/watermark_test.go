package exec

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestWatermarkClosesWindows feeds a stream of (k, ts) rows with random
// disorder through watermark filter -> TUMBLE -> count per (k, window_end)
// and checks, epoch by epoch, that: late rows (ts below the watermark when
// they arrive) are dropped and counted; the output equals a batch count
// over the rows that were not late; and the aggregate holds no group whose
// window ended at or before the watermark.
func TestWatermarkClosesWindows(t *testing.T) {
	seed := int64(7)
	rng := rand.New(rand.NewSource(seed))
	store := memoryStore(t)

	const sec = int64(1_000_000)
	const size, delay = 10 * sec, 3 * sec
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "ts", Type: types.Timestamp}}
	ts := &expr.ColRef{Idx: 1, Name: "ts", T: types.Timestamp}
	// The watermark expression ts - 3s, written as a function of the row.
	wmExpr := &expr.Func{Name: "wm", T: types.Timestamp, Args: []expr.Expr{ts}, Fn: func(args []types.Datum) (types.Datum, error) {
		if args[0].IsNull() {
			return types.Null, nil
		}
		return types.NewTimestamp2000(args[0].I - delay), nil
	}}
	scan := &plan.Scan{Object: &catalog.Descriptor{Name: "s", Kind: catalog.KindStream}, Cols: cols,
		Watermark: &plan.Watermark{Col: 1, Expr: wmExpr, Text: "ts AS ts - 3s"}}
	win := &plan.Window{Input: scan, TimeCol: 1, Size: size, Slide: size, Cols: append(append([]types.Column(nil), cols...),
		types.Column{Name: "window_start", Type: types.Timestamp}, types.Column{Name: "window_end", Type: types.Timestamp})}
	agg := &plan.Aggregate{Input: win,
		GroupBy: []expr.Expr{&expr.ColRef{Idx: 0, Name: "k", T: types.Int8}, &expr.ColRef{Idx: 3, Name: "window_end", T: types.Timestamp}},
		Aggs:    []plan.AggCall{{Func: "count", T: types.Int8}},
		Cols:    []types.Column{{Name: "k", Type: types.Int8}, {Name: "window_end", Type: types.Timestamp}, {Name: "count", Type: types.Int8}}}

	out := &multiset{rows: map[string]int{}}
	st := &watermarkState{stream: "s"}
	aggOp, err := newAggOp(agg, true, catalog.DataflowLatest, storage.StatePrefix(1, 3), store, groupLimit{}, out)
	if err != nil {
		t.Fatal(err)
	}
	closer := findWindowCloser(agg, func(*plan.Scan) *watermarkState { return st })
	if closer == nil || closer.keyCol != 1 || closer.offset != 0 {
		t.Fatalf("window closer not found through the plan: %+v", closer)
	}
	if err := aggOp.closeWindowsBy(closer); err != nil {
		t.Fatal(err)
	}
	head, err := newWatermarkOp(scan.Watermark, st, storage.StatePrefix(1, 2), store, newWindowOp(win, aggOp))
	if err != nil {
		t.Fatal(err)
	}

	var kept []types.Row
	var late uint64
	wm, valid := int64(0), false
	now := int64(1000) * sec
	for epoch := uint64(1); epoch <= 60; epoch++ {
		c := &Chunk{}
		for range rng.Intn(20) {
			now += int64(rng.Intn(1500)) * 1000
			ev := now - int64(rng.Intn(6000))*1000 // up to 6s out of order
			row := types.Row{types.NewInt(int64(rng.Intn(3))), types.NewTimestamp2000(ev)}
			c.Append(row, Insert)
			if valid && ev < wm {
				late++
				continue
			}
			kept = append(kept, row)
			if !valid || ev-delay > wm {
				wm, valid = ev-delay, true
			}
		}
		if c.Len() > 0 {
			if err := head.Push(c); err != nil {
				t.Fatal(err)
			}
		}
		b := store.NewBatch()
		if err := head.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		if err := store.Commit(b, false); err != nil {
			t.Fatal(err)
		}
		b.Close()

		if got := st.late.Load(); got != late {
			t.Fatalf("seed %d epoch %d: %d late rows counted, want %d", seed, epoch, got, late)
		}
		type group struct{ k, end int64 }
		want := map[group]int64{}
		for _, r := range kept {
			want[group{r[0].I, (floorDiv(r[1].I, size) + 1) * size}]++
		}
		var wantRows []string
		for g, n := range want {
			wantRows = append(wantRows, fmt.Sprint(types.Row{types.NewInt(g.k), types.NewTimestamp2000(g.end), types.NewInt(n)}))
		}
		sort.Strings(wantRows)
		got := out.sorted()
		if fmt.Sprint(got) != fmt.Sprint(wantRows) {
			t.Fatalf("seed %d epoch %d: view\n%v\nwant\n%v", seed, epoch, got, wantRows)
		}
		for _, g := range aggOp.groups {
			if valid && g.key[1].I <= wm {
				t.Fatalf("seed %d epoch %d: group %v of a closed window (watermark %d) still held", seed, epoch, g.key, wm)
			}
		}
	}
	if late == 0 || len(aggOp.groups) > 6 {
		t.Fatalf("seed %d: test did not exercise lateness (%d late) or freeing (%d groups held)", seed, late, len(aggOp.groups))
	}
}

// multiset is the end of a test dataflow: the rows its input holds.
type multiset struct{ rows map[string]int }

func (m *multiset) Push(c *Chunk) error {
	for i, r := range c.Rows {
		k := fmt.Sprint(r)
		m.rows[k] += int(c.Signs[i])
		if m.rows[k] < 0 {
			return fmt.Errorf("row %s retracted more often than inserted", k)
		}
		if m.rows[k] == 0 {
			delete(m.rows, k)
		}
	}
	return nil
}

func (m *multiset) Barrier(Epoch) error { return nil }

func (m *multiset) sorted() []string {
	var out []string
	for k, n := range m.rows {
		for range n {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
