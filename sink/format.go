package sink

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Sinks in format 'protobuf' or 'avro' publish one message per change of
// the changelog envelope: the message is the row encoded with the sink's
// schema, and the header OpHeader says whether the row was inserted ("+")
// or deleted ("-"), as "op" does in a JSON changelog message. The
// changes of an entry go out in the JSON changelog's order (deletions
// first), so a consumer that keeps a count per row rebuilds the view.
//
// Every column of the view must have a field of its name in the schema;
// an Avro field must be a union with "null" (a view's columns may be
// NULL), and every Avro field must be a column (the encoder writes the
// record whole). A Protobuf field without a column, and a column that is
// NULL, is left unset. Timestamps 'infinity' and '-infinity' are written
// as int64's greatest and least seconds (Protobuf) or microseconds (Avro).

// OpHeader carries the op ("+" or "-") of a Protobuf or Avro sink message.
const OpHeader = "Streamdb-Op"

// Sink formats besides JSON.
const (
	FormatProtobuf = exec.FormatProtobuf
	FormatAvro     = exec.FormatAvro
)

// RowEncoder encodes rows of a view's columns in a sink's format.
type RowEncoder interface {
	Encode(row types.Row) ([]byte, error)
}

// NewRowEncoder checks schema (a FileDescriptorSet and message name for
// protobuf, Avro's JSON schema for avro) against cols and returns the
// encoder; its errors name the column and field and say what to change.
func NewRowEncoder(format string, schema []byte, message string, cols []types.Column) (RowEncoder, error) {
	// On error the encoder is a nil interface, not a nil pointer in one.
	switch format {
	case FormatProtobuf:
		e, err := newProtoEncoder(schema, message, cols)
		if err != nil {
			return nil, err
		}
		return e, nil
	case FormatAvro:
		e, err := newAvroEncoder(schema, cols)
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "sink format %q has no row encoder", format)
}

func errNoSinkField(col types.Column, what string, fields []string) error {
	return sqlerr.New(sqlerr.UndefinedColumn, "column %q of the view has no field of its name in the %s", col.Name, what).
		WithHint("Add a field %q to the schema (its fields are: %s), or rename the column in the view.", col.Name, strings.Join(fields, ", "))
}

func errSinkFieldType(col types.Column, field, kind, want string) error {
	return sqlerr.New(sqlerr.DatatypeMismatch, "column %q (%s) cannot be written to field %q of type %s", col.Name, strings.ToLower(col.Type.String()), field, kind).
		WithHint("Declare the field as %s, or cast the column in the view.", want)
}

// sinkWant names the schema types a column of type t is written as.
func sinkWant(t types.Type, avroNames bool) string {
	switch t {
	case types.Bool:
		return map[bool]string{false: "bool", true: "boolean"}[avroNames]
	case types.Int2, types.Int4:
		return map[bool]string{false: "int32, sint32, sfixed32, int64, sint64 or sfixed64", true: "int or long"}[avroNames]
	case types.Int8:
		return map[bool]string{false: "int64, sint64 or sfixed64", true: "long"}[avroNames]
	case types.Float4:
		return "float or double"
	case types.Float8:
		return "double"
	case types.Bytea:
		return "bytes"
	case types.Timestamp, types.Timestamptz:
		return map[bool]string{false: "google.protobuf.Timestamp", true: "long with logicalType timestamp-micros"}[avroNames]
	}
	return "string"
}

// protoEncoder sets the fields of a dynamic message and marshals it
// deterministically.
type protoEncoder struct {
	md     protoreflect.MessageDescriptor
	cols   []types.Column
	fields []protoreflect.FieldDescriptor // by column
}

