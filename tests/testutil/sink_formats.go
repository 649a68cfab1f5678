package testutil

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// ReadFormatSink reads every message on subject, the subject of a sink in
// format 'protobuf' or 'avro': decode turns a message into its row (as
// rowText renders it), and its Streamdb-Op header ("+" or "-") counts it
// in or out.
func ReadFormatSink(js jetstream.JetStream, subject string, decode func([]byte) (string, error)) (*SinkFeed, error) {
	f := &SinkFeed{Rows: map[string]int64{}}
	err := eachSinkMessage(js, subject, func(m *jetstream.RawStreamMsg) error {
		row, err := decode(m.Data)
		if err != nil {
			return fmt.Errorf("message %d: %w", m.Sequence, err)
		}
		d := int64(1)
		switch op := m.Header.Get("Streamdb-Op"); op {
		case "-":
			d = -1
		case "+":
		default:
			return fmt.Errorf("message %d: Streamdb-Op %q", m.Sequence, op)
		}
		f.Msgs = append(f.Msgs, fmt.Sprintf("%s %s", m.Header.Get("Streamdb-Op"), row))
		f.IDs = append(f.IDs, m.Header.Get("Nats-Msg-Id"))
		f.Epochs = append(f.Epochs, m.Header.Get("Streamdb-Epoch"))
		f.add(row, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// formatValueText renders a decoded field as PostgreSQL's text does for
// the values the tests use (timestamps whole seconds, UTC).
func formatValueText(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return v.UTC().Format("2006-01-02 15:04:05")
	}
	return fmt.Sprint(v)
}

// ProtoSinkDecoder decodes messages of type message from the serialized
// descriptor set into rows of cols: an unset field with presence is NULL,
// a google.protobuf.Timestamp a timestamp.
func ProtoSinkDecoder(t testing.TB, set []byte, message string, cols []string) func([]byte) (string, error) {
	t.Helper()
	md := protoMessage(t, set, message)
	return func(b []byte) (string, error) {
		m := dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(b, m); err != nil {
			return "", err
		}
		parts := make([]string, len(cols))
		for i, c := range cols {
			fd := md.Fields().ByName(protoreflect.Name(c))
			if fd == nil {
				return "", fmt.Errorf("no field %s", c)
			}
			var v any
			switch {
			case fd.HasPresence() && !m.Has(fd):
			case fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Timestamp":
				ts := m.Get(fd).Message()
				v = time.Unix(ts.Get(ts.Descriptor().Fields().ByName("seconds")).Int(), ts.Get(ts.Descriptor().Fields().ByName("nanos")).Int())
			default:
				v = m.Get(fd).Interface()
			}
			parts[i] = formatValueText(v)
		}
		return strings.Join(parts, "|"), nil
	}
}

// AvroSinkDecoder decodes Avro records of schema into rows of cols.
func AvroSinkDecoder(t testing.TB, schema string, cols []string) func([]byte) (string, error) {
	t.Helper()
	s, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	return func(b []byte) (string, error) {
		var m map[string]any
		if err := avro.Unmarshal(s, b, &m); err != nil {
			return "", err
		}
		parts := make([]string, len(cols))
		for i, c := range cols {
			v := m[c]
			if u, ok := v.(map[string]any); ok { // a union's branch
				for _, x := range u {
					v = x
				}
			}
			parts[i] = formatValueText(v)
		}
		return strings.Join(parts, "|"), nil
	}
}
