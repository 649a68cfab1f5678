package exec

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Streams whose messages are not JSON (format = 'protobuf' or 'avro')
// decode with a formatDecoder built from the schema stored with the stream
// (catalog.Descriptor.FormatSchema), which fills the row's columns from
// the message's fields. The RowDecoder around it still does what does not
// depend on the format: defaults of added columns, generated columns and
// INCLUDE columns.
//
// Columns match fields by name. A dotted column name ("customer.id")
// reads a field of a nested message (record); a whole nested message goes
// to a json or jsonb column. Each decoder turns field values into the
// generic values below, and valueDatum converts them to the column's type,
// so that both formats convert alike.

// Format names as stored in catalog.Descriptor.Format.
const (
	FormatJSON     = "json"
	FormatProtobuf = "protobuf"
	FormatAvro     = "avro"
)

// formatDecoder fills row (one NULL datum per column) from one message.
type formatDecoder interface {
	decode(data []byte, row types.Row) error
}

// Generic field values (besides nil, bool, int64, uint64, float64,
// string, []byte, *apd.Decimal, []any):
type (
	fvFloat32   float32 // printed as the shortest float32 text
	fvTime      int64   // microseconds since 1970-01-01 00:00:00 UTC
	fvDate      int64   // days since 1970-01-01
	fvTimeOfDay int64   // microseconds since midnight
	// fvEnum is an enum value: its name, or its number when the schema
	// names no value for it.
	fvEnum struct {
		name string
		num  int64
	}
	// fvObject is a nested message, record or map, members in order.
	fvObject struct {
		keys []string
		vals []any
	}
)

// formatColumn is a column a format decoder fills: its index in the row,
// type and the path of field names its name gives.
type formatColumn struct {
	col  int
	name string
	typ  types.Type
	mod  types.Modifier
	path []string
}

// formatColumns lists the decoder's columns that the message fills: all
// but generated and INCLUDE columns (no longer in d.index).
func (d *RowDecoder) formatColumns() []formatColumn {
	var out []formatColumn
	for i, c := range d.cols {
		if col, ok := d.index[c.Name]; !ok || col != i {
			continue
		}
		out = append(out, formatColumn{col: i, name: c.Name, typ: c.Type, mod: c.Mod, path: strings.Split(c.Name, ".")})
	}
	return out
}

// setFormat makes d decode messages of desc's format (other than JSON).
// The format decoder is built on the first message, once the generated
// and INCLUDE columns are known.
func (d *RowDecoder) setFormat(desc *catalog.Descriptor) {
	if desc.Format == FormatProtobuf || desc.Format == FormatAvro {
		d.fmtDesc = desc
	}
}

// decodeFormat decodes a Protobuf or Avro message into row.
func (d *RowDecoder) decodeFormat(data []byte, row types.Row) error {
	if d.fmtDec == nil {
		dec, err := newFormatDecoder(d.fmtDesc, d.formatColumns(), d.missing, false)
		if err != nil {
			dec = failingDecoder{err}
		}
		d.fmtDec = dec
	}
	if err := d.fmtDec.decode(data, row); err != nil {
		return err
	}
	return d.generate(row)
}

// failingDecoder refuses every message: the stored schema did not build
// (CREATE STREAM checked it, so only a damaged catalog gets here).
type failingDecoder struct{ err error }

func (f failingDecoder) decode([]byte, types.Row) error { return f.err }

// newFormatDecoder builds the decoder of desc's format for cols. strict
// refuses a column that names no field; otherwise such a column reads
// its default or NULL (CREATE and ALTER check strictly: this is the
// reader's side, which must not stop a stream).
func newFormatDecoder(desc *catalog.Descriptor, cols []formatColumn, missing []*types.Datum, strict bool) (formatDecoder, error) {
	switch desc.Format {
	case FormatProtobuf:
		return newProtoDecoder(desc.FormatSchema, desc.Options["message"], cols, missing, strict)
	case FormatAvro:
		return newAvroDecoder(desc.FormatSchema, cols, missing, strict)
	}
	return nil, fmt.Errorf("format %q has no decoder", desc.Format)
}

// CheckStreamFormat checks that a stream's columns fit the schema of its
// format (protobuf or avro): each column names a field (a dotted name a
// field of a nested message) whose kind its type can hold. The error
// names the column and says what to change.
func CheckStreamFormat(desc *catalog.Descriptor) error {
	if desc.Format != FormatProtobuf && desc.Format != FormatAvro {
		return nil
	}
	cols, missing, err := DescriptorMessageColumns(desc)
	if err != nil {
		return err
	}
	d := NewMessageDecoder(cols, missing).WithMetadata(desc)
	for i, c := range desc.Columns {
		if c.Generated != "" {
			delete(d.index, cols[i].Name)
		}
	}
	_, err = newFormatDecoder(desc, d.formatColumns(), missing, true)
	return err
}