func newProtoEncoder(set []byte, message string, cols []types.Column) (*protoEncoder, error) {
	md, err := exec.LoadProtoMessage(set, message)
	if err != nil {
		return nil, err
	}
	e := &protoEncoder{md: md, cols: cols, fields: make([]protoreflect.FieldDescriptor, len(cols))}
	var names []string
	for i := 0; i < md.Fields().Len(); i++ {
		names = append(names, string(md.Fields().Get(i).Name()))
	}
	for i, c := range cols {
		fd := md.Fields().ByName(protoreflect.Name(c.Name))
		if fd == nil {
			return nil, errNoSinkField(c, "Protobuf message "+string(md.FullName()), names)
		}
		kind := fd.Kind().String()
		if fd.Message() != nil {
			kind = string(fd.Message().FullName())
		}
		if fd.IsList() || fd.IsMap() {
			kind = "repeated " + kind
		}
		if fd.IsList() || fd.IsMap() || !protoFits(c.Type, fd) {
			return nil, errSinkFieldType(c, string(fd.Name()), kind, sinkWant(c.Type, false))
		}
		e.fields[i] = fd
	}
	return e, nil
}

func protoFits(t types.Type, fd protoreflect.FieldDescriptor) bool {
	k := fd.Kind()
	switch t {
	case types.Bool:
		return k == protoreflect.BoolKind
	case types.Int2, types.Int4:
		switch k {
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			return true
		}
		fallthrough
	case types.Int8:
		return k == protoreflect.Int64Kind || k == protoreflect.Sint64Kind || k == protoreflect.Sfixed64Kind
	case types.Float4:
		return k == protoreflect.FloatKind || k == protoreflect.DoubleKind
	case types.Float8:
		return k == protoreflect.DoubleKind
	case types.Bytea:
		return k == protoreflect.BytesKind
	case types.Timestamp, types.Timestamptz:
		return k == protoreflect.MessageKind && fd.Message().FullName() == "google.protobuf.Timestamp"
	}
	return k == protoreflect.StringKind
}

func (e *protoEncoder) Encode(row types.Row) ([]byte, error) {
	m := dynamicpb.NewMessage(e.md)
	for i, fd := range e.fields {
		d := row[i]
		if d.IsNull() {
			continue
		}
		var v protoreflect.Value
		switch c := e.cols[i]; c.Type {
		case types.Bool:
			v = protoreflect.ValueOfBool(d.Bool())
		case types.Int2, types.Int4, types.Int8:
			if k := fd.Kind(); k == protoreflect.Int32Kind || k == protoreflect.Sint32Kind || k == protoreflect.Sfixed32Kind {
				v = protoreflect.ValueOfInt32(int32(d.I))
			} else {
				v = protoreflect.ValueOfInt64(d.I)
			}
		case types.Float4, types.Float8:
			if fd.Kind() == protoreflect.FloatKind {
				v = protoreflect.ValueOfFloat32(float32(d.Float()))
			} else {
				v = protoreflect.ValueOfFloat64(d.Float())
			}
		case types.Bytea:
			v = protoreflect.ValueOfBytes([]byte(d.S))
		case types.Timestamp, types.Timestamptz:
			// The infinities are the extreme seconds, as Avro's are the
			// extreme microseconds: a value no finite timestamp has.
			var sec int64
			var nanos int32
			switch d.I {
			case types.TimestampInfinity:
				sec = math.MaxInt64
			case types.TimestampNegInfinity:
				sec = math.MinInt64
			default:
				t := d.Time()
				sec, nanos = t.Unix(), int32(t.Nanosecond())
			}
			ts := dynamicpb.NewMessage(fd.Message())
			ts.Set(fd.Message().Fields().ByName("seconds"), protoreflect.ValueOfInt64(sec))
			ts.Set(fd.Message().Fields().ByName("nanos"), protoreflect.ValueOfInt32(nanos))
			v = protoreflect.ValueOfMessage(ts)
		default:
			v = protoreflect.ValueOfString(types.FormatText(d, c.Type))
		}
		m.Set(fd, v)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// avroEncoder writes Avro's binary encoding of the record: each field in
// the schema's order, as the union's branch index and the value.
type avroEncoder struct {
	cols   []types.Column
	order  []int // column of each field, in the schema's order
	nulls  []int // index of "null" in each field's union
	values []avro.Type
	float  []bool
}

func newAvroEncoder(text []byte, cols []types.Column) (*avroEncoder, error) {
	rec, err := exec.ParseAvroSchema(text)
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	var names []string
	for i, f := range rec.Fields() {
		byName[f.Name()] = i
		names = append(names, f.Name())
	}
	e := &avroEncoder{cols: cols, order: make([]int, len(rec.Fields())), nulls: make([]int, len(rec.Fields())), values: make([]avro.Type, len(rec.Fields()))}
	for i := range e.order {
		e.order[i] = -1
	}
	for j, c := range cols {
		i, ok := byName[c.Name]
		if !ok {
			return nil, errNoSinkField(c, "Avro record "+rec.FullName(), names)
		}
		f := rec.Fields()[i]
		u, ok := f.Type().(*avro.UnionSchema)
		var value avro.Schema
		if ok && len(u.Types()) == 2 {
			for k, s := range u.Types() {
				if s.Type() == avro.Null {
					e.nulls[i] = k
				} else {
					value = s
				}
			}
		}
		if value == nil {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "field %q of the Avro record is %s, not a union with \"null\"", f.Name(), f.Type().String()).
				WithHint("A view's column may be NULL: declare the field as [\"null\", %s].", f.Type().String())
		}
		if !avroFits(c.Type, value) {
			return nil, errSinkFieldType(c, f.Name(), value.String(), sinkWant(c.Type, true))
		}
		e.order[i], e.values[i] = j, value.Type()
	}
	for i, j := range e.order {
		if j < 0 {
			f := rec.Fields()[i]
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "field %q of the Avro record has no column of its name in the view", f.Name()).
				WithHint("Remove the field from the schema, or add a column %q to the view.", f.Name())
		}
	}
	return e, nil
}

