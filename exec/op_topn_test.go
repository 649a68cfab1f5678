package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// collector is the end of a test dataflow: the multiset of rows its input
// holds after every change, and a check that each chunk retracts before it
// inserts.
type collector struct {
	t      *testing.T
	rows   map[string]int
	byKey  map[string]types.Row
	pushes int
}

func newCollector(t *testing.T) *collector {
	return &collector{t: t, rows: map[string]int{}, byKey: map[string]types.Row{}}
}

func (c *collector) Push(ch *Chunk) error {
	c.pushes++
	inserting := false
	for i, row := range ch.Rows {
		k := string(keyenc.AppendRowValue(nil, row))
		if ch.Signs[i] > 0 {
			inserting = true
		} else if inserting {
			c.t.Fatalf("a delete follows an insert in one chunk")
		}
		c.rows[k] += int(ch.Signs[i])
		c.byKey[k] = row
		if c.rows[k] < 0 {
			c.t.Fatalf("row %v retracted more often than inserted", row)
		}
		if c.rows[k] == 0 {
			delete(c.rows, k)
		}
	}
	return nil
}

func (c *collector) Barrier(Epoch) error { return nil }

func (c *collector) sorted() []string {
	var out []string
	for k, n := range c.rows {
		for range n {
			out = append(out, fmt.Sprint(c.byKey[k]))
		}
	}
	sort.Strings(out)
	return out
}

// referenceTopN computes a TopN by the definitions of the ranking
// functions over the live rows (p, k, v): partitions by column 0, orders
// by column 1 (desc if asked), ties in the order of the full row encoding;
// WithTies adds the rows whose key equals that of row Offset+Count.
func referenceTopN(tn *plan.TopN, live []types.Row) []string {
	parts := map[string][]types.Row{}
	for _, r := range live {
		pk := ""
		if len(tn.PartitionBy) > 0 {
			pk = string(keyenc.Append(nil, r[0]))
		}
		parts[pk] = append(parts[pk], r)
	}
	cmpKey := func(a, b types.Row) int {
		c := types.Compare(a[1], b[1])
		if tn.Order[0].Desc {
			c = -c
		}
		return c
	}
	var out []string
	for _, rows := range parts {
		sort.SliceStable(rows, func(i, j int) bool {
			if c := cmpKey(rows[i], rows[j]); c != 0 {
				return c < 0
			}
			return string(keyenc.AppendRowValue(nil, rows[i])) < string(keyenc.AppendRowValue(nil, rows[j]))
		})
		for i, r := range rows {
			var rank int64
			switch tn.Func {
			case "", plan.RowNumber:
				rank = int64(i + 1)
			case plan.Rank:
				rank = 1
				for _, o := range rows {
					if cmpKey(o, r) < 0 {
						rank++
					}
				}
			case plan.DenseRank:
				smaller := map[string]bool{}
				for _, o := range rows {
					if cmpKey(o, r) < 0 {
						smaller[string(keyenc.Append(nil, o[1]))] = true
					}
				}
				rank = int64(len(smaller) + 1)
			}
			if tn.Func == "" {
				last := tn.Offset + tn.Count - 1 // index of the bound's row
				tied := tn.WithTies && tn.Count > 0 && last < int64(len(rows)) && cmpKey(r, rows[last]) == 0
				if rank > tn.Offset && (tn.Count < 0 || rank <= tn.Offset+tn.Count || tied) {
					out = append(out, fmt.Sprint(r))
				}
				continue
			}
			if tn.Count < 0 || rank <= tn.Count {
				out = append(out, fmt.Sprint(append(append(types.Row{}, r...), types.NewInt(rank))))
			}
		}
	}
	sort.Strings(out)
	return out
}

// withTies makes t a FETCH ... WITH TIES top-N.
func withTies(t *plan.TopN) *plan.TopN {
	t.WithTies = true
	return t
}

func testTopN(fn string, partitioned, desc bool, count, offset int64) *plan.TopN {
	cols := []types.Column{{Name: "p", Type: types.Int8}, {Name: "k", Type: types.Int8}, {Name: "v", Type: types.Int8}}
	t := &plan.TopN{
		Input:  &plan.Values{Cols: cols},
		Order:  []plan.SortKey{{Expr: &expr.ColRef{Idx: 1, Name: "k", T: types.Int8}, Desc: desc}},
		Func:   fn,
		Count:  count,
		Offset: offset,
		Cols:   cols,
	}
	if partitioned {
		t.PartitionBy = []expr.Expr{&expr.ColRef{Idx: 0, Name: "p", T: types.Int8}}
	}
	if fn != "" {
		t.Cols = append(append([]types.Column{}, cols...), types.Column{Name: "rn", Type: types.Int8})
	}
	return t
}

