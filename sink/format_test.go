package sink

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"streamdb/sqlerr"
	"streamdb/types"
)

// formatCols and formatRow cover each kind of column the encoders write.
var formatCols = []types.Column{
	{Name: "b", Type: types.Bool}, {Name: "i2", Type: types.Int2}, {Name: "i4", Type: types.Int4},
	{Name: "i8", Type: types.Int8}, {Name: "f4", Type: types.Float4}, {Name: "f8", Type: types.Float8},
	{Name: "raw", Type: types.Bytea}, {Name: "at", Type: types.Timestamptz}, {Name: "s", Type: types.Text},
	{Name: "num", Type: types.Numeric}, {Name: "missing", Type: types.Text},
}

func formatRow() types.Row {
	at := time.Date(2024, 3, 1, 12, 30, 45, 123456000, time.UTC)
	return types.Row{types.NewBool(true), types.NewInt(-7), types.NewInt(-70000), types.NewInt(-1 << 40),
		types.NewFloat(1.5), types.NewFloat(-2.25), types.NewBytes("\x00\xff"), types.NewTime(at),
		types.NewString("héllo"), types.NewDecimal(apd.New(12345, -2)), types.Null}
}

func protoSet(t *testing.T) []byte {
	t.Helper()
	f := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), JsonName: proto.String(name)}
	}
	at := f("at", 8, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE)
	at.TypeName = proto.String(".google.protobuf.Timestamp")
	missing := f("missing", 11, descriptorpb.FieldDescriptorProto_TYPE_STRING)
	missing.Proto3Optional, missing.OneofIndex = proto.Bool(true), proto.Int32(0)
	file := &descriptorpb.FileDescriptorProto{Name: proto.String("t.proto"), Package: proto.String("t"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/timestamp.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("R"), Field: []*descriptorpb.FieldDescriptorProto{
			f("b", 1, descriptorpb.FieldDescriptorProto_TYPE_BOOL), f("i2", 2, descriptorpb.FieldDescriptorProto_TYPE_SINT32),
			f("i4", 3, descriptorpb.FieldDescriptorProto_TYPE_SFIXED32), f("i8", 4, descriptorpb.FieldDescriptorProto_TYPE_SINT64),
			f("f4", 5, descriptorpb.FieldDescriptorProto_TYPE_FLOAT), f("f8", 6, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE),
			f("raw", 7, descriptorpb.FieldDescriptorProto_TYPE_BYTES), at, f("s", 9, descriptorpb.FieldDescriptorProto_TYPE_STRING),
			f("num", 10, descriptorpb.FieldDescriptorProto_TYPE_STRING), missing,
		}, OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("_missing")}}}}}
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(timestamppb.File_google_protobuf_timestamp_proto), file}}
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProtoEncoder: each column kind round-trips through dynamicpb; a
// NULL column leaves its field unset.
func TestProtoEncoder(t *testing.T) {
	set := protoSet(t)
	enc, err := NewRowEncoder(FormatProtobuf, set, "t.R", formatCols)
	if err != nil {
		t.Fatal(err)
	}
	b, err := enc.Encode(formatRow())
	if err != nil {
		t.Fatal(err)
	}
	md := enc.(*protoEncoder).md
	m := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	get := func(name string) protoreflect.Value { return m.Get(md.Fields().ByName(protoreflect.Name(name))) }
	ts := get("at").Message()
	got := []any{get("b").Bool(), get("i2").Int(), get("i4").Int(), get("i8").Int(), get("f4").Float(), get("f8").Float(),
		string(get("raw").Bytes()), ts.Get(ts.Descriptor().Fields().ByName("seconds")).Int(), ts.Get(ts.Descriptor().Fields().ByName("nanos")).Int(),
		get("s").String(), get("num").String(), m.Has(md.Fields().ByName("missing"))}
	want := []any{true, int64(-7), int64(-70000), int64(-1 << 40), 1.5, -2.25, "\x00\xff", int64(1709296245), int64(123456000), "héllo", "123.45", false}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d: got %v, want %v", i, got[i], want[i])
		}
	}
	b2, _ := enc.Encode(formatRow())
	if string(b2) != string(b) {
		t.Errorf("two encodings of one row differ")
	}
	inf := formatRow()
	inf[7] = types.NewTimestamp2000(types.TimestampNegInfinity)
	if b, err = enc.Encode(inf); err != nil {
		t.Fatal(err)
	}
	m = dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	if ts := get("at").Message(); ts.Get(ts.Descriptor().Fields().ByName("seconds")).Int() != math.MinInt64 {
		t.Errorf("-infinity: seconds %d", ts.Get(ts.Descriptor().Fields().ByName("seconds")).Int())
	}
}

