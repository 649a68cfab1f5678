package exec

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protowire"

	"streamdb/catalog"
	"streamdb/tests/testutil"
	"streamdb/types"
)

// orderStream returns the descriptor of a stream of testutil's order
// events in format (json, protobuf or avro), with extra columns.
func orderStream(t testing.TB, format string, extra ...string) *catalog.Descriptor {
	t.Helper()
	var cols []types.Column
	for _, def := range append(strings.Split(testutil.OrderColumns, ","), extra...) {
		def = strings.TrimSpace(def)
		name, typ, _ := strings.Cut(def, " ")
		name = strings.Trim(name, `"`)
		ty, mod, err := types.ParseWithModifier(typ)
		if err != nil {
			t.Fatalf("%s: %v", def, err)
		}
		cols = append(cols, types.Column{Name: name, Type: ty, Mod: mod})
	}
	d := &catalog.Descriptor{ID: 7, Name: "orders", Kind: catalog.KindStream, Columns: catalog.ColumnsFrom(cols), Format: format, Options: map[string]string{}}
	switch format {
	case FormatProtobuf:
		d.FormatSchema = testutil.ProtoDescriptorSet(t, testutil.OrderProtoFile())
		d.Options["message"] = "shop.Order"
	case FormatAvro:
		d.FormatSchema = []byte(testutil.OrderAvroSchema)
	}
	return d
}

func streamDecoder(t testing.TB, d *catalog.Descriptor) *RowDecoder {
	t.Helper()
	if err := CheckStreamFormat(d); err != nil {
		t.Fatalf("CheckStreamFormat: %v", err)
	}
	cols, missing, err := DescriptorMessageColumns(d)
	if err != nil {
		t.Fatal(err)
	}
	return NewMessageDecoder(cols, missing).WithMetadata(d)
}

