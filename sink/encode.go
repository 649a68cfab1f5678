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
// of snapshot r) as the messages of d's envelope and format, with the op
// of each message for the formats that carry it in OpHeader (nil for
// JSON); enc is the row encoder of those formats.
func messages(r storage.Reader, d *storage.SinkDescriptor, cols []types.Column, enc RowEncoder, entries []entry, i int) ([][]byte, []string, error) {
	diffs, err := entryDiffs(r, d, cols, entries, i)
	if err != nil {
		return nil, nil, err
	}
	changes := exec.SinkChanges(diffs)
	if enc != nil {
		var msgs [][]byte
		var ops []string
		for _, ch := range exec.ChangelogOrder([][]exec.Change{changes}) {
			m, err := enc.Encode(ch.Row)
			if err != nil {
				return nil, nil, err
			}
			op := "+"
			if ch.Sign < 0 {
				op = "-"
			}
			msgs, ops = append(msgs, m), append(ops, op)
		}
		return msgs, ops, nil
	}
	env := exec.SinkEnvelope(d.Envelope)
	var msgs [][]byte
	if env != exec.EnvelopeChangelog {
		msgs, err = exec.EncodeSinkEpoch(env, cols, d.KeyCols, changes)
	} else {
		msgs, err = changelogMessages(cols, changes)
	}
	return msgs, nil, err
}

// entryDiffs returns the changes of entry i of entries; a snapshot mark
// becomes the view's rows as of the mark: the rows in r minus the changes
// of the entries after it.
func entryDiffs(r storage.Reader, d *storage.SinkDescriptor, cols []types.Column, entries []entry, i int) ([]exec.RowDiff, error) {
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
	return diffs, nil
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
