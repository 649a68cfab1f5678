package faults

import "testing"

// TestParse: a point may say how many times Fail fails there; a count
// that is not a positive number leaves the point listed, failing once.
func TestParse(t *testing.T) {
	pts, times := parse("crash-here, txn-read-fails=100,bad=x,zero=0")
	for _, p := range []string{"crash-here", "txn-read-fails", "bad", "zero"} {
		if !pts[p] {
			t.Errorf("point %s not listed: %v", p, pts)
		}
	}
	if times["txn-read-fails"] != 100 || len(times) != 1 {
		t.Errorf("times = %v, want txn-read-fails=100 only", times)
	}
}

// TestFailCounts: Fail fails as often as the point's count says, then
// never again.
func TestFailCounts(t *testing.T) {
	old, oldTimes := points, failTimes
	t.Cleanup(func() { points, failTimes = old, oldTimes })
	points, failTimes = parse("thrice=3,once")
	for _, c := range []struct {
		point string
		want  int
	}{{"thrice", 3}, {"once", 1}, {"unlisted", 0}} {
		n := 0
		for range 10 {
			if Fail(c.point) {
				n++
			}
		}
		if n != c.want {
			t.Errorf("Fail(%s) failed %d times, want %d", c.point, n, c.want)
		}
	}
}
