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

// TestToPublish: after a failure part way through an entry, the retry
// sends exactly the messages not acknowledged, holes included, even once
// the newest message on the subject (read back on resume) is after them.
func TestToPublish(t *testing.T) {
	e := entry{epoch: 9, part: 1}
	st := &state{}
	if got := st.toPublish(e, 4); len(got) != 4 {
		t.Fatalf("fresh entry: %v", got)
	}
	st.noteAcked(e, []int{0, 2}) // 1 failed, 3 unanswered
	st.last, st.has = position{epoch: 9, part: 1, index: 2}, true
	if got := st.toPublish(e, 4); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Fatalf("after a failure: %v, want [1 3]", got)
	}
	st.partial = nil
	if got := st.toPublish(e, 4); len(got) != 1 || got[0] != 3 {
		t.Fatalf("resumed after index 2: %v, want [3]", got)
	}
	st.noteAcked(e, nil)
	if got := st.toPublish(e, 4); len(got) != 1 || got[0] != 3 {
		t.Fatalf("a failure after resuming part way: %v, want [3]", got)
	}
}
