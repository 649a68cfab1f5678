package sink

import (
	"streamdb/exec"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// changelogRows and changelogBytes bound one changelog message, so that a
// large epoch or snapshot stays well under NATS's payload limit (1 MiB by
// default). A message ends at whichever bound it reaches first.
const (
	changelogRows  = 1000
	changelogBytes = 512 << 10
)

// entry is one outbox entry as read from a snapshot.
type entry struct {
	key   []byte
	epoch uint64
	part  byte
	value []byte
}

// messages renders entry i of entries (sink d's outbox in key order, as
// of snapshot r) as the messages of d's envelope. A snapshot mark becomes
// the view's rows as of the mark: the rows in r minus the changes of the
// entries after it.
func messages(r storage.Reader, d *storage.SinkDescriptor, cols []types.Column, entries []entry, i int) ([][]byte, error) {
	var diffs []exec.RowDiff
	if snap, _ := exec.OutboxEntryInfo(entries[i].value); snap {
		counts, err := exec.ViewCounts(r, d.ViewID, len(cols))
		if err != nil {
			return nil, err
		}
		for _, later := range entries[i+1:] {
			if s, _ := exec.OutboxEntryInfo(later.value); s {
				continue
			}
			ds, err := exec.DecodeOutboxChanges(later.value, len(cols))
			if err != nil {
				return nil, err
			}
			for _, c := range ds {
				k := string(keyenc.AppendRowValue(nil, c.Row))
				rc := counts[k]
				rc.Row, rc.Diff = c.Row, rc.Diff-c.Diff
				counts[k] = rc
			}
		}
		for _, c := range counts {
			if c.Diff > 0 {
				diffs = append(diffs, exec.RowDiff{Row: c.Row, Diff: c.Diff})
			}
		}
		diffs = exec.SortChanges(diffs)
	} else {
		var err error
		if diffs, err = exec.DecodeOutboxChanges(entries[i].value, len(cols)); err != nil {
			return nil, err
		}
	}
	changes := exec.SinkChanges(diffs)
	env := exec.SinkEnvelope(d.Envelope)
	if env != exec.EnvelopeChangelog {
		return exec.EncodeSinkEpoch(env, cols, d.KeyCols, changes)
	}
	return changelogMessages(cols, changes)
}

// changelogMessages renders changes, in order, as changelog messages of
// at most changelogRows changes and (unless one change alone is larger)
// changelogBytes bytes.
func changelogMessages(cols []types.Column, changes []exec.Change) ([][]byte, error) {
	var out [][]byte
	var cur []byte
	n := 0
	for _, ch := range changes {
		one, err := exec.EncodeSinkEpoch(exec.EnvelopeChangelog, cols, nil, []exec.Change{ch})
		if err != nil {
			return nil, err
		}
		item := one[0][1 : len(one[0])-1] // without the brackets
		if n > 0 && (n == changelogRows || len(cur)+1+len(item)+1 > changelogBytes) {
			out = append(out, append(cur, ']'))
			cur, n = nil, 0
		}
		if n == 0 {
			cur = append(make([]byte, 0, 4096), '[')
		} else {
			cur = append(cur, ',')
		}
		cur = append(cur, item...)
		n++
	}
	if n > 0 {
		out = append(out, append(cur, ']'))
	}
	return out, nil
}
