package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	"github.com/cockroachdb/apd/v3"
	"github.com/hamba/avro/v2"

	"streamdb/sqlerr"
	"streamdb/types"
)

// Avro messages (format = 'avro') are plain Avro binary of the record
// schema stored with the stream, or Avro single-object encoding (the
// two bytes C3 01 and the schema's CRC-64-AVRO fingerprint, then the
// binary), told apart by that header. A message must be exactly one
// record: bytes left over are an error, which is also what a message with
// a Confluent Schema Registry header (a zero byte and a 4-byte schema id)
// gets, with a message that says so.
//
// Values: a union with null is NULL or its other branch; other unions
// their branch's value; enums their symbol; records and maps objects
// (json/jsonb, or dotted column names into records); arrays arrays; the
// logical types date, time-millis/micros, timestamp-millis/micros (and
// local-timestamp-*), decimal and uuid their SQL types (date, time,
// timestamp, numeric, uuid).

// ParseAvroSchema parses an Avro schema (JSON) that must be a record;
// errors say what to change.
func ParseAvroSchema(text []byte) (*avro.RecordSchema, error) {
	s, err := avro.ParseBytesWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid Avro schema: %v", err).
			WithHint("Give the schema as Avro's JSON schema text, a record: {\"type\": \"record\", \"name\": \"Order\", \"fields\": [...]}.")
	}
	rec, ok := s.(*avro.RecordSchema)
	if !ok {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "the Avro schema is a %s, not a record", s.Type()).
			WithHint("A stream's messages are records: each field fills the column of its name.")
	}
	return rec, nil
}

type avroCol struct {
	formatColumn
	top     int // index of the top-level field (-1: none, a column added with a default)
	missing *types.Datum
}

type avroDecoder struct {
	schema  *avro.RecordSchema
	fields  []*avro.Field
	fp      []byte // CRC-64-AVRO fingerprint, little-endian, as single-object encoding carries it
	cols    []avroCol
	vals    []any
	scratch []byte
}

func newAvroDecoder(text []byte, cols []formatColumn, missing []*types.Datum, strict bool) (*avroDecoder, error) {
	rec, err := ParseAvroSchema(text)
	if err != nil {
		return nil, err
	}
	d := &avroDecoder{schema: rec, fields: rec.Fields()}
	d.fp, _ = rec.FingerprintUsing(avro.CRC64AvroLE)
	d.vals = make([]any, len(d.fields))
	for _, c := range cols {
		ac := avroCol{formatColumn: c, top: -1}
		if c.col < len(missing) {
			ac.missing = missing[c.col]
		}
		cur := rec
		var s avro.Schema
		for i, part := range c.path {
			var f *avro.Field
			fi := -1
			for j, cf := range cur.Fields() {
				if cf.Name() == part {
					f, fi = cf, j
					break
				}
			}
			if f == nil {
				if ac.missing != nil || !strict {
					s = nil
					break
				}
				var names []string
				for _, cf := range cur.Fields() {
					names = append(names, cf.Name())
				}
				return nil, errNoField(c, "Avro record "+cur.FullName(), names)
			}
			if i == 0 {
				ac.top = fi
			}
			s = avroNonNull(f.Type())
			if i < len(c.path)-1 {
				r, ok := s.(*avro.RecordSchema)
				if !ok {
					return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q reads into field %q, which is not a record", c.name, part).
						WithHint("A dotted column name reads a field of a nested record.")
				}
				cur = r
			}
		}
		if s == nil {
			ac.top = -1
		} else if err := checkAvroFits(c, s); err != nil {
			return nil, err
		}
		d.cols = append(d.cols, ac)
	}
	return d, nil
}

// avroNonNull resolves references and, for a union of null and one
// other type, returns that type.
func avroNonNull(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return avroNonNull(r.Schema())
	}
	if u, ok := s.(*avro.UnionSchema); ok && u.Nullable() && len(u.Types()) == 2 {
		_, i := u.Indices()
		return avroNonNull(u.Types()[i])
	}
	return s
}

func avroLogical(s avro.Schema) avro.LogicalType {
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		return l.Logical().Type()
	}
	return ""
}

