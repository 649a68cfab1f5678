package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"streamdb/storage"
	"streamdb/types"
)

// memoryStore opens a Pebble store in memory, closed when the test ends.
func memoryStore(t testing.TB) *storage.Store {
	t.Helper()
	st, err := storage.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// textRows is an Operator that keeps the changes it gets, in order, as
// sign and row text (columns of cols' types).
type textRows struct {
	cols []types.Column
	rows []string
}

func (c *textRows) Push(ch *Chunk) error {
	for i, r := range ch.Rows {
		sign := "+"
		if ch.Signs[i] < 0 {
			sign = "-"
		}
		vals := make([]string, len(r))
		for j, d := range r {
			vals[j] = types.FormatText(d, c.cols[j].Type)
		}
		c.rows = append(c.rows, sign+fmt.Sprint(vals))
	}
	return nil
}

func (*textRows) Barrier(Epoch) error { return nil }

// randomJoinChange makes one random change to one side of a join whose
// rows are (key in 0..keys-1 or NULL, text): the deletion of a live row
// (one time in three, when the side has any) or the insertion of a new
// one. live holds each side's rows and is updated.
func randomJoinChange(rng *rand.Rand, live *[2][]types.Row, keys int) (side byte, c *Chunk) {
	side = byte(rng.Intn(2))
	var row types.Row
	sign := int8(Insert)
	if n := len(live[side]); n > 0 && rng.Intn(3) == 0 {
		i := rng.Intn(n)
		row, sign = live[side][i], Delete
		live[side] = append(live[side][:i], live[side][i+1:]...)
	} else {
		row = types.Row{types.NewInt(int64(rng.Intn(keys))), types.NewString(fmt.Sprintf("%c%d", 'a'+side, rng.Intn(3)))}
		if rng.Intn(8) == 0 {
			row[0] = types.Null
		}
		live[side] = append(live[side], row)
	}
	c = &Chunk{}
	c.Append(row, sign)
	return side, c
}
