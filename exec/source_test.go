package exec

import "testing"

func TestAckPosition(t *testing.T) {
	cases := []struct {
		reply   string
		seq     uint64
		pending uint64
		ok      bool
	}{
		{"$JS.ACK.ORDERS.cons.1.4242.17.1700000000000000000.3", 4242, 3, true},
		{"$JS.ACK.hub.ACCHASH.ORDERS.cons.2.18446744073709551615.9.1700000000000000000.0.rnd", 18446744073709551615, 0, true},
		{"$JS.ACK.hub.ACCHASH.ORDERS.cons.2.77.9.1700000000000000000.12", 77, 12, true},
		{"$JS.ACK.ORDERS.cons.1.42.17.1700000000000000000.x", 0, 0, false},
		{"$JS.ACK.ORDERS.cons.1.x42.17.1700000000000000000.3", 0, 0, false},
		{"$JS.ACK.ORDERS.cons.1..17.1700000000000000000.3", 0, 0, false},
		{"$JS.ACK.a.b.c", 0, 0, false},
		{"_INBOX.abc", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, c := range cases {
		seq, pending, ok := ackPosition(c.reply)
		if ok != c.ok || ok && (seq != c.seq || pending != c.pending) {
			t.Errorf("%q: got %d %d %v, want %d %d %v", c.reply, seq, pending, ok, c.seq, c.pending, c.ok)
		}
	}
}
