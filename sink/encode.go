package sink

import (
	"streamdb/exec"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// changelogRows bounds the changes in one changelog message, so that a
// large epoch or snapshot stays under NATS's payload limit (1 MiB by
// default) for rows of a few hundred bytes.
const changelogRows = 1000

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
	var out [][]byte
	for len(changes) > 0 {
		n := min(len(changes), changelogRows)
		msgs, err := exec.EncodeSinkEpoch(env, cols, d.KeyCols, changes[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
		changes = changes[n:]
	}
	return out, nil
}
