package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SinkFeed is what a consumer of a sink's subject rebuilt from every
// message on it, as a consumer that applies each message in order does.
type SinkFeed struct {
	// Rows holds each row (values in the given column order, joined by
	// "|", NULL as "NULL") with its multiplicity.
	Rows map[string]int64
	// Msgs are the messages' bodies, IDs their Nats-Msg-Id headers and
	// Epochs their Streamdb-Epoch headers, in stream order.
	Msgs   []string
	IDs    []string
	Epochs []string
}

// ReadSink reads every message on subject (a sink's subject, holding only
// that sink's messages) and applies it according to envelope
// ("changelog", "upsert" or "debezium"); cols are the view's columns in
// order. Upsert messages replace the row of their key.
func ReadSink(js jetstream.JetStream, subject, envelope string, cols []string) (*SinkFeed, error) {
	f := &SinkFeed{Rows: map[string]int64{}}
	byKey := map[string]string{} // upsert: key -> row
	err := eachSinkMessage(js, subject, func(m *jetstream.RawStreamMsg) error {
		f.Msgs = append(f.Msgs, string(m.Data))
		f.IDs = append(f.IDs, m.Header.Get("Nats-Msg-Id"))
		f.Epochs = append(f.Epochs, m.Header.Get("Streamdb-Epoch"))
		if err := f.apply(envelope, cols, m.Data, byKey); err != nil {
			return fmt.Errorf("message %d (%s): %w", m.Sequence, m.Data, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if envelope == "upsert" {
		for _, row := range byKey {
			f.Rows[row]++
		}
	}
	return f, nil
}

func (f *SinkFeed) apply(envelope string, cols []string, data []byte, byKey map[string]string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	switch envelope {
	case "changelog":
		var changes []struct {
			Op  string         `json:"op"`
			Row map[string]any `json:"row"`
		}
		if err := dec.Decode(&changes); err != nil {
			return err
		}
		for _, c := range changes {
			d := int64(1)
			if c.Op == "-" {
				d = -1
			} else if c.Op != "+" {
				return fmt.Errorf("op %q", c.Op)
			}
			f.add(rowText(cols, c.Row), d)
		}
	case "upsert":
		var m struct {
			Key   map[string]any `json:"key"`
			Value map[string]any `json:"value"`
		}
		if err := dec.Decode(&m); err != nil {
			return err
		}
		keyCols := make([]string, 0, len(m.Key))
		for k := range m.Key {
			keyCols = append(keyCols, k)
		}
		sort.Strings(keyCols)
		k := rowText(keyCols, m.Key)
		if m.Value == nil {
			delete(byKey, k)
		} else {
			byKey[k] = rowText(cols, m.Value)
		}
	case "debezium":
		var m struct {
			Before map[string]any `json:"before"`
			After  map[string]any `json:"after"`
			Op     string         `json:"op"`
		}
		if err := dec.Decode(&m); err != nil {
			return err
		}
		if m.Before != nil {
			f.add(rowText(cols, m.Before), -1)
		}
		if m.After != nil {
			f.add(rowText(cols, m.After), 1)
		}
	default:
		return fmt.Errorf("unknown envelope %q", envelope)
	}
	return nil
}

func (f *SinkFeed) add(row string, d int64) {
	if f.Rows[row] += d; f.Rows[row] == 0 {
		delete(f.Rows, row)
	}
}

func rowText(cols []string, row map[string]any) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		v, ok := row[c]
		switch {
		case !ok || v == nil:
			parts[i] = "NULL"
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, "|")
}

// Sorted returns the rows, each as often as its multiplicity, sorted as
// SortedRows sorts; a negative multiplicity shows as "-n x row".
func (f *SinkFeed) Sorted() []string {
	var out []string
	for row, n := range f.Rows {
		if n < 0 {
			out = append(out, fmt.Sprintf("%d x %s", n, row))
		}
		for range n {
			out = append(out, row)
		}
	}
	sort.Strings(out)
	return out
}

// DuplicateID returns a Nats-Msg-Id that occurs twice, or "".
func (f *SinkFeed) DuplicateID() string {
	seen := map[string]bool{}
	for _, id := range f.IDs {
		if seen[id] {
			return id
		}
		seen[id] = true
	}
	return ""
}

// eachSinkMessage calls fn, in stream order, for every message stored on
// subject (a sink's subject) in its JetStream stream.
func eachSinkMessage(js jetstream.JetStream, subject string, fn func(m *jetstream.RawStreamMsg) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return err
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		return err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return err
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if m.Subject != subject {
			continue
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// SubjectMessages returns the body of every message stored on subject in
// its JetStream stream, in stream order: what a stream holds, to compare
// a view with (a write whose acknowledgement was lost may be there).
func SubjectMessages(js jetstream.JetStream, subject string) ([][]byte, error) {
	var out [][]byte
	err := eachSinkMessage(js, subject, func(m *jetstream.RawStreamMsg) error {
		out = append(out, m.Data)
		return nil
	})
	return out, err
}