func avroFits(t types.Type, s avro.Schema) bool {
	lt := ""
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		lt = string(l.Logical().Type())
	}
	switch t {
	case types.Bool:
		return s.Type() == avro.Boolean
	case types.Int2, types.Int4:
		return (s.Type() == avro.Int || s.Type() == avro.Long) && lt == ""
	case types.Int8:
		return s.Type() == avro.Long && lt == ""
	case types.Float4:
		return s.Type() == avro.Float || s.Type() == avro.Double
	case types.Float8:
		return s.Type() == avro.Double
	case types.Bytea:
		return s.Type() == avro.Bytes && lt == ""
	case types.Timestamp, types.Timestamptz:
		return s.Type() == avro.Long && lt == string(avro.TimestampMicros)
	}
	return s.Type() == avro.String && lt == ""
}

func (e *avroEncoder) Encode(row types.Row) ([]byte, error) {
	buf := make([]byte, 0, 64)
	for i, j := range e.order {
		d := row[j]
		if d.IsNull() {
			buf = binary.AppendVarint(buf, int64(e.nulls[i]))
			continue
		}
		buf = binary.AppendVarint(buf, int64(1-e.nulls[i]))
		switch c := e.cols[j]; c.Type {
		case types.Bool:
			buf = append(buf, byte(d.I))
		case types.Int2, types.Int4, types.Int8:
			buf = binary.AppendVarint(buf, d.I)
		case types.Float4, types.Float8:
			if e.values[i] == avro.Float {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(d.Float())))
			} else {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(d.Float()))
			}
		case types.Bytea:
			buf = binary.AppendVarint(buf, int64(len(d.S)))
			buf = append(buf, d.S...)
		case types.Timestamp, types.Timestamptz:
			us, ok := types.UnixMicros(d.I) // the infinities as int64's extremes
			if !ok {
				return nil, fmt.Errorf("column %q: %s has no Avro timestamp-micros", c.Name, types.FormatText(d, c.Type))
			}
			buf = binary.AppendVarint(buf, us)
		default:
			s := types.FormatText(d, c.Type)
			buf = binary.AppendVarint(buf, int64(len(s)))
			buf = append(buf, s...)
		}
	}
	return buf, nil
}