// TestTopNOperatorMatchesReference drives the streaming TopN with random
// inserts and retractions (duplicates, NULL keys and partitions included),
// restarting it from its Pebble state now and then, and compares what it
// emitted with the top-N computed from scratch after every barrier.
func TestTopNOperatorMatchesReference(t *testing.T) {
	defer func(n int) { rankListBlock = n }(rankListBlock)
	rankListBlock = 3 // split blocks often
	type testCase struct {
		tn         *plan.TopN
		appendOnly bool // only inserts; the operator prunes
	}
	cases := []testCase{
		{testTopN(plan.RowNumber, true, true, 2, 0), false},
		{testTopN(plan.RowNumber, false, false, 3, 0), false},
		{testTopN(plan.Rank, true, false, 2, 0), false},
		{testTopN(plan.DenseRank, true, true, 2, 0), false},
		{testTopN("", false, true, 3, 2), false},
		{testTopN("", true, false, -1, 1), false},
		{testTopN(plan.RowNumber, true, true, 2, 0), true},
		{testTopN(plan.Rank, false, false, 3, 0), true},
		{testTopN(plan.DenseRank, true, true, 2, 0), true},
		{testTopN("", false, true, 3, 2), true},
		{withTies(testTopN("", false, true, 3, 2)), false},
		{withTies(testTopN("", true, false, 1, 0)), false},
		{withTies(testTopN("", false, false, 2, 1)), true},
	}
	// Each case runs under the older format (every row in memory), the
	// keyed format with no bound, and the keyed format with a cache of 2
	// rows whose epochs commit one barrier late, so that rows leave memory
	// before their writes commit and are read back past the bound.
	// "set" feeds the cached top-N rows that are never live twice, as it
	// gets from a keyed view, and tells it so (setInput): it then counts
	// rows past the bound without reading Pebble.
	modes := []struct {
		name     string
		dataflow catalog.FormatVersion
		limit    int64
		set      bool
	}{
		{"unkeyed", catalog.DataflowViewEdges, 0, false},
		{"keyed", catalog.DataflowTopNStateByKey, 0, false},
		{"cached", catalog.DataflowTopNStateByKey, 2, false},
		{"set", catalog.DataflowTopNStateByKey, 2, true},
	}
	for ci, c := range cases {
		for _, m := range modes {
			tn := c.tn
			if m.limit > 0 && (c.appendOnly || tn.Count < 0) {
				continue // such a top-N keeps its rows in memory
			}
			t.Run(fmt.Sprintf("%d_%s_limit%d_offset%d_ties%v_appendonly%v_%s", ci, tn.Func, tn.Count, tn.Offset, tn.WithTies, c.appendOnly, m.name), func(t *testing.T) {
				testTopNReference(t, tn, c.appendOnly, int64(ci)+1, m.dataflow, m.limit, m.set)
			})
		}
	}
}

