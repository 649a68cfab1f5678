package exec

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"time"

	json "github.com/goccy/go-json"

	"streamdb/sqlerr"
)

// Debezium encodes some column types in its own shapes, which its
// events' "schema" part names per field (Kafka Connect's logical types):
// decimals as base64 big-endian two's-complement unscaled bytes with the
// scale in the schema (decimal.handling.mode "precise", the default) or,
// for a numeric of no fixed scale, as {"scale", "value"}; dates as epoch
// days; timestamps as epoch milliseconds, microseconds or nanoseconds;
// times of day likewise; intervals as microseconds; json as a string;
// bytea as base64. When an event carries its schema, the before and after
// rows are turned into the text forms the stream's JSON decoder reads
// (decimals as JSON numbers, exact) before it decodes them. An event
// without a schema is read as it is.

// dbzConv turns a field's value (not null) into what the decoder reads.
type dbzConv func(raw []byte) ([]byte, error)

// connectSchema is a Kafka Connect schema, as Debezium's JSON carries it.
type connectSchema struct {
	Type       string            `json:"type"`
	Name       string            `json:"name"`
	Field      string            `json:"field"`
	Parameters map[string]string `json:"parameters"`
	Fields     []connectSchema   `json:"fields"`
}

// debeziumConversions returns, by field name, the conversions the row
// fields of an event with schema raw need (nil when none does). The
// schema of a subject's events rarely changes: the last one is kept.
func (d *envelopeDecoder) debeziumConversions(raw []byte) (map[string]dbzConv, error) {
	if d.schemaRaw != nil && bytes.Equal(raw, d.schemaRaw) {
		return d.schemaConv, nil
	}
	var s connectSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "a Debezium event's schema is not a Kafka Connect schema: %v", err)
	}
	var conv map[string]dbzConv
	for _, f := range s.Fields {
		if f.Field != "before" && f.Field != "after" {
			continue
		}
		for _, c := range f.Fields {
			fn, err := connectConversion(c)
			if err != nil {
				return nil, err
			}
			if fn != nil {
				if conv == nil {
					conv = map[string]dbzConv{}
				}
				conv[c.Field] = fn
			}
		}
	}
	d.schemaRaw, d.schemaConv = bytes.Clone(raw), conv
	return conv, nil
}

// connectConversion is the conversion of a field of schema c, or nil.
func connectConversion(c connectSchema) (dbzConv, error) {
	switch c.Name {
	case "org.apache.kafka.connect.data.Decimal":
		scale, err := strconv.Atoi(c.Parameters["scale"])
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "Debezium field %q: a Decimal without its scale parameter", c.Field)
		}
		return func(raw []byte) ([]byte, error) { return decimalOfBase64(raw, scale) }, nil
	case "io.debezium.data.VariableScaleDecimal":
		return variableScaleDecimal, nil
	case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date":
		return epochConv(func(n int64) string { return time.Unix(n*86400, 0).UTC().Format("2006-01-02") }), nil
	case "io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp":
		return epochConv(func(n int64) string { return timestampText(time.UnixMilli(n)) }), nil
	case "io.debezium.time.MicroTimestamp":
		return epochConv(func(n int64) string { return timestampText(time.UnixMicro(n)) }), nil
	case "io.debezium.time.NanoTimestamp":
		return epochConv(func(n int64) string { return timestampText(time.Unix(0, n)) }), nil
	case "io.debezium.time.Time", "org.apache.kafka.connect.data.Time":
		return epochConv(func(n int64) string { return timeOfDayText(n * 1000) }), nil
	case "io.debezium.time.MicroTime":
		return epochConv(timeOfDayText), nil
	case "io.debezium.time.NanoTime":
		return epochConv(func(n int64) string { return timeOfDayText(n / 1000) }), nil
	case "io.debezium.time.MicroDuration":
		return epochConv(func(n int64) string { return strconv.FormatInt(n, 10) + " microseconds" }), nil
	case "io.debezium.data.Json":
		return func(raw []byte) ([]byte, error) {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("a Debezium Json value is not a string: %w", err)
			}
			return []byte(s), nil
		}, nil
	case "":
		if c.Type == "bytes" {
			return func(raw []byte) ([]byte, error) {
				b, err := base64String(raw)
				if err != nil {
					return nil, err
				}
				return json.Marshal(`\x` + hex.EncodeToString(b))
			}, nil
		}
	}
	return nil, nil
}

func base64String(raw []byte) ([]byte, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a base64 string: %w", err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	return b, nil
}

// decimalOfBase64 reads a Connect Decimal (base64 of the big-endian
// two's-complement unscaled value) as a JSON number of scale digits.
func decimalOfBase64(raw []byte, scale int) ([]byte, error) {
	b, err := base64String(raw)
	if err != nil {
		return nil, fmt.Errorf("a Debezium decimal is %w", err)
	}
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return []byte(scaledText(n, scale)), nil
}

// scaledText is unscaled × 10^-scale in decimal.
func scaledText(n *big.Int, scale int) string {
	if scale <= 0 {
		return new(big.Int).Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)).String()
	}
	digits := new(big.Int).Abs(n).String()
	for len(digits) <= scale {
		digits = "0" + digits
	}
	sign := ""
	if n.Sign() < 0 {
		sign = "-"
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}

// variableScaleDecimal reads {"scale": s, "value": base64}.
func variableScaleDecimal(raw []byte) ([]byte, error) {
	var v struct {
		Scale *int            `json:"scale"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Scale == nil || len(v.Value) == 0 {
		return nil, fmt.Errorf("a Debezium VariableScaleDecimal is not {\"scale\": n, \"value\": base64}")
	}
	return decimalOfBase64(v.Value, *v.Scale)
}

// epochConv reads an integer and writes text(n) as a JSON string.
func epochConv(text func(n int64) string) dbzConv {
	return func(raw []byte) ([]byte, error) {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("a Debezium time value is not an integer: %s", clip(string(raw), 40))
		}
		return strconv.AppendQuote(nil, text(n)), nil
	}
}

func timestampText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.999999") }

// timeOfDayText is a time of day of us microseconds after midnight.
func timeOfDayText(us int64) string {
	return time.UnixMicro(us).UTC().Format("15:04:05.999999")
}

// debeziumRow applies conv to the fields of row (a JSON object).
func debeziumRow(row []byte, conv map[string]dbzConv) ([]byte, error) {
	if len(conv) == 0 || isTombstone(row) {
		return row, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(row, &fields); err != nil {
		return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "a Debezium row is not a JSON object: %v", err)
	}
	for name, v := range fields {
		fn := conv[name]
		if fn == nil {
			continue
		}
		if isTombstone(v) {
			// SQL NULL: the decoder reads a json column's null member as
			// JSON null, and a missing one as NULL (a JSON null is the
			// string "null" in Debezium's Json).
			delete(fields, name)
			continue
		}
		out, err := fn(v)
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "Debezium field %q: %v", name, err)
		}
		fields[name] = out
	}
	// Written by hand, not marshalled: a value's bytes (a json column's
	// text) stay as they are.
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	out := []byte{'{'}
	for i, name := range names {
		if i > 0 {
			out = append(out, ',')
		}
		k, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		out = append(append(append(out, k...), ':'), fields[name]...)
	}
	return append(out, '}'), nil
}
