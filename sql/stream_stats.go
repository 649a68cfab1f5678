package sql

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/types"
)

// streamColumns are the columns of the system table streamdb_streams:
// those of SHOW STREAMS (the first showStreamsColumns), then the member
// figures, which SHOW STREAMS leaves out (they start again with each
// reader, and its rows stay as they were). The member figures are
// counted by the stream's readers, which decode its messages for the
// views that read it, since each reader started (the server's start, or
// the first view over the stream created since): a stream no view reads
// shows 0 and no columns.
//
//   - unmatched_key_messages: messages with a member key that no column
//     of the stream matches (the member is dropped);
//   - unmatched_keys: those keys, "key (messages)", by key;
//   - never_seen_columns: columns read from members that no decoded
//     message had (they read NULL, or their ADD COLUMN default).
//
// A reader that started before ALTER STREAM ADD or RENAME COLUMN decodes
// the columns it started with: a key it counts as unmatched that the
// stream now has a column for is not reported, and counts as seen.
var streamColumns = []types.Column{
	{Name: "name", Type: types.Text}, {Name: "subject", Type: types.Text},
	{Name: "jetstream_stream", Type: types.Text}, {Name: "format", Type: types.Text},
	{Name: "columns", Type: types.Text}, {Name: "skipped_messages", Type: types.Int8},
	{Name: "decoded_messages", Type: types.Int8}, {Name: "unmatched_key_messages", Type: types.Int8},
	{Name: "unmatched_keys", Type: types.Text}, {Name: "never_seen_columns", Type: types.Text},
}

// showStreamsColumns is how many of streamColumns SHOW STREAMS shows.
const showStreamsColumns = 6

func init() {
	pgSystemTables["pg_catalog.streamdb_streams"] = pgSystemTableDef{cols: streamColumns, rows: (*Engine).streamRows}
}

// streamRows are the rows of streamdb_streams.
func (e *Engine) streamRows() []types.Row {
	skipped := e.rt.SkippedMessages()
	stats := e.rt.StreamKeyStats()
	var rows []types.Row
	for _, d := range e.objects(catalog.KindStream) {
		colText := make([]string, len(d.Columns))
		for i, c := range d.Columns {
			colText[i] = c.Name + " " + c.Type
		}
		rep := memberReport(d, stats[d.Name])
		keys := make([]string, len(rep.unmatched))
		for i, k := range rep.unmatched {
			keys[i] = fmt.Sprintf("%s (%d)", k.Key, k.Messages)
		}
		rows = append(rows, types.Row{
			types.NewString(d.Name), types.NewString(d.Subject), types.NewString(d.JSStream),
			types.NewString(d.Format), types.NewString(strings.Join(colText, ", ")),
			types.NewInt(int64(skipped[d.Name])),
			types.NewInt(int64(rep.decoded)), types.NewInt(int64(rep.unmatchedMessages)),
			types.NewString(strings.Join(keys, ", ")), types.NewString(strings.Join(rep.neverSeen, ", ")),
		})
	}
	return rows
}

// streamMembers is what the readers of a stream saw of its messages'
// members (streamColumns).
type streamMembers struct {
	decoded, unmatchedMessages uint64
	unmatched                  []exec.KeyCount // by key
	neverSeen                  []string        // column names, in column order
}

// messageMemberColumns returns the member key of each of d's columns
// that a message member fills (not generated, not INCLUDE), mapped to
// the column's name; nil for a stream that reads whole messages.
func messageMemberColumns(d *catalog.Descriptor) map[string]string {
	if d.Options[catalog.OptWholeMessage] == "true" {
		return nil
	}
	out := map[string]string{}
	for _, c := range d.Columns {
		if c.Generated == "" && c.Metadata == "" {
			out[c.MemberKey()] = c.Name
		}
	}
	return out
}

// memberReport combines the readers' statistics of stream d against its
// columns as they are now: a key counts as unmatched when no reader had
// a column for it and the stream has none now; the figures are the most
// any reader counted (readers of one stream read the same messages).
func memberReport(d *catalog.Descriptor, readers []exec.KeyStats) streamMembers {
	var out streamMembers
	declared := messageMemberColumns(d)
	if declared == nil || len(readers) == 0 {
		return out
	}
	seen := map[string]bool{}
	unmatched := map[string]uint64{}
	for _, r := range readers {
		out.decoded = max(out.decoded, r.Decoded)
		for i, key := range r.Columns {
			if r.Seen[i] {
				seen[key] = true
			}
		}
		stale := false // the reader counts a key the stream now has a column for
		for _, k := range r.Keys {
			if k.Messages == 0 {
				continue
			}
			seen[k.Key] = true
			if _, ok := declared[k.Key]; ok {
				stale = true
				continue
			}
			unmatched[k.Key] = max(unmatched[k.Key], k.Messages)
			out.unmatchedMessages = max(out.unmatchedMessages, k.Messages)
		}
		if !stale {
			out.unmatchedMessages = max(out.unmatchedMessages, r.Unmatched)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(unmatched)) {
		out.unmatched = append(out.unmatched, exec.KeyCount{Key: k, Messages: unmatched[k]})
	}
	for _, c := range d.Columns {
		if c.Generated == "" && c.Metadata == "" && !seen[c.MemberKey()] {
			out.neverSeen = append(out.neverSeen, c.Name)
		}
	}
	return out
}
