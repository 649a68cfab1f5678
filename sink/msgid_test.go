package sink

import "testing"

// TestMsgID: a message id parses back only for its own sink, and
// positions order by entry.
func TestMsgID(t *testing.T) {
	id := msgID("3.1700000000", 42, 1, 7)
	if id != "3.1700000000/42/1/7" {
		t.Fatalf("msgID = %q", id)
	}
	p, ok := parseMsgID("3.1700000000", id)
	if !ok || p != (position{epoch: 42, part: 1, index: 7}) {
		t.Fatalf("parseMsgID = %v, %v", p, ok)
	}
	for _, other := range []string{"", "3.1700000001/42/1/7", "3.1700000000/42/1", "3.1700000000/x/1/7", "3.1700000000/42/1/-1"} {
		if _, ok := parseMsgID("3.1700000000", other); ok {
			t.Errorf("parseMsgID accepted %q", other)
		}
	}
	if !p.after(42, 0) || !p.after(41, 1) || p.after(42, 1) || p.after(43, 0) {
		t.Fatal("position.after")
	}
}
