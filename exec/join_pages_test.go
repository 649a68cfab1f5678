package exec

import (
	"fmt"
	"testing"

	"streamdb/plan"
	"streamdb/storage"
	"streamdb/types"
)

// TestJoinPagesPack: rows of a packed side share pages, rows of the other
// side get one key each, and a restarted join matches both sides' rows.
func TestJoinPagesPack(t *testing.T) {
	st := memoryStore(t)
	j := joinOnK(plan.InnerJoin)
	prefix := storage.StatePrefix(1, 2)
	open := func(out Operator) *joinOp {
		op, err := newJoinOp(j, prefix, st.DB(), joinStateByPage, [2]bool{true, false}, out)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	op := open(discard{})
	const rows = 2000
	for side := range byte(2) {
		for epoch := range 2 {
			c := &Chunk{}
			for i := range rows / 2 {
				n := epoch*rows/2 + i
				c.Append(types.Row{types.NewInt(int64(n)), types.NewString(fmt.Sprintf("%c-%040d", 'a'+side, n))}, Insert)
			}
			if err := op.port(side).Push(c); err != nil {
				t.Fatal(err)
			}
			closeJoinEpoch(t, op, st, uint64(2*int(side)+epoch+1))
		}
	}
	keys := 0
	if err := storage.ScanPrefix(st.DB(), prefix, func(k, v []byte) error { keys++; return nil }); err != nil {
		t.Fatal(err)
	}
	// The left side's rows (~60 bytes each) fill a page per 8 KiB; the
	// right side's take a key each.
	if keys < rows || keys > rows+2*(rows/2*60/joinPageBytes+2) {
		t.Fatalf("%d state keys for %d packed and %d unpacked rows", keys, rows, rows)
	}
	// Restart; a right-side retraction of row 7 must meet the restored
	// left row 7, and only it.
	out := &textRows{cols: j.Cols}
	op = open(out)
	c := &Chunk{}
	c.Append(types.Row{types.NewInt(7), types.NewString(fmt.Sprintf("b-%040d", 7))}, Delete)
	if err := op.port(1).Push(c); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(out.rows)
	want := fmt.Sprintf("[-[7 a-%040d 7 b-%040d]]", 7, 7)
	if got != want {
		t.Fatalf("after restart: got %s, want %s", got, want)
	}
}