func schemaOf(t testing.TB, d *catalog.Descriptor) []types.Column {
	t.Helper()
	cols, err := d.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// TestFormatsDecodeAlike: the same orders as JSON, Protobuf and Avro
// decode to the same rows, every field kind included; the dotted columns
// of the binary formats read the nested customer's fields.
func TestFormatsDecodeAlike(t *testing.T) {
	const seed = 41
	orders := testutil.RandomOrders(rand.New(rand.NewSource(seed)), 1, 300)
	js := orderStream(t, FormatJSON)
	pb := orderStream(t, FormatProtobuf, `"customer.id" bigint`, `"customer.name" text`)
	av := orderStream(t, FormatAvro, `"customer.id" bigint`, `"customer.name" text`)
	jd, pd, ad := streamDecoder(t, js), streamDecoder(t, pb), streamDecoder(t, av)
	for _, o := range orders {
		jr, err := jd.Decode(o.JSON())
		if err != nil {
			t.Fatalf("seed %d: json %s: %v", seed, o.JSON(), err)
		}
		pr, err := pd.Decode(o.Proto(t, pb.FormatSchema))
		if err != nil {
			t.Fatalf("seed %d: protobuf of %s: %v", seed, o.JSON(), err)
		}
		ar, err := ad.Decode(o.Avro(t))
		if err != nil {
			t.Fatalf("seed %d: avro of %s: %v", seed, o.JSON(), err)
		}
		cols := schemaOf(t, js)
		want := rowText(cols, jr)
		n := len(cols)
		if got := rowText(cols, pr[:n]); got != want {
			t.Errorf("seed %d: protobuf row\n got %s\nwant %s", seed, got, want)
		}
		if got := rowText(cols, ar[:n]); got != want {
			t.Errorf("seed %d: avro row\n got %s\nwant %s", seed, got, want)
		}
		for _, r := range []types.Row{pr, ar} {
			if r[n].I != o.Customer.ID || r[n+1].S != o.Customer.Name {
				t.Errorf("seed %d: dotted columns %v %v, want %d %s", seed, r[n], r[n+1], o.Customer.ID, o.Customer.Name)
			}
		}
	}
}

// TestProtobufWire: what the wire may hold beyond what the Go encoder
// writes: unpacked repeated scalars (and packed and unpacked mixed), a
// scalar repeated (the last wins), a Timestamp sent twice (merged), an
// enum number without a name; absent fields read as proto3 gives them;
// malformed messages fail with an error that says so.
func TestProtobufWire(t *testing.T) {
	d := orderStream(t, FormatProtobuf)
	dec := streamDecoder(t, d)
	cols := schemaOf(t, d)
	col := func(row types.Row, name string) string {
		for i, c := range cols {
			if c.Name == name {
				if row[i].IsNull() {
					return "NULL"
				}
				return types.FormatText(row[i], c.Type)
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType) // id = 5, then 7
	b = protowire.AppendVarint(b, 5)
	b = protowire.AppendTag(b, 14, protowire.VarintType) // scores: unpacked 3
	b = protowire.AppendVarint(b, 3)
	b = protowire.AppendTag(b, 14, protowire.BytesType) // packed -1, 0
	packed := protowire.AppendVarint(nil, uint64(1<<64-1))
	packed = protowire.AppendVarint(packed, 0)
	b = protowire.AppendBytes(b, packed)
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 7)
	b = protowire.AppendTag(b, 7, protowire.VarintType) // status 9: no name
	b = protowire.AppendVarint(b, 9)
	ts1 := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1700000000)
	ts2 := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 123456000)
	b = protowire.AppendBytes(protowire.AppendTag(b, 8, protowire.BytesType), ts1)
	b = protowire.AppendBytes(protowire.AppendTag(b, 8, protowire.BytesType), ts2)
	b = protowire.AppendTag(b, 21, protowire.VarintType) // delta: sint64 -3
	b = protowire.AppendVarint(b, protowire.EncodeZigZag(-3))
	b = protowire.AppendTag(b, 99, protowire.BytesType) // unknown field
	b = protowire.AppendBytes(b, []byte("skipped"))
	row, err := dec.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"id": "7", "scores": "{3,-1,0}", "status": "9", "created_at": "2023-11-14 22:13:20.123456+00", "delta": "-3",
		// absent: proto3 defaults, presence NULL, repeated and map empty
		"qty": "0", "paid": "f", "note": "", "weight": "0", "amount": "NULL", "ref": "NULL", "updated_at": "NULL",
		"discount": "NULL", "coupon": "NULL", "priority": "NULL", "tags": "{}", "attrs": "{}", "items": "[]",
		"customer": "NULL", "payload": `\x`,
	} {
		if got := col(row, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for _, c := range []struct {
		msg  []byte
		says string
	}{
		{[]byte{0xff, 0xff}, "not a Protobuf message"},
		{protowire.AppendTag(nil, 6, protowire.BytesType), "not a Protobuf message"},
		{protowire.AppendVarint(protowire.AppendTag(nil, 6, protowire.VarintType), 1), `field "note": wire type 0 does not match`},
		{protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), []byte{0xc3, 0x28}), `note`},
		{protowire.AppendBytes(protowire.AppendTag(nil, 18, protowire.BytesType), []byte("12,5")), `field "amount": invalid input syntax for type numeric`},
	} {
		if _, err := dec.Decode(c.msg); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%x: error %v, want one that says %q", c.msg, err, c.says)
		}
	}
}

// TestAvroFraming: single-object encoding with the schema's fingerprint
// is read; another fingerprint, a Confluent header, bytes after the
// record and a message cut short are errors that say so.
func TestAvroFraming(t *testing.T) {
	d := orderStream(t, FormatAvro)
	dec := streamDecoder(t, d)
	o := testutil.RandomOrders(rand.New(rand.NewSource(1)), 1, 1)[0]
	plain := o.Avro(t)
	schema, err := ParseAvroSchema([]byte(testutil.OrderAvroSchema))
	if err != nil {
		t.Fatal(err)
	}
	fp, _ := schema.FingerprintUsing(avro.CRC64AvroLE)
	single := append(append([]byte{0xc3, 0x01}, fp...), plain...)
	want, err := dec.Decode(plain)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dec.Decode(single)
	if err != nil {
		t.Fatalf("single-object encoding: %v", err)
	}
	if rowText(schemaOf(t, d), got) != rowText(schemaOf(t, d), want) {
		t.Errorf("single-object encoding decodes to %s, want %s", rowText(schemaOf(t, d), got), rowText(schemaOf(t, d), want))
	}
	other := append(append([]byte{0xc3, 0x01}, 1, 2, 3, 4, 5, 6, 7, 8), plain...)
	for _, c := range []struct {
		msg  []byte
		says string
	}{
		{other, "Avro single-object message of another schema"},
		{append([]byte{0, 0, 0, 0, 1}, plain...), "Confluent Schema Registry header"},
		{append(plain[:len(plain):len(plain)], 0), "1 bytes after the record"},
		{plain[:len(plain)-1], "not an Avro binary record of the stream's schema"},
	} {
		if _, err := dec.Decode(c.msg); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("error %v, want one that says %q", err, c.says)
		}
	}
}
