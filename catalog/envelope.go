package catalog

// The stream options of an envelope (CREATE STREAM ... WITH (envelope =
// 'upsert' | 'debezium', key = 'a, b')). A stream with an envelope is
// stored as a table (Kind KindTable) whose rows its subject's messages
// change: its pipeline keeps the current row per key, and views read it
// as they read a table. Only its messages write it.
const (
	OptEnvelope = "envelope"
	OptKey      = "key"

	EnvelopeUpsert   = "upsert"
	EnvelopeDebezium = "debezium"
)

// Envelope returns the envelope of a stream declared with one ("upsert"
// or "debezium"), or "" for any other object.
func (d *Descriptor) Envelope() string {
	if d.Kind != KindTable && d.Kind != KindStream {
		return ""
	}
	return d.Options[OptEnvelope]
}
