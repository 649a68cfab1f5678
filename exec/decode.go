package exec

import (
	"bytes"
	"fmt"
	"strconv"

	json "github.com/goccy/go-json"

	"streamdb/expr"
	"streamdb/types"
)

// RowDecoder turns one JSON message into a row of a stream's schema. Fields
// map to columns by name; missing fields are NULL; unknown fields are
// ignored. A message that is not a JSON object or whose field does not fit
// its column's type is an error (the source skips and counts it).
type RowDecoder struct {
	cols  []types.Column
	index map[string]int
}

// NewRowDecoder builds a decoder for the given schema.
func NewRowDecoder(cols []types.Column) *RowDecoder {
	d := &RowDecoder{cols: cols, index: make(map[string]int, len(cols))}
	for i, c := range cols {
		d.index[c.Name] = i
	}
	return d
}

// Decode parses data.
func (d *RowDecoder) Decode(data []byte) (types.Row, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	row := make(types.Row, len(d.cols))
	for name, v := range m {
		i, ok := d.index[name]
		if !ok {
			continue
		}
		val, err := jsonToDatum(v, d.cols[i].Type)
		if err == nil {
			val, err = expr.ApplyModifier(val, d.cols[i].Mod, false)
		}
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		row[i] = val
	}
	return row, nil
}

func jsonToDatum(v any, t types.Type) (types.Datum, error) {
	switch x := v.(type) {
	case nil:
		return types.Null, nil
	case bool:
		if t == types.Bool {
			return types.NewBool(x), nil
		}
		if t.IsString() {
			return types.NewString(strconv.FormatBool(x)), nil
		}
	case json.Number:
		switch {
		case t.IsTime():
			ms, err := x.Int64()
			if err != nil {
				return types.Null, fmt.Errorf("%s is not epoch milliseconds", x)
			}
			return types.NewTimestampMicros(ms * 1000), nil
		case t.IsString():
			return types.NewString(x.String()), nil
		case t.IsNumeric():
			return types.ParseText(x.String(), t)
		}
	case string:
		if t == types.Unknown || t.IsString() {
			return types.NewString(x), nil
		}
		return types.ParseText(x, t)
	}
	return types.Null, fmt.Errorf("JSON %T does not fit type %s", v, t)
}

// EncodeJSON renders a row as the JSON object that Decode reads back
// (timestamps as 'YYYY-MM-DD HH:MM:SS.ffffff' text, numerics exact).
func EncodeJSON(cols []types.Column, row types.Row) ([]byte, error) {
	buf := make([]byte, 0, 128)
	buf = append(buf, '{')
	for i, c := range cols {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendQuote(buf, c.Name)
		buf = append(buf, ':')
		d := row[i]
		switch {
		case d.IsNull():
			buf = append(buf, "null"...)
		case d.K == types.KindBool:
			buf = strconv.AppendBool(buf, d.Bool())
		case d.K == types.KindInt || d.K == types.KindDecimal:
			buf = append(buf, types.FormatText(d, c.Type)...)
		case d.K == types.KindFloat:
			s := types.FormatText(d, c.Type)
			if _, err := strconv.ParseFloat(s, 64); err != nil || s == "NaN" || s == "Infinity" || s == "-Infinity" {
				buf = strconv.AppendQuote(buf, s)
			} else {
				buf = append(buf, s...)
			}
		default:
			b, err := json.Marshal(types.FormatText(d, c.Type))
			if err != nil {
				return nil, err
			}
			buf = append(buf, b...)
		}
	}
	return append(buf, '}'), nil
}
