package meta

import (
	"bytes"
	"fmt"
	"testing"

	"streamdb/exec"
)

// BenchmarkPendingWithValues measures what one UNIQUE check spends on the
// commits a table's state does not hold yet (a backlog of single-row
// INSERTs, as steady concurrent writers leave), side by side: through
// the log's value index, going over the backlog with one buffer (the
// fallback when the log's entries moved on), and as the check did before
// the index (each row's values encoded into a fresh slice).
// go test ./meta -run '^$' -bench PendingWithValues
func BenchmarkPendingWithValues(b *testing.B) {
	for _, backlog := range []int{10, 100, 1000} {
		l := &TableLog{idle: make(chan struct{})}
		for i := range backlog {
			l.Queue([]exec.Change{change(int64(i), int64(i)*3, 1)}, nil)
		}
		pos := []int{1}
		vals := valueKey(int64(backlog/2) * 3)
		b.Run(fmt.Sprintf("backlog=%d/log index", backlog), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if changes, ok := l.ChangesWithValues(l.version, pos, vals); !ok || len(changes) != 1 {
					b.Fatalf("%d holders (answered %v), want 1", len(changes), ok)
				}
			}
		})
		b.Run(fmt.Sprintf("backlog=%d/going over", backlog), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var buf []byte
				n := 0
				for _, en := range l.entries {
					for _, ch := range en.Changes() {
						buf = exec.AppendIndexValues(buf[:0], ch.Row, pos)
						if bytes.Equal(buf, vals) {
							n++
						}
					}
				}
				if n != 1 {
					b.Fatalf("%d holders, want 1", n)
				}
			}
		})
		b.Run(fmt.Sprintf("backlog=%d/before", backlog), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var pending []exec.Change
				for _, en := range l.entries {
					pending = append(pending, en.Changes()...)
				}
				var ids []string
				for _, ch := range pending {
					if bytes.Equal(exec.AppendIndexValues(nil, ch.Row, pos), vals) {
						ids = append(ids, string(RowKey([]int{0}, ch.Row)))
					}
				}
				if len(ids) != 1 {
					b.Fatalf("%d holders, want 1", len(ids))
				}
			}
		})
	}
}