const formatAvro = `{"type": "record", "name": "R", "fields": [
	{"name": "b", "type": ["null", "boolean"]}, {"name": "i2", "type": ["int", "null"]},
	{"name": "i4", "type": ["null", "long"]}, {"name": "i8", "type": ["null", "long"]},
	{"name": "f4", "type": ["null", "float"]}, {"name": "f8", "type": ["null", "double"]},
	{"name": "raw", "type": ["null", "bytes"]},
	{"name": "at", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
	{"name": "s", "type": ["null", "string"]}, {"name": "num", "type": ["null", "string"]},
	{"name": "missing", "type": ["null", "string"]}]}`

// TestAvroEncoder: each column kind round-trips through hamba's decoder,
// whichever branch of the union "null" is.
func TestAvroEncoder(t *testing.T) {
	enc, err := NewRowEncoder(FormatAvro, []byte(formatAvro), "", formatCols)
	if err != nil {
		t.Fatal(err)
	}
	b, err := enc.Encode(formatRow())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := avro.Unmarshal(avro.MustParse(formatAvro), b, &m); err != nil {
		t.Fatal(err)
	}
	val := func(name string) any {
		if u, ok := m[name].(map[string]any); ok {
			for _, v := range u {
				return v
			}
		}
		return m[name]
	}
	at := time.Date(2024, 3, 1, 12, 30, 45, 123456000, time.UTC)
	want := map[string]any{"b": true, "i2": -7, "i4": int64(-70000), "i8": int64(-1 << 40), "f4": float32(1.5),
		"f8": -2.25, "s": "héllo", "num": "123.45", "missing": nil}
	for k, w := range want {
		if g := val(k); g != w {
			t.Errorf("%s: got %#v, want %#v", k, g, w)
		}
	}
	if g := val("raw").([]byte); string(g) != "\x00\xff" {
		t.Errorf("raw: got %q", g)
	}
	if g := val("at").(time.Time); !g.Equal(at) {
		t.Errorf("at: got %v, want %v", g, at)
	}
	inf := formatRow()
	inf[7] = types.NewTimestamp2000(types.TimestampInfinity)
	if b, err = enc.Encode(inf); err != nil {
		t.Fatal(err)
	}
	// The field is the union's branch index (2: "long" is branch 1) and
	// the zigzag varint of math.MaxInt64.
	if want := binary.AppendVarint([]byte{2}, math.MaxInt64); !strings.Contains(string(b), string(want)) {
		t.Errorf("infinity: %x does not hold %x", b, want)
	}
}

// TestEncoderErrors: schemas that do not fit the columns are refused with
// a SQLSTATE and a message naming the column and the field.
func TestEncoderErrors(t *testing.T) {
	set := protoSet(t)
	for _, c := range []struct {
		format, schema, message string
		cols                    []types.Column
		code, says              string
	}{
		{FormatProtobuf, string(set), "t.R", []types.Column{{Name: "nope", Type: types.Int8}}, sqlerr.UndefinedColumn, `column "nope" of the view has no field of its name in the Protobuf message t.R`},
		{FormatProtobuf, string(set), "t.R", []types.Column{{Name: "i2", Type: types.Int8}}, sqlerr.DatatypeMismatch, `column "i2" (bigint) cannot be written to field "i2" of type sint32`},
		{FormatProtobuf, string(set), "t.R", []types.Column{{Name: "at", Type: types.Text}}, sqlerr.DatatypeMismatch, `field "at" of type google.protobuf.Timestamp`},
		{FormatProtobuf, string(set), "t.R", []types.Column{{Name: "f4", Type: types.Float8}}, sqlerr.DatatypeMismatch, `column "f4" (double precision) cannot be written to field "f4" of type float`},
		{FormatAvro, formatAvro, "", formatCols[:3], sqlerr.UndefinedColumn, `field "i8" of the Avro record has no column of its name`},
		{FormatAvro, `{"type": "record", "name": "R", "fields": [{"name": "s", "type": ["null", "long"]}]}`, "", []types.Column{{Name: "s", Type: types.Text}}, sqlerr.DatatypeMismatch, `column "s" (text) cannot be written to field "s"`},
		{FormatAvro, `{"type": "record", "name": "R", "fields": [{"name": "s", "type": ["null", "long", "string"]}]}`, "", []types.Column{{Name: "s", Type: types.Text}}, sqlerr.DatatypeMismatch, `not a union with "null"`},
	} {
		_, err := NewRowEncoder(c.format, []byte(c.schema), c.message, c.cols)
		var e *sqlerr.Error
		if !errors.As(err, &e) || e.Code != c.code || !strings.Contains(e.Error(), c.says) {
			t.Errorf("%s %v: got %v, want %s %q", c.format, c.cols, err, c.code, c.says)
		}
	}
}