// errFieldType is the error for a field whose kind a column's type cannot
// hold.
func errFieldType(col formatColumn, kind, want string) error {
	return sqlerr.New(sqlerr.DatatypeMismatch, "column %q is %s, but its field is %s", col.name, typeName(col.typ), kind).
		WithHint("Declare column %q as %s.", col.name, want)
}

func errNoField(col formatColumn, what string, fields []string) error {
	return sqlerr.New(sqlerr.UndefinedColumn, "column %q names no field of %s", col.name, what).
		WithHint("Columns match fields by name (a dotted name reads a field of a nested message); the fields are: %s.", strings.Join(fields, ", "))
}

func typeName(t types.Type) string { return strings.ToLower(t.String()) }

// valueDatum converts the field value v to a datum of the column's type.
// scratch is a buffer for number text.
func valueDatum(v any, c *formatColumn, scratch []byte) (types.Datum, error) {
	d, err := valueDatumOf(v, c.typ, scratch)
	if err == nil && !c.mod.IsZero() && !d.IsNull() {
		d, err = expr.ApplyModifier(d, c.mod, false)
	}
	return d, err
}

func valueDatumOf(v any, t types.Type, scratch []byte) (types.Datum, error) {
	if t == types.JSON || t == types.JSONB {
		if v == nil {
			return types.Null, nil
		}
		if t == types.JSONB {
			jv, err := valueJSON(v)
			if err != nil {
				return types.Null, err
			}
			return types.NewJSONB(types.NormalizeJSON(jv)), nil
		}
		buf, err := appendValueJSON(scratch[:0], v)
		if err != nil {
			return types.Null, err
		}
		return types.ParseJSON(string(buf))
	}
	switch v := v.(type) {
	case nil:
		return types.Null, nil
	case bool:
		switch {
		case t == types.Bool:
			return types.NewBool(v), nil
		case t.IsString() || t == types.Unknown:
			return types.NewString(strconv.FormatBool(v)), nil
		}
		return types.Null, fmt.Errorf("a boolean does not fit type %s", typeName(t))
	case int64:
		if t.IsInteger() {
			return types.CheckIntRange(v, t)
		}
		return numberToDatum(strconv.AppendInt(scratch[:0], v, 10), true, t)
	case uint64:
		return numberToDatum(strconv.AppendUint(scratch[:0], v, 10), true, t)
	case float64:
		if t == types.Float8 || t == types.Float4 {
			return floatDatum(v, t), nil
		}
		return floatText(strconv.AppendFloat(scratch[:0], v, 'g', -1, 64), v, t)
	case fvFloat32:
		if t == types.Float4 || t == types.Float8 && (math.IsNaN(float64(v)) || math.IsInf(float64(v), 0)) {
			return floatDatum(float64(v), t), nil
		}
		return floatText(strconv.AppendFloat(scratch[:0], float64(v), 'g', -1, 32), float64(v), t)
	case string:
		if err := checkText(v); err != nil {
			return types.Null, err
		}
		return textToDatum([]byte(v), t)
	case fvEnum:
		if v.name == "" {
			return numberToDatum(strconv.AppendInt(scratch[:0], v.num, 10), true, t)
		}
		if t.IsInteger() {
			return types.CheckIntRange(v.num, t)
		}
		return textToDatum([]byte(v.name), t)
	case []byte:
		if t == types.Bytea {
			return types.NewBytes(string(v)), nil
		}
		return types.Null, fmt.Errorf("bytes do not fit type %s (declare the column bytea)", typeName(t))
	case *apd.Decimal:
		if t == types.Numeric {
			return types.NewDecimal(v), nil
		}
		return textToDatum([]byte(v.Text('f')), t)
	case fvTime:
		// v counts microseconds since 1970, as Protobuf and Avro do.
		us, ok := types.FromUnixMicros(int64(v))
		if !ok || !types.TimestampFinite(us) || !types.ValidTimestamp(us) {
			return types.Null, types.ErrTimestampRange()
		}
		switch {
		case t == types.Timestamp || t == types.Timestamptz:
			return types.NewTimestamp2000(us), nil
		case t == types.Date:
			return types.NewDate(types.DaysOfTimestamp(us)), nil
		case t.IsString() || t == types.Unknown:
			return types.NewString(types.FormatText(types.NewTimestamp2000(us), types.Timestamptz)), nil
		}
		return types.Null, fmt.Errorf("a timestamp does not fit type %s", typeName(t))
	case fvDate:
		switch {
		case t == types.Date:
			return types.NewDate(int64(v)), nil
		case t == types.Timestamp || t == types.Timestamptz:
			days := int64(v)
			if days < types.DaysOfTimestamp(types.MinTimestampMicros) || days > types.DaysOfTimestamp(types.EndTimestampMicros-1) {
				return types.Null, types.ErrTimestampRange()
			}
			return types.NewTimestamp2000(types.TimestampOfDays(days)), nil
		case t.IsString() || t == types.Unknown:
			return types.NewString(types.FormatText(types.NewDate(int64(v)), types.Date)), nil
		}
		return types.Null, fmt.Errorf("a date does not fit type %s", typeName(t))
	case fvTimeOfDay:
		switch {
		case t == types.Time:
			return types.NewTimeOfDay(int64(v)), nil
		case t.IsString() || t == types.Unknown:
			return types.NewString(types.FormatText(types.NewTimeOfDay(int64(v)), types.Time)), nil
		}
		return types.Null, fmt.Errorf("a time of day does not fit type %s", typeName(t))
	case []any:
		if !t.IsArray() {
			return types.Null, fmt.Errorf("a repeated field (array) does not fit type %s (declare the column %s[] or jsonb)", typeName(t), typeName(t))
		}
		parts := make([]types.Datum, len(v))
		for i, e := range v {
			if _, nested := e.([]any); nested {
				return types.Null, fmt.Errorf("an array of arrays does not fit type %s (declare the column jsonb)", typeName(t))
			}
			d, err := valueDatumOf(e, t.Elem(), scratch)
			if err != nil {
				return types.Null, fmt.Errorf("element %d: %w", i+1, err)
			}
			if !d.IsNull() {
				parts[i] = types.NewString(types.FormatText(d, t.Elem()))
			}
		}
		return types.NewString(types.FormatArray(parts)), nil
	case *fvObject:
		return types.Null, fmt.Errorf("a nested message does not fit type %s (declare the column jsonb, or read its fields with dotted column names)", typeName(t))
	}
	return types.Null, fmt.Errorf("a %T value does not fit type %s", v, typeName(t))
}