// checkAvroFits refuses, at CREATE, a column whose type cannot hold its
// field's values.
func checkAvroFits(c formatColumn, s avro.Schema) error {
	t := c.typ
	if t == types.JSON || t == types.JSONB {
		return nil
	}
	kind := string(s.Type())
	if l := avroLogical(s); l != "" {
		kind += " (" + string(l) + ")"
	}
	switch s.Type() {
	case avro.Record, avro.Map:
		return errFieldType(c, "an Avro "+kind, "jsonb (or read a record's fields with dotted column names)")
	case avro.Array:
		items := avroNonNull(s.(*avro.ArraySchema).Items())
		switch items.Type() {
		case avro.Record, avro.Map, avro.Array:
			return errFieldType(c, "an Avro array of "+string(items.Type()), "jsonb")
		}
		if !t.IsArray() {
			return errFieldType(c, "an Avro array", "an array type or jsonb")
		}
		return nil
	case avro.Union:
		return nil // checked per value
	}
	if t.IsArray() {
		return errFieldType(c, "an Avro "+kind, "a scalar type")
	}
	switch {
	case avroLogical(s) == avro.Decimal:
		if !t.IsNumeric() && !t.IsString() {
			return errFieldType(c, "an Avro "+kind, "numeric")
		}
	case s.Type() == avro.Bytes || s.Type() == avro.Fixed:
		if t != types.Bytea {
			return errFieldType(c, "an Avro "+kind, "bytea")
		}
	case s.Type() == avro.Boolean:
		if t != types.Bool && !t.IsString() {
			return errFieldType(c, "an Avro "+kind, "boolean")
		}
	}
	return nil
}

// avroMagic starts a message in single-object encoding.
var avroMagic = []byte{0xC3, 0x01}

func (d *avroDecoder) decode(data []byte, row types.Row) error {
	body := data
	if len(data) >= 10 && bytes.HasPrefix(data, avroMagic) {
		if !bytes.Equal(data[2:10], d.fp) {
			return fmt.Errorf("Avro single-object message of another schema (fingerprint %x, the stream's is %x)", data[2:10], d.fp)
		}
		body = data[10:]
	}
	r := avroReader{b: body}
	for i, f := range d.fields {
		v, err := r.value(f.Type())
		if err != nil {
			return d.notAvro(data, fmt.Errorf("field %q: %w", f.Name(), err))
		}
		d.vals[i] = v
	}
	if r.p != len(r.b) {
		return d.notAvro(data, fmt.Errorf("%d bytes after the record", len(r.b)-r.p))
	}
	for i := range d.cols {
		c := &d.cols[i]
		if c.top < 0 {
			if c.missing != nil {
				row[c.col] = *c.missing
			}
			continue
		}
		v := lookupPath(d.vals[c.top], c.path[1:])
		dv, err := valueDatum(v, &c.formatColumn, d.scratch)
		if err != nil {
			return fmt.Errorf("field %q: %w", c.name, err)
		}
		row[c.col] = dv
	}
	clear(d.vals)
	return nil
}

func (d *avroDecoder) notAvro(data []byte, err error) error {
	if len(data) >= 5 && data[0] == 0 {
		return fmt.Errorf("not a plain Avro binary record of the stream's schema (%v): it starts like a message with a Confluent Schema Registry header (a 0 byte and a 4-byte schema id), which streamdb does not read; publish plain Avro binary or single-object encoding", err)
	}
	return fmt.Errorf("not an Avro binary record of the stream's schema: %w", err)
}

// avroReader reads Avro's binary encoding.
type avroReader struct {
	b []byte
	p int
}

var errAvroShort = fmt.Errorf("the message ends inside a value")

func (r *avroReader) long() (int64, error) {
	var u uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if r.p >= len(r.b) {
			return 0, errAvroShort
		}
		c := r.b[r.p]
		r.p++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
	return 0, fmt.Errorf("a variable-length integer longer than 10 bytes")
}

func (r *avroReader) int() (int64, error) {
	v, err := r.long()
	if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
		err = fmt.Errorf("int %d out of range", v)
	}
	return v, err
}

func (r *avroReader) bytes() ([]byte, error) {
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(len(r.b)-r.p) {
		return nil, fmt.Errorf("a length of %d bytes where %d are left", n, len(r.b)-r.p)
	}
	b := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return b, nil
}

func (r *avroReader) fixed(n int) ([]byte, error) {
	if n > len(r.b)-r.p {
		return nil, errAvroShort
	}
	b := r.b[r.p : r.p+n]
	r.p += n
	return b, nil
}

