package exec

import (
	"bytes"
	"errors"
	"fmt"

	json "github.com/goccy/go-json"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/sqlerr"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// A stream with an envelope (catalog.OptEnvelope) is read by the pipeline
// of the table it is stored as. Its decoder turns each message into rows
// for upsertOp, which turns them into the table's changes:
//
//   - an inserted row replaces the row under its key (or adds it);
//   - a deleted row is a tombstone: the row under its key goes (only the
//     key columns of a tombstone are read);
//   - a deleted row of no columns removes every row (a Debezium truncate).
//
// Upsert messages are rows in the stream's format; an empty message (or a
// JSON null) is a tombstone, whose key must then come from the message's
// metadata (INCLUDE subject_token n or header: key columns of the
// payload cannot name a key without a payload). Debezium messages are
// change events as Debezium Server publishes them, with or without the
// {"schema": ..., "payload": ...} wrapper: c and r insert after, u
// replaces by after's key (and deletes before's key when the update
// changed the key), d deletes before's key, t removes every row; an
// empty message (Debezium's tombstone after a delete) changes nothing;
// anything else (a schema change event, a heartbeat) is skipped and
// counted as a malformed message is.

// infoDecoder is a messageDecoder that also reads the message's metadata
// (subject, headers) into the rows it decodes.
type infoDecoder interface {
	messageDecoder
	decodeWithInfo(data []byte, info *broker.MsgInfo, c *Chunk) error
	// hasMetadata reports whether it reads any (else info is nil).
	hasMetadata() bool
}

// envelopeDecoder decodes the messages of a stream with an envelope.
type envelopeDecoder struct {
	debezium bool
	rows     *RowDecoder
	key      []int
	// keyMeta: every key column is an INCLUDE column, so a tombstone
	// without payload still names its key.
	keyMeta bool
	names   []string // column names, for errors

	// schemaRaw is the schema part of the newest Debezium event that had
	// one, and schemaConv its fields' conversions (envelope_debezium.go).
	schemaRaw  []byte
	schemaConv map[string]dbzConv
}

// newEnvelopeDecoder builds the decoder of stream d (stored as a table)
// whose columns are read as rows does and whose key columns are key.
func newEnvelopeDecoder(d *catalog.Descriptor, rows *RowDecoder, key []int) *envelopeDecoder {
	ed := &envelopeDecoder{debezium: d.Envelope() == catalog.EnvelopeDebezium, rows: rows, key: key, keyMeta: len(key) > 0}
	meta := map[int]bool{}
	for _, mc := range rows.meta {
		meta[mc.col] = true
	}
	for _, k := range key {
		ed.keyMeta = ed.keyMeta && meta[k]
	}
	for _, c := range rows.cols {
		ed.names = append(ed.names, c.Name)
	}
	return ed
}

func (d *envelopeDecoder) hasMetadata() bool { return d.rows.HasMetadata() }

func (d *envelopeDecoder) decodeInto(data []byte, c *Chunk) error {
	return d.decodeWithInfo(data, nil, c)
}

// isTombstone reports whether data is an empty message or a JSON null.
func isTombstone(data []byte) bool {
	data = bytes.TrimSpace(data)
	return len(data) == 0 || string(data) == "null"
}

func (d *envelopeDecoder) decodeWithInfo(data []byte, info *broker.MsgInfo, c *Chunk) error {
	n := c.Len()
	var err error
	if d.debezium {
		err = d.debeziumEvent(data, info, c)
	} else {
		err = d.upsert(data, info, c)
	}
	if err != nil {
		c.Rows, c.Signs = c.Rows[:n], c.Signs[:n]
	}
	return err
}

func (d *envelopeDecoder) upsert(data []byte, info *broker.MsgInfo, c *Chunk) error {
	if isTombstone(data) {
		if !d.keyMeta {
			return sqlerr.New(sqlerr.InvalidParameterValue, "an empty message (a tombstone) names no key: the key columns are read from the payload")
		}
		return d.keep(nil, info, c, Delete)
	}
	return d.keep(data, info, c, Insert)
}

// keep decodes data (nil: no payload) as a row with sign, fills its
// metadata and checks its key.
func (d *envelopeDecoder) keep(data []byte, info *broker.MsgInfo, c *Chunk, sign int8) error {
	row := c.newRow(len(d.rows.cols))
	if data != nil {
		if err := d.rows.decodeRow(data, row); err != nil {
			return err
		}
	}
	if info != nil {
		d.rows.FillMetadata(row, info)
	}
	for _, k := range d.key {
		if row[k].IsNull() {
			return sqlerr.New(sqlerr.NotNullViolation, "key column %q is null or missing", d.names[k])
		}
	}
	c.keepRow(row, sign)
	return nil
}

// debeziumJSON is a Debezium change event, or its wrapper.
type debeziumJSON struct {
	Schema  json.RawMessage `json:"schema"`
	Payload json.RawMessage `json:"payload"`
	Before  json.RawMessage `json:"before"`
	After   json.RawMessage `json:"after"`
	Op      *string         `json:"op"`
	DDL     *string         `json:"ddl"`
}

var errDebeziumNotChange = errors.New("not a Debezium change event")

func (d *envelopeDecoder) debeziumEvent(data []byte, info *broker.MsgInfo, c *Chunk) error {
	if isTombstone(data) {
		return nil // the tombstone after a delete: the delete did it
	}
	var ev debeziumJSON
	if err := json.Unmarshal(data, &ev); err != nil {
		return sqlerr.New(sqlerr.InvalidTextRepresentation, "not a Debezium change event (a JSON object with before, after and op): %v", err)
	}
	schema := ev.Schema
	if ev.Op == nil && len(ev.Payload) > 0 {
		if isTombstone(ev.Payload) {
			return nil
		}
		ev = debeziumJSON{}
		if err := json.Unmarshal(data, &struct {
			Payload *debeziumJSON `json:"payload"`
		}{&ev}); err != nil {
			return sqlerr.New(sqlerr.InvalidTextRepresentation, "not a Debezium change event: its payload: %v", err)
		}
	}
	if ev.Op == nil {
		if ev.DDL != nil {
			return sqlerr.New(sqlerr.InvalidParameterValue, "%v: a schema change event (ddl %q), skipped: the stream keeps the columns it was created with", errDebeziumNotChange, clip(*ev.DDL, 80))
		}
		return sqlerr.New(sqlerr.InvalidParameterValue, "%v: it has no op (a schema change or heartbeat event), skipped", errDebeziumNotChange)
	}
	if len(schema) > 0 && !isTombstone(schema) {
		conv, err := d.debeziumConversions(schema)
		if err != nil {
			return err
		}
		if ev.Before, err = debeziumRow(ev.Before, conv); err != nil {
			return err
		}
		if ev.After, err = debeziumRow(ev.After, conv); err != nil {
			return err
		}
	}
	has := func(raw json.RawMessage) bool { return len(raw) > 0 && !isTombstone(raw) }
	switch *ev.Op {
	case "c", "r":
		if !has(ev.After) {
			return sqlerr.New(sqlerr.InvalidParameterValue, "Debezium event op %q has no after", *ev.Op)
		}
		return d.keep(ev.After, info, c, Insert)
	case "u":
		if !has(ev.After) {
			return sqlerr.New(sqlerr.InvalidParameterValue, "Debezium event op \"u\" has no after")
		}
		if has(ev.Before) {
			if err := d.keep(ev.Before, info, c, Delete); err != nil {
				return fmt.Errorf("before: %w", err)
			}
			if err := d.keep(ev.After, info, c, Insert); err != nil {
				return fmt.Errorf("after: %w", err)
			}
			// A tombstone of the key after keeps removes nothing the
			// insert does not replace: drop it unless the key changed.
			i := c.Len() - 2
			if sameKey(d.key, c.Rows[i], c.Rows[i+1]) {
				c.Rows = append(c.Rows[:i], c.Rows[i+1])
				c.Signs = append(c.Signs[:i], c.Signs[i+1])
			}
			return nil
		}
		return d.keep(ev.After, info, c, Insert)
	case "d":
		if !has(ev.Before) {
			return sqlerr.New(sqlerr.InvalidParameterValue, "Debezium event op \"d\" has no before (the deleted row's key)")
		}
		return d.keep(ev.Before, info, c, Delete)
	case "t":
		c.Append(types.Row{}, Delete)
		return nil
	}
	return sqlerr.New(sqlerr.InvalidParameterValue, "Debezium event op %q is not a row change (c, r, u, d or t), skipped", *ev.Op)
}

// sameKey reports whether rows a and b have equal key columns key.
func sameKey(key []int, a, b types.Row) bool {
	var ka, kb []byte
	for _, k := range key {
		ka = keyenc.Append(ka, a[k])
		kb = keyenc.Append(kb, b[k])
	}
	return bytes.Equal(ka, kb)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
