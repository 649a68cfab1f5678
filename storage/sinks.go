package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// SinkDescriptor is a sink (CREATE SINK) as stored in Pebble. Sinks have
// a key space of their own, so that the code that walks the relations of
// the catalog never meets them.
type SinkDescriptor struct {
	ID        uint32    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	Owner     string    `json:"owner,omitempty"`
	// View is the name of the view (or table) the sink reads and ViewID
	// its object id; KeyCols is its unique key (nil when it has none).
	View    string `json:"view"`
	ViewID  uint32 `json:"view_id"`
	KeyCols []int  `json:"key_cols,omitempty"`
	// Subject receives the messages; JSStream is the JetStream stream
	// that holds it.
	Subject  string `json:"subject"`
	JSStream string `json:"js_stream"`
	Format   string `json:"format"`
	Envelope string `json:"envelope"`
	// Schema is the schema of format 'protobuf' (a FileDescriptorSet,
	// with Message the message's full name) or 'avro' (the record's
	// JSON), read once at CREATE SINK.
	Schema  []byte `json:"schema,omitempty"`
	Message string `json:"message,omitempty"`
}

// UID names this sink apart from any other sink that had or will have
// its name or id (ids come back after a rollback): it prefixes the
// Nats-Msg-Id of every message the sink publishes.
func (d *SinkDescriptor) UID() string {
	return fmt.Sprintf("%d.%d", d.ID, d.CreatedAt.UnixNano())
}

func sinkKey(name string) []byte { return append([]byte{prefixSink}, name...) }

// PutSink writes d in b.
func PutSink(b *pebble.Batch, d *SinkDescriptor) error {
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return b.Set(sinkKey(d.Name), v, nil)
}

// DeleteSink removes sink d, its outbox and its start mark in b.
func DeleteSink(b *pebble.Batch, d *SinkDescriptor) error {
	if err := b.Delete(sinkKey(d.Name), nil); err != nil {
		return err
	}
	p := SinkPrefix(d.ID)
	return b.DeleteRange(p, PrefixEnd(p), nil)
}

// Sinks returns every sink, ordered by name.
func Sinks(r Reader) ([]*SinkDescriptor, error) {
	var out []*SinkDescriptor
	err := ScanPrefix(r, []byte{prefixSink}, func(_, v []byte) error {
		d := new(SinkDescriptor)
		if err := json.Unmarshal(v, d); err != nil {
			return fmt.Errorf("decode sink: %w", err)
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

// A sink's outbox holds, per epoch, what the sink still has to publish:
// the view's changes of that epoch, written in the epoch's own batch, so
// that Pebble holds an epoch's changes to a view exactly when it holds the
// epoch. Keys are 'x' + sink id + 0x01 + epoch + part, in publishing
// order; part is OutboxEpoch for an epoch's changes (or the snapshot a
// new sink starts with) and OutboxRollback for the changes a ROLLBACK TO
// made just before that epoch. 'x' + sink id + 0x00 marks a sink that
// started (its snapshot is in the outbox or published).
const (
	OutboxRollback byte = 0
	OutboxEpoch    byte = 1
)

// SinkPrefix covers every key of sink id.
func SinkPrefix(id uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{prefixOutbox}, id)
}

// OutboxPrefix covers sink id's outbox entries.
func OutboxPrefix(id uint32) []byte { return append(SinkPrefix(id), 1) }

// AllOutboxes covers every sink's keys.
func AllOutboxes() []byte { return []byte{prefixOutbox} }

// OutboxKey is the key of sink id's entry for (epoch, part).
func OutboxKey(id uint32, epoch uint64, part byte) []byte {
	return append(binary.BigEndian.AppendUint64(OutboxPrefix(id), epoch), part)
}

// ParseOutboxKey splits a key under AllOutboxes; ok is false for a start
// mark.
func ParseOutboxKey(k []byte) (id uint32, epoch uint64, part byte, ok bool) {
	if len(k) != 1+4+1+8+1 || k[5] != 1 {
		if len(k) >= 5 {
			id = binary.BigEndian.Uint32(k[1:5])
		}
		return id, 0, 0, false
	}
	return binary.BigEndian.Uint32(k[1:5]), binary.BigEndian.Uint64(k[6:14]), k[14], true
}

// SinkStartedKey marks sink id as started.
func SinkStartedKey(id uint32) []byte { return append(SinkPrefix(id), 0) }
