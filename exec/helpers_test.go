package exec

import (
	"fmt"
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
