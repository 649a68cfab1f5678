package expr

import (
	"testing"

	"streamdb/types"
)

// BenchmarkIntModEval evaluates "k % 7" over a bigint column, the group
// key of the many-views benchmarks.
func BenchmarkIntModEval(b *testing.B) {
	e, err := Binary("%", &ColRef{Idx: 0, T: types.Int8}, &Const{D: types.NewInt(7), T: types.Int4})
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]types.Row, 1024)
	for i := range rows {
		rows[i] = types.Row{types.NewInt(int64(i * 31)), types.NewInt(int64(i))}
	}
	b.ResetTimer()
	var sum int64
	for i := 0; i < b.N; i++ {
		d, err := e.Eval(rows[i&1023])
		if err != nil {
			b.Fatal(err)
		}
		sum += d.I
	}
	_ = sum
}
