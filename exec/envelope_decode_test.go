package exec

import (
	"fmt"
	"strings"
	"testing"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/types"
)

// TestEnvelopeDecoder: the rows each upsert and Debezium message becomes
// for upsertOp (+ an upsert, - a tombstone by key, "truncate"), and the
// messages that are skipped (an error) or change nothing.
func TestEnvelopeDecoder(t *testing.T) {
	cols := []types.Column{{Name: "id", Type: types.Int4}, {Name: "v", Type: types.Text}, {Name: "k", Type: types.Text}}
	decoder := func(env string) *envelopeDecoder {
		d := &catalog.Descriptor{Kind: catalog.KindTable, Options: map[string]string{catalog.OptEnvelope: env}, Columns: catalog.ColumnsFrom(cols)}
		key := []int{0}
		if env == catalog.EnvelopeUpsert {
			d.Columns[2].Metadata = catalog.MetaTokenPrefix + "2"
			key = []int{2}
		}
		return newEnvelopeDecoder(d, NewRowDecoder(cols).WithMetadata(d), key)
	}
	show := func(c *Chunk) string {
		var parts []string
		for i, r := range c.Rows {
			if len(r) == 0 {
				parts = append(parts, "truncate")
				continue
			}
			vals := make([]string, len(r))
			for j, v := range r {
				vals[j] = "NULL"
				if !v.IsNull() {
					vals[j] = types.FormatText(v, cols[j].Type)
				}
			}
			sign := "+"
			if c.Signs[i] < 0 {
				sign = "-"
			}
			parts = append(parts, sign+strings.Join(vals, ","))
		}
		return strings.Join(parts, " ")
	}
	for _, c := range []struct {
		env, subject, msg string
		want              string // "error" for a skipped message
	}{
		{"upsert", "t.a", `{"id": 1, "v": "x", "k": "ignored"}`, "+1,x,a"},
		{"upsert", "t.a", ``, "-NULL,NULL,a"},
		{"upsert", "t.a", ` null `, "-NULL,NULL,a"},
		{"upsert", "t", `{"id": 1}`, "error"}, // no token 2: a NULL key
		{"upsert", "t.a", `{"id": "x"}`, "error"},
		{"debezium", "s", `{"before": null, "after": {"id": 1, "v": "x"}, "op": "c"}`, "+1,x,NULL"},
		{"debezium", "s", `{"before": null, "after": {"id": 1, "v": "x"}, "op": "r"}`, "+1,x,NULL"},
		{"debezium", "s", `{"schema": {"type": "struct"}, "payload": {"before": null, "after": {"id": 2, "v": "y"}, "op": "c"}}`, "+2,y,NULL"},
		{"debezium", "s", `{"before": {"id": 1, "v": "x"}, "after": {"id": 1, "v": "z"}, "op": "u"}`, "+1,z,NULL"},
		{"debezium", "s", `{"before": {"id": 1, "v": "x"}, "after": {"id": 3, "v": "z"}, "op": "u"}`, "-1,x,NULL +3,z,NULL"},
		{"debezium", "s", `{"before": null, "after": {"id": 1, "v": "z"}, "op": "u"}`, "+1,z,NULL"},
		{"debezium", "s", `{"before": {"id": 1, "v": null}, "after": null, "op": "d"}`, "-1,NULL,NULL"},
		{"debezium", "s", `{"before": null, "after": null, "op": "t"}`, "truncate"},
		{"debezium", "s", ``, ""},
		{"debezium", "s", `{"schema": {"type": "struct"}, "payload": null}`, ""},
		{"debezium", "s", `{"source": {}, "ddl": "ALTER TABLE t ADD COLUMN w int", "tableChanges": []}`, "error"},
		{"debezium", "s", `{"ts_ms": 1}`, "error"},
		{"debezium", "s", `{"op": "m", "message": {"prefix": "p"}}`, "error"},
		{"debezium", "s", `{"before": null, "after": null, "op": "d"}`, "error"},
		{"debezium", "s", `{"before": null, "after": {"id": null}, "op": "c"}`, "error"},
		{"debezium", "s", `[1, 2]`, "error"},
	} {
		d := decoder(c.env)
		ch := &Chunk{}
		err := d.decodeWithInfo([]byte(c.msg), &broker.MsgInfo{Subject: c.subject}, ch)
		got := show(ch)
		if err != nil {
			got = "error"
			if ch.Len() != 0 {
				got = fmt.Sprintf("error with %d rows left", ch.Len())
			}
		}
		if got != c.want {
			t.Errorf("%s %s %q: %s (%v), want %s", c.env, c.subject, c.msg, got, err, c.want)
		}
	}
}