// blocks calls fn for each item of an array or map.
func (r *avroReader) blocks(fn func() error) error {
	for {
		n, err := r.long()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n < 0 {
			n = -n
			if _, err := r.long(); err != nil { // the block's size in bytes
				return err
			}
		}
		if n > int64(len(r.b)-r.p) {
			return fmt.Errorf("a block of %d items where %d bytes are left", n, len(r.b)-r.p)
		}
		for range n {
			if err := fn(); err != nil {
				return err
			}
		}
	}
}

// value reads one value of schema s as a generic field value.
func (r *avroReader) value(s avro.Schema) (any, error) {
	logical := avroLogical(s)
	switch s := s.(type) {
	case *avro.RefSchema:
		return r.value(s.Schema())
	case *avro.UnionSchema:
		i, err := r.long()
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(s.Types())) {
			return nil, fmt.Errorf("union branch %d of %d", i, len(s.Types()))
		}
		return r.value(s.Types()[i])
	case *avro.RecordSchema:
		o := &fvObject{}
		for _, f := range s.Fields() {
			v, err := r.value(f.Type())
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name(), err)
			}
			o.keys = append(o.keys, f.Name())
			o.vals = append(o.vals, v)
		}
		return o, nil
	case *avro.EnumSchema:
		i, err := r.int()
		if err != nil {
			return nil, err
		}
		sym, ok := s.Symbol(int(i))
		if !ok {
			return nil, fmt.Errorf("enum index %d of %d symbols", i, len(s.Symbols()))
		}
		return fvEnum{name: sym, num: i}, nil
	case *avro.ArraySchema:
		out := []any{}
		err := r.blocks(func() error {
			v, err := r.value(s.Items())
			out = append(out, v)
			return err
		})
		return out, err
	case *avro.MapSchema:
		o := &fvObject{}
		err := r.blocks(func() error {
			k, err := r.bytes()
			if err != nil {
				return err
			}
			v, err := r.value(s.Values())
			o.keys = append(o.keys, string(k))
			o.vals = append(o.vals, v)
			return err
		})
		return o, err
	case *avro.FixedSchema:
		b, err := r.fixed(s.Size())
		if err != nil {
			return nil, err
		}
		if dl, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			return avroDecimal(b, dl.Scale()), nil
		}
		return bytes.Clone(b), nil
	}
	switch s.Type() {
	case avro.Null:
		return nil, nil
	case avro.Boolean:
		b, err := r.fixed(1)
		if err != nil {
			return nil, err
		}
		if b[0] > 1 {
			return nil, fmt.Errorf("boolean byte %d", b[0])
		}
		return b[0] == 1, nil
	case avro.Int:
		v, err := r.int()
		switch logical {
		case avro.Date:
			return fvDate(v), err
		case avro.TimeMillis:
			return fvTimeOfDay(v * 1000), err
		}
		return v, err
	case avro.Long:
		v, err := r.long()
		if err != nil {
			return nil, err
		}
		switch logical {
		case avro.TimestampMillis, avro.LocalTimestampMillis:
			if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
				return nil, types.ErrTimestampRange()
			}
			return fvTime(v * 1000), nil
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			return fvTime(v), nil
		case avro.TimeMicros:
			return fvTimeOfDay(v), nil
		}
		return v, nil
	case avro.Float:
		b, err := r.fixed(4)
		if err != nil {
			return nil, err
		}
		return fvFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
	case avro.Double:
		b, err := r.fixed(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case avro.String:
		b, err := r.bytes()
		return string(b), err
	case avro.Bytes:
		b, err := r.bytes()
		if err != nil {
			return nil, err
		}
		if l, ok := s.(avro.LogicalTypeSchema); ok {
			if dl, ok := l.Logical().(*avro.DecimalLogicalSchema); ok {
				return avroDecimal(b, dl.Scale()), nil
			}
		}
		return bytes.Clone(b), nil
	}
	return nil, fmt.Errorf("unsupported Avro type %s", s.Type())
}

// avroDecimal is the decimal of a big-endian two's-complement unscaled
// integer and a scale.
func avroDecimal(b []byte, scale int) *apd.Decimal {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
	}
	d := new(apd.Decimal)
	d.Coeff.SetMathBigInt(n)
	if n.Sign() < 0 {
		d.Coeff.Neg(&d.Coeff)
		d.Negative = true
	}
	d.Exponent = int32(-scale)
	return d
}
