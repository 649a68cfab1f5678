package sql

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
// fallback when the log's entries moved on), and as uniqueHolders did
// before the index (the backlog laid out, each row's values encoded into
// a fresh slice). go test ./sql -run '^$' -bench PendingWithValues
func BenchmarkPendingWithValues(b *testing.B) {
	for _, backlog := range []int{10, 100, 1000} {
		l := &tableLog{idle: make(chan struct{})}
		for i := range backlog {
			l.queue([]exec.Change{change(int64(i), int64(i)*3, 1)}, nil)
		}
		pos := []int{1}
		vals := valueKey(int64(backlog/2) * 3)
		open := func() *tableState {
			return &tableState{key: []int{0}, log: l, logVersion: l.version, entries: l.entries[:len(l.entries):len(l.entries)]}
		}
		b.Run(fmt.Sprintf("backlog=%d/log index", backlog), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n := len(open().pendingWithValues(pos, vals)); n != 1 {
					b.Fatalf("%d holders, want 1", n)
				}
			}
		})
		b.Run(fmt.Sprintf("backlog=%d/going over", backlog), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ts := open()
				ts.log = nil
				if n := len(ts.pendingWithValues(pos, vals)); n != 1 {
					b.Fatalf("%d holders, want 1", n)
				}
			}
		})
		b.Run(fmt.Sprintf("backlog=%d/before", backlog), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var ids []string
				ts := open()
				for _, ch := range ts.pendingChanges() {
					if bytes.Equal(exec.AppendIndexValues(nil, ch.Row, pos), vals) {
						ids = append(ids, string(rowKey(ts.key, ch.Row)))
					}
				}
				if len(ids) != 1 {
					b.Fatalf("%d holders, want 1", len(ids))
				}
			}
		})
	}
}