func floatDatum(f float64, t types.Type) types.Datum {
	if t == types.Float4 {
		f = float64(float32(f))
	}
	return types.NewFloat(f)
}

// floatText converts a float through its text to a type other than the
// float types (numeric, text; integers refuse a fraction).
func floatText(num []byte, f float64, t types.Type) (types.Datum, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return types.ParseText(types.FormatText(types.NewFloat(f), types.Float8), t)
	}
	return numberToDatum(num, false, t)
}

// checkText refuses text PostgreSQL cannot hold (decode_text.go).
func checkText(s string) error {
	if utf8.ValidString(s) {
		if strings.IndexByte(s, 0) >= 0 {
			return errNULText()
		}
		return nil
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return errInvalidUTF8([]byte(s[i:]))
		}
		i += n
	}
	return nil
}

// appendValueJSON appends v as JSON: the Protobuf JSON mapping's forms
// (bytes as base64, timestamps as RFC 3339 text, enums by name, NaN and
// the infinities as strings), 64-bit integers and decimals as numbers.
func appendValueJSON(buf []byte, v any) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case nil:
		buf = append(buf, "null"...)
	case bool:
		buf = strconv.AppendBool(buf, v)
	case int64:
		buf = strconv.AppendInt(buf, v, 10)
	case uint64:
		buf = strconv.AppendUint(buf, v, 10)
	case float64:
		buf = appendJSONFloat(buf, v, 64)
	case fvFloat32:
		buf = appendJSONFloat(buf, float64(v), 32)
	case string:
		if err := checkText(v); err != nil {
			return nil, err
		}
		buf, err = appendJSONString(buf, v, false)
	case fvEnum:
		if v.name == "" {
			buf = strconv.AppendInt(buf, v.num, 10)
		} else {
			buf, err = appendJSONString(buf, v.name, false)
		}
	case []byte:
		buf = append(buf, '"')
		buf = base64.StdEncoding.AppendEncode(buf, v)
		buf = append(buf, '"')
	case *apd.Decimal:
		if v.Form != apd.Finite {
			buf = strconv.AppendQuote(buf, v.String())
		} else {
			buf = append(buf, v.Text('f')...)
		}
	case fvTime:
		buf = append(buf, '"')
		buf = time.UnixMicro(int64(v)).UTC().AppendFormat(buf, time.RFC3339Nano)
		buf = append(buf, '"')
	case fvDate:
		buf = append(buf, '"')
		buf = append(buf, types.FormatText(types.NewDate(int64(v)), types.Date)...)
		buf = append(buf, '"')
	case fvTimeOfDay:
		buf = append(buf, '"')
		buf = append(buf, types.FormatText(types.NewTimeOfDay(int64(v)), types.Time)...)
		buf = append(buf, '"')
	case []any:
		buf = append(buf, '[')
		for i, e := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			if buf, err = appendValueJSON(buf, e); err != nil {
				return nil, err
			}
		}
		buf = append(buf, ']')
	case *fvObject:
		buf = append(buf, '{')
		for i, k := range v.keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			if err := checkText(k); err != nil {
				return nil, err
			}
			if buf, err = appendJSONString(buf, k, false); err != nil {
				return nil, err
			}
			buf = append(buf, ':')
			if buf, err = appendValueJSON(buf, v.vals[i]); err != nil {
				return nil, err
			}
		}
		buf = append(buf, '}')
	default:
		return nil, fmt.Errorf("a %T value has no JSON form", v)
	}
	return buf, err
}

