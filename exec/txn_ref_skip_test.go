package exec

import (
	"fmt"
	"testing"

	"streamdb/broker"
)

// TestSkipTxnData: a read resumed after n data messages starts at the
// n+1st sequence the reference names, across its ranges.
func TestSkipTxnData(t *testing.T) {
	ref := broker.TxnRef{Txn: "x", Data: [][2]uint64{{10, 12}, {20, 20}, {30, 33}}}
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "[[10 12] [20 20] [30 33]]"},
		{1, "[[11 12] [20 20] [30 33]]"},
		{3, "[[20 20] [30 33]]"},
		{4, "[[30 33]]"},
		{6, "[[32 33]]"},
		{8, "[]"},
	} {
		got := skipTxnData(ref, c.n)
		if s := fmt.Sprint(got.Data); s != c.want && !(c.want == "[]" && len(got.Data) == 0) {
			t.Errorf("skip %d: %s, want %s", c.n, s, c.want)
		}
		if got.Txn != "x" {
			t.Errorf("skip %d: txn %q", c.n, got.Txn)
		}
	}
	if fmt.Sprint(ref.Data) != "[[10 12] [20 20] [30 33]]" {
		t.Errorf("ref changed: %v", ref.Data)
	}
}
