package exec

import (
	"fmt"

	"streamdb/storage/keyenc"
	"streamdb/types"
)

// SinkEnvelope is the shape of the messages a sink publishes for one
// epoch's changes to a view (the building block of CREATE SINK; see
// docs/design.md once sinks are wired).
type SinkEnvelope string

const (
	// EnvelopeChangelog: one message per epoch, a JSON array of
	// {"op":"+"|"-","row":{...}}, deletions first (as a table's
	// changelog, changelog.go), so a consumer applying it in order
	// rebuilds the view's multiset when it keeps a count per row (a row
	// inserted and deleted in one epoch shows its "-" first).
	EnvelopeChangelog SinkEnvelope = "changelog"
	// EnvelopeUpsert: one message per key changed in the epoch,
	// {"key":{...},"value":{...}} with the key's final row, or
	// "value":null when the key was deleted (Kafka's upsert shape). Only
	// for views with a unique key.
	EnvelopeUpsert SinkEnvelope = "upsert"
	// EnvelopeDebezium: one message per change, Debezium's
	// {"before":row|null,"after":row|null,"op":"c"|"u"|"d"}; for a view
	// with a unique key, a deletion and an insertion of the same key in
	// one epoch become one "u".
	EnvelopeDebezium SinkEnvelope = "debezium"
)

// EncodeSinkEpoch renders one epoch's changes to a view with columns cols
// as the messages of envelope env. keyCols is the view's unique key (nil
// if it has none; upsert needs one). changes are in the order the view
// applied them.
func EncodeSinkEpoch(env SinkEnvelope, cols []types.Column, keyCols []int, changes []Change) ([][]byte, error) {
	if len(changes) == 0 {
		return nil, nil
	}
	switch env {
	case EnvelopeChangelog:
		msg, err := EncodeChangelog(cols, ChangelogOrder([][]Change{changes}), int(^uint(0)>>1))
		if err != nil {
			return nil, err
		}
		return [][]byte{msg}, nil
	case EnvelopeUpsert:
		if keyCols == nil {
			return nil, fmt.Errorf("the upsert envelope needs a view with a unique key")
		}
		return encodeUpsert(cols, keyCols, changes)
	case EnvelopeDebezium:
		return encodeDebezium(cols, keyCols, changes)
	}
	return nil, fmt.Errorf("unknown sink envelope %q", env)
}

// keyedChange is the net effect of an epoch on one key: the row the key
// had before (nil if none) and after (nil if deleted).
type keyedChange struct {
	before, after types.Row
	first         bool // before is unknown: the key's first change was an insertion
}

// netByKey folds changes per key in first-seen order.
func netByKey(keyCols []int, changes []Change) ([]string, map[string]*keyedChange) {
	var order []string
	net := map[string]*keyedChange{}
	for _, ch := range changes {
		k := string(keyOf(keyCols, ch.Row))
		kc := net[k]
		if kc == nil {
			kc = &keyedChange{first: ch.Sign > 0}
			net[k] = kc
			order = append(order, k)
		}
		if ch.Sign > 0 {
			kc.after = ch.Row
			continue
		}
		if kc.before == nil && !kc.first {
			kc.before = ch.Row
		}
		kc.after = nil
	}
	return order, net
}

func keyOf(keyCols []int, row types.Row) []byte {
	var b []byte
	for _, j := range keyCols {
		b = keyenc.Append(b, row[j])
	}
	return b
}

func encodeUpsert(cols []types.Column, keyCols []int, changes []Change) ([][]byte, error) {
	keyColumns := make([]types.Column, len(keyCols))
	for i, j := range keyCols {
		keyColumns[i] = cols[j]
	}
	order, net := netByKey(keyCols, changes)
	out := make([][]byte, 0, len(order))
	for _, k := range order {
		kc := net[k]
		if kc.after == nil && kc.before == nil {
			continue // inserted and deleted within the epoch
		}
		row := kc.after
		if row == nil {
			row = kc.before
		}
		key := make(types.Row, len(keyCols))
		for i, j := range keyCols {
			key[i] = row[j]
		}
		buf := append(make([]byte, 0, 128), `{"key":`...)
		buf, err := appendRowJSON(buf, keyColumns, key, true)
		if err != nil {
			return nil, err
		}
		buf = append(buf, `,"value":`...)
		if kc.after == nil {
			buf = append(buf, "null"...)
		} else if buf, err = appendRowJSON(buf, cols, kc.after, true); err != nil {
			return nil, err
		}
		out = append(out, append(buf, '}'))
	}
	return out, nil
}

func encodeDebezium(cols []types.Column, keyCols []int, changes []Change) ([][]byte, error) {
	var out [][]byte
	event := func(before, after types.Row) error {
		op := "u"
		switch {
		case before == nil:
			op = "c"
		case after == nil:
			op = "d"
		}
		buf := append(make([]byte, 0, 256), `{"before":`...)
		var err error
		for i, row := range []types.Row{before, after} {
			if i == 1 {
				buf = append(buf, `,"after":`...)
			}
			if row == nil {
				buf = append(buf, "null"...)
			} else if buf, err = appendRowJSON(buf, cols, row, true); err != nil {
				return err
			}
		}
		out = append(out, fmt.Appendf(buf, `,"op":%q}`, op))
		return nil
	}
	if keyCols == nil {
		// A multiset: every change is its own event.
		for _, ch := range ChangelogOrder([][]Change{changes}) {
			var err error
			if ch.Sign > 0 {
				err = event(nil, ch.Row)
			} else {
				err = event(ch.Row, nil)
			}
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	order, net := netByKey(keyCols, changes)
	for _, k := range order {
		kc := net[k]
		if kc.after == nil && kc.before == nil {
			continue
		}
		if err := event(kc.before, kc.after); err != nil {
			return nil, err
		}
	}
	return out, nil
}