func testTopNReference(t *testing.T, tn *plan.TopN, appendOnly bool, seed int64, dataflow catalog.FormatVersion, limit int64, set bool) {
	rng := rand.New(rand.NewSource(seed))
	store := memoryStore(t)
	prefix := storage.StatePrefix(42, 7)
	out := newCollector(t)
	var committed uint64
	var pending *pebble.Batch // the last barrier's batch, committed at the next
	commit := func() {
		if pending != nil {
			if err := store.Commit(pending, false); err != nil {
				t.Fatal(err)
			}
			pending = nil
		}
	}
	cfg := topNConfig{dataflow: dataflow, limit: groupLimit{max: func() int64 { return limit }, committed: func() uint64 { return committed }}, setInput: set}
	op, err := newTopNOp(tn, appendOnly, prefix, store, cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	datum := func(n int) types.Datum {
		if rng.Intn(8) == 0 {
			return types.Null
		}
		return types.NewInt(int64(rng.Intn(n)))
	}
	var live []types.Row
	for epoch := uint64(1); epoch <= 300; epoch++ {
		ch := &Chunk{}
		for range rng.Intn(6) {
			if !appendOnly && len(live) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(live))
				ch.Append(live[i], Delete)
				live = append(live[:i], live[i+1:]...)
				continue
			}
			row := types.Row{datum(3), datum(5), types.NewInt(int64(rng.Intn(3)))}
			if set {
				// Distinct rows, many enough that partitions outgrow a
				// refill and rows lie past the bound.
				row[2] = types.NewInt(int64(rng.Intn(1000)))
				if slices.ContainsFunc(live, func(r types.Row) bool { return fmt.Sprint(r) == fmt.Sprint(row) }) {
					continue
				}
			}
			ch.Append(row, Insert)
			live = append(live, row)
		}
		if err := op.Push(ch); err != nil {
			t.Fatal(err)
		}
		b := store.NewBatch()
		if err := op.Barrier(Epoch{ID: epoch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		commit()
		committed = epoch - 1
		pending = b
		got, want := out.sorted(), referenceTopN(tn, live)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("epoch %d: top-N differs\ngot:\n%s\nwant:\n%s", epoch, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if op.cache != nil && op.cache.rows > max(limit, int64(len(op.parts))*int64(2*(tn.Offset+tn.Count)+refillRows+8)) {
			t.Fatalf("epoch %d: %d rows in memory, limit %d", epoch, op.cache.rows, limit)
		}
		if rng.Intn(20) == 0 {
			// Restart: a new operator over the committed state.
			commit()
			committed = epoch
			if op, err = newTopNOp(tn, appendOnly, prefix, store, cfg, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit()
	if op.cache != nil {
		t.Logf("cache: %d rows in memory, %d Pebble reads", op.cache.rows, op.cache.reads)
		if op.cache.reads == 0 && !set { // a set's rows past the bound are not read
			t.Errorf("a cache of %d rows read nothing from Pebble", limit)
		}
	}
	if appendOnly {
		// Pruned: each of the 4 partitions (3 values and NULL)
		// keeps few rows beyond its bound (ties of rank()).
		keys := 0
		if err := storage.ScanPrefix(store.DB(), prefix, func(_, _ []byte) error { keys++; return nil }); err != nil {
			t.Fatal(err)
		}
		if keys > 40 {
			t.Errorf("append-only top-N keeps %d rows in its state after %d inserts", keys, len(live))
		}
	}
}

// TestTopNRowNumberKeyUnique checks that a row_number top-N never holds two
// rows with the same (partition, rn) after a barrier, which the keyed
// materialization of such views relies on.
func TestTopNRowNumberKeyUnique(t *testing.T) {
	tn := testTopN(plan.RowNumber, true, false, 3, 0)
	if key := UniqueKey(tn); fmt.Sprint(key) != "[0 3]" {
		t.Fatalf("unique key %v, want [0 3]", key)
	}
	store := memoryStore(t)
	out := newCollector(t)
	op, err := newTopNOp(tn, false, storage.StatePrefix(1, 2), store, topNConfig{}, out)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	var live []types.Row
	for epoch := uint64(1); epoch <= 200; epoch++ {
		ch := &Chunk{}
		for range 4 {
			if len(live) > 0 && rng.Intn(2) == 0 {
				i := rng.Intn(len(live))
				ch.Append(live[i], Delete)
				live = append(live[:i], live[i+1:]...)
				continue
			}
			row := types.Row{types.NewInt(int64(rng.Intn(2))), types.NewInt(int64(rng.Intn(4))), types.NewInt(1)}
			ch.Append(row, Insert)
			live = append(live, row)
		}
		if err := op.Push(ch); err != nil {
			t.Fatal(err)
		}
		if err := op.Barrier(Epoch{ID: epoch, Batch: store.NewBatch()}); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for k := range out.rows {
			row := out.byKey[k]
			key := fmt.Sprint(row[0], row[3])
			if seen[key] || out.rows[k] > 1 {
				t.Fatalf("epoch %d: (partition, rn) %s held twice", epoch, key)
			}
			seen[key] = true
		}
	}
}

// TestTopNNullOrder checks PostgreSQL's NULL placement: last ascending,
// first descending.
func TestTopNNullOrder(t *testing.T) {
	rows := []types.Row{
		{types.NewInt(0), types.NewInt(1), types.NewInt(0)},
		{types.NewInt(0), types.Null, types.NewInt(0)},
		{types.NewInt(0), types.NewInt(2), types.NewInt(0)},
	}
	for _, desc := range []bool{false, true} {
		tn := testTopN("", false, desc, 1, 0)
		var l rankList
		for _, r := range rows {
			e, err := newRankEntry(tn.Order, r)
			if err != nil {
				t.Fatal(err)
			}
			l.add(tn.Order, e, 1)
		}
		got := rankedRows(tn, &l)
		ok := len(got) == 1 && (desc && got[0][1].IsNull() || !desc && !got[0][1].IsNull() && got[0][1].I == 1)
		if !ok {
			t.Errorf("desc=%v: first row %v, want k = NULL descending and 1 ascending", desc, got)
		}
	}
}