// valueJSON is v as the JSON value appendValueJSON writes, built without
// writing and parsing its text (for jsonb).
func valueJSON(v any) (*types.JSONValue, error) {
	number := func(text []byte) (*types.JSONValue, error) {
		if text[0] == '"' { // NaN and the infinities
			return types.JSONStringValue(string(text[1 : len(text)-1])), nil
		}
		d, err := types.ParseNumeric(string(text))
		if err != nil {
			return nil, err
		}
		return &types.JSONValue{Kind: types.JSONNumber, Num: d.D, Str: types.FormatText(d, types.Numeric)}, nil
	}
	switch v := v.(type) {
	case nil:
		return types.JSONNullValue(), nil
	case bool:
		return types.JSONBoolValue(v), nil
	case int64:
		return types.JSONNumberValue(apd.New(v, 0)), nil
	case uint64:
		return number(strconv.AppendUint(nil, v, 10))
	case float64:
		return number(appendJSONFloat(nil, v, 64))
	case fvFloat32:
		return number(appendJSONFloat(nil, float64(v), 32))
	case string:
		if err := checkText(v); err != nil {
			return nil, err
		}
		return types.JSONStringValue(v), nil
	case fvEnum:
		if v.name == "" {
			return types.JSONNumberValue(apd.New(v.num, 0)), nil
		}
		return types.JSONStringValue(v.name), nil
	case *apd.Decimal:
		if v.Form != apd.Finite {
			return types.JSONStringValue(v.String()), nil
		}
		return types.JSONNumberValue(v), nil
	case []any:
		out := &types.JSONValue{Kind: types.JSONArray, Elems: make([]*types.JSONValue, len(v))}
		for i, e := range v {
			ev, err := valueJSON(e)
			if err != nil {
				return nil, err
			}
			out.Elems[i] = ev
		}
		return out, nil
	case *fvObject:
		out := &types.JSONValue{Kind: types.JSONObject, Keys: make([]string, len(v.keys)), Vals: make([]*types.JSONValue, len(v.keys))}
		for i, k := range v.keys {
			if err := checkText(k); err != nil {
				return nil, err
			}
			ev, err := valueJSON(v.vals[i])
			if err != nil {
				return nil, err
			}
			out.Keys[i], out.Vals[i] = k, ev
		}
		return out, nil
	}
	// bytes, timestamps, dates and times: JSON strings
	buf, err := appendValueJSON(nil, v)
	if err != nil {
		return nil, err
	}
	s, err := strconv.Unquote(string(buf))
	if err != nil {
		return nil, err
	}
	return types.JSONStringValue(s), nil
}

func appendJSONFloat(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(buf, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(buf, `"-Infinity"`...)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, bits)
}

// lookupPath follows the rest of a dotted column's path through nested
// objects; a missing message on the way is NULL.
func lookupPath(v any, path []string) any {
	for _, name := range path {
		o, ok := v.(*fvObject)
		if !ok {
			return nil
		}
		v = nil
		for i, k := range o.keys {
			if k == name {
				v = o.vals[i]
				break
			}
		}
	}
	return v
}
