package exec

import "testing"

func TestStreamSeq(t *testing.T) {
	cases := []struct {
		reply string
		seq   uint64
		ok    bool
	}{
		{"$JS.ACK.ORDERS.cons.1.4242.17.1700000000000000000.3", 4242, true},
		{"$JS.ACK.hub.ACCHASH.ORDERS.cons.2.18446744073709551615.9.1700000000000000000.0.rnd", 18446744073709551615, true},
		{"$JS.ACK.hub.ACCHASH.ORDERS.cons.2.77.9.1700000000000000000.0", 77, true},
		{"$JS.ACK.ORDERS.cons.1.x42.17.1700000000000000000.3", 0, false},
		{"$JS.ACK.ORDERS.cons.1..17.1700000000000000000.3", 0, false},
		{"$JS.ACK.a.b.c", 0, false},
		{"_INBOX.abc", 0, false},
		{"", 0, false},
	}
	for _, c := range cases {
		seq, ok := streamSeq(c.reply)
		if seq != c.seq || ok != c.ok {
			t.Errorf("%q: got %d %v, want %d %v", c.reply, seq, ok, c.seq, c.ok)
		}
	}
}
