package testutil

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Stream format fixtures: one order event type as JSON, Protobuf
// (message shop.Order) and Avro (record shop.Order), covering every kind
// of field the formats map, and the SQL columns that read all three alike.

// OrderColumns are the columns of a stream of order events, in any of
// the three formats.
const OrderColumns = `id bigint, qty integer, price double precision, weight real, paid boolean,
	note text, status text, created_at timestamptz, updated_at timestamptz, discount integer,
	coupon text, payload bytea, tags text[], scores integer[], customer jsonb, attrs jsonb,
	items jsonb, amount numeric, ref uuid, ship_date date, delta bigint, priority integer`

// OrderColumnNames are the names of OrderColumns, in order.
var OrderColumnNames = []string{"id", "qty", "price", "weight", "paid", "note", "status", "created_at", "updated_at",
	"discount", "coupon", "payload", "tags", "scores", "customer", "attrs", "items", "amount", "ref", "ship_date",
	"delta", "priority"}

// OrderAvroSchema is the Avro schema of order events.
const OrderAvroSchema = `{"type": "record", "name": "Order", "namespace": "shop", "fields": [
	{"name": "id", "type": "long"},
	{"name": "qty", "type": "int"},
	{"name": "price", "type": "double"},
	{"name": "weight", "type": "float"},
	{"name": "paid", "type": "boolean"},
	{"name": "note", "type": "string"},
	{"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["STATUS_UNKNOWN", "NEW", "PAID", "SHIPPED"]}},
	{"name": "created_at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
	{"name": "updated_at", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
	{"name": "discount", "type": ["null", "int"]},
	{"name": "coupon", "type": ["null", "string"]},
	{"name": "payload", "type": "bytes"},
	{"name": "tags", "type": {"type": "array", "items": "string"}},
	{"name": "scores", "type": {"type": "array", "items": "int"}},
	{"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
		{"name": "id", "type": "long"}, {"name": "name", "type": "string"}, {"name": "tier", "type": "string"}]}},
	{"name": "attrs", "type": {"type": "map", "values": "string"}},
	{"name": "items", "type": {"type": "array", "items": {"type": "record", "name": "Item", "fields": [
		{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}},
	{"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
	{"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
	{"name": "ship_date", "type": {"type": "int", "logicalType": "date"}},
	{"name": "delta", "type": "long"},
	{"name": "priority", "type": ["null", "int"]}
]}`

// OrderProtoFile is shop/order.proto as a descriptor: the proto3 message
// shop.Order with the fields of OrderAvroSchema (amount, ref and
// ship_date as strings; delta a sint64; priority optional).
func OrderProtoFile() *descriptorpb.FileDescriptorProto {
	f := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
		fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum(), JsonName: proto.String(name)}
		if typeName != "" {
			fd.TypeName = proto.String(typeName)
		}
		return fd
	}
	const (
		opt = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		rep = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	)
	priority := f("priority", 22, descriptorpb.FieldDescriptorProto_TYPE_INT32, opt, "")
	priority.Proto3Optional, priority.OneofIndex = proto.Bool(true), proto.Int32(0)
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String("shop/order.proto"), Package: proto.String("shop"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto"},
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Status"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("STATUS_UNKNOWN"), Number: proto.Int32(0)}, {Name: proto.String("NEW"), Number: proto.Int32(1)},
			{Name: proto.String("PAID"), Number: proto.Int32(2)}, {Name: proto.String("SHIPPED"), Number: proto.Int32(3)}}}},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Customer"), Field: []*descriptorpb.FieldDescriptorProto{
				f("id", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, opt, ""),
				f("name", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				f("tier", 3, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, "")}},
			{Name: proto.String("Item"), Field: []*descriptorpb.FieldDescriptorProto{
				f("sku", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				f("qty", 2, descriptorpb.FieldDescriptorProto_TYPE_INT32, opt, "")}},
			{Name: proto.String("Order"), Field: []*descriptorpb.FieldDescriptorProto{
				f("id", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, opt, ""),
				f("qty", 2, descriptorpb.FieldDescriptorProto_TYPE_INT32, opt, ""),
				f("price", 3, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, opt, ""),
				f("weight", 4, descriptorpb.FieldDescriptorProto_TYPE_FLOAT, opt, ""),
				f("paid", 5, descriptorpb.FieldDescriptorProto_TYPE_BOOL, opt, ""),
				f("note", 6, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				f("status", 7, descriptorpb.FieldDescriptorProto_TYPE_ENUM, opt, ".shop.Status"),
				f("created_at", 8, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.Timestamp"),
				f("updated_at", 9, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.Timestamp"),
				f("discount", 10, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.Int32Value"),
				f("coupon", 11, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.StringValue"),
				f("payload", 12, descriptorpb.FieldDescriptorProto_TYPE_BYTES, opt, ""),
				f("tags", 13, descriptorpb.FieldDescriptorProto_TYPE_STRING, rep, ""),
				f("scores", 14, descriptorpb.FieldDescriptorProto_TYPE_INT32, rep, ""),
				f("customer", 15, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".shop.Customer"),
				f("attrs", 16, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".shop.Order.AttrsEntry"),
				f("items", 17, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".shop.Item"),
				f("amount", 18, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				f("ref", 19, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				f("ship_date", 20, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				f("delta", 21, descriptorpb.FieldDescriptorProto_TYPE_SINT64, opt, ""),
				priority,
			},
				NestedType: []*descriptorpb.DescriptorProto{{Name: proto.String("AttrsEntry"),
					Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
					Field: []*descriptorpb.FieldDescriptorProto{
						f("key", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
						f("value", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, "")}}},
				OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("_priority")}},
			},
		},
	}
}

// ProtoDescriptorSet serializes a FileDescriptorSet of files and the
// well-known files they import (timestamp.proto, wrappers.proto), as
// protoc --include_imports --descriptor_set_out writes it.
func ProtoDescriptorSet(t testing.TB, files ...*descriptorpb.FileDescriptorProto) []byte {
	t.Helper()
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(timestamppb.File_google_protobuf_timestamp_proto),
		protodesc.ToFileDescriptorProto(wrapperspb.File_google_protobuf_wrappers_proto),
	}}
	set.File = append(set.File, files...)
	if _, err := protodesc.NewFiles(set); err != nil {
		t.Fatalf("descriptor set: %v", err)
	}
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// protoMessage returns the descriptor of message type name from the
// serialized descriptor set.
func protoMessage(t testing.TB, set []byte, name string) protoreflect.MessageDescriptor {
	t.Helper()
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(set, &fds); err != nil {
		t.Fatal(err)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatal(err)
	}
	return d.(protoreflect.MessageDescriptor)
}

// ProtoFromJSON encodes the Protobuf JSON mapping's text js as a binary
// message of type name from the serialized descriptor set.
func ProtoFromJSON(t testing.TB, set []byte, name, js string) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(protoMessage(t, set, name))
	if err := protojson.Unmarshal([]byte(js), m); err != nil {
		t.Fatalf("protojson %s: %v", js, err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Order is one order event.
type Order struct {
	ID        int64
	Qty       int32
	Price     float64
	Weight    float32
	Paid      bool
	Note      string
	Status    string
	CreatedAt time.Time  // microsecond precision
	UpdatedAt *time.Time // millisecond precision
	Discount  *int32
	Coupon    *string
	Payload   []byte
	Tags      []string
	Scores    []int32
	Customer  OrderCustomer
	Attrs     map[string]string
	Items     []OrderItem
	AmountCts int64 // amount in cents
	Ref       string
	ShipDate  time.Time // a day
	Delta     int64
	Priority  *int32
}

// OrderCustomer is an order's customer.
type OrderCustomer struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Tier string `json:"tier"`
}

// OrderItem is an order's line.
type OrderItem struct {
	SKU string `json:"sku"`
	Qty int32  `json:"qty"`
}

// RandomOrders makes n orders from rng, ids from first on; some leave the
// nullable fields out.
func RandomOrders(rng *rand.Rand, first int64, n int) []Order {
	statuses := []string{"STATUS_UNKNOWN", "NEW", "PAID", "SHIPPED"}
	tiers := []string{"gold", "silver", "bronze"}
	notes := []string{"", "fragile", "gift, wrapped", `say "hi"`, "naïve café", "multi\nline"}
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	out := make([]Order, n)
	for i := range out {
		id := first + int64(i)
		o := Order{
			ID: id, Qty: int32(rng.Intn(20)) - 2, Price: float64(rng.Intn(100000)) / 100, Weight: float32(rng.Intn(100)) / 4,
			Paid: rng.Intn(2) == 0, Note: notes[rng.Intn(len(notes))], Status: statuses[rng.Intn(len(statuses))],
			CreatedAt: base.Add(time.Duration(rng.Int63n(1e6)) * time.Second).Add(time.Duration(rng.Intn(1e6)) * time.Microsecond),
			Payload:   []byte{byte(rng.Intn(256)), 0, byte(id)},
			Customer:  OrderCustomer{ID: int64(rng.Intn(50)), Name: fmt.Sprintf("c%d", rng.Intn(50)), Tier: tiers[rng.Intn(len(tiers))]},
			Attrs:     map[string]string{"src": []string{"web", "app"}[rng.Intn(2)]},
			AmountCts: rng.Int63n(2000000) - 100000,
			Ref:       fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), id),
			ShipDate:  base.AddDate(0, 0, rng.Intn(400)-100).Truncate(24 * time.Hour),
			Delta:     rng.Int63n(2e12) - 1e12,
		}
		for j := rng.Intn(3); j > 0; j-- {
			o.Tags = append(o.Tags, []string{"a", "b c", "d,e", `q"t`}[rng.Intn(4)])
		}
		for j := rng.Intn(4); j > 0; j-- {
			o.Scores = append(o.Scores, int32(rng.Intn(2000)-1000))
		}
		for j := rng.Intn(3); j > 0; j-- {
			o.Items = append(o.Items, OrderItem{SKU: fmt.Sprintf("sku-%d", rng.Intn(9)), Qty: int32(rng.Intn(5))})
		}
		if rng.Intn(3) > 0 {
			u := o.CreatedAt.Add(time.Duration(rng.Intn(1e5)) * time.Millisecond).Truncate(time.Millisecond)
			o.UpdatedAt = &u
		}
		if rng.Intn(2) == 0 {
			d := int32(rng.Intn(50))
			o.Discount = &d
		}
		if rng.Intn(2) == 0 {
			c := fmt.Sprintf("SAVE%d", rng.Intn(30))
			o.Coupon = &c
		}
		if rng.Intn(2) == 0 {
			p := int32(rng.Intn(5))
			o.Priority = &p
		}
		if rng.Intn(4) == 0 {
			o.Attrs["gift"] = "yes"
		}
		out[i] = o
	}
	return out
}

// amountText is the amount as numeric text.
func (o Order) amountText() string {
	r := new(big.Rat).SetFrac(big.NewInt(o.AmountCts), big.NewInt(100))
	return r.FloatString(2)
}

// JSON is the order as the JSON message a format = 'json' stream with
// OrderColumns reads.
func (o Order) JSON() []byte {
	m := o.jsonMap()
	m["payload"] = `\x` + fmt.Sprintf("%x", o.Payload)
	m["amount"] = json.Number(o.amountText())
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func (o Order) jsonMap() map[string]any {
	m := map[string]any{
		"id": o.ID, "qty": o.Qty, "price": o.Price, "weight": o.Weight, "paid": o.Paid, "note": o.Note,
		"status": o.Status, "created_at": o.CreatedAt.Format(time.RFC3339Nano), "customer": o.Customer,
		"attrs": o.Attrs, "ref": o.Ref, "ship_date": o.ShipDate.Format("2006-01-02"), "delta": o.Delta,
	}
	if o.Tags != nil {
		m["tags"] = o.Tags
	} else {
		m["tags"] = []string{}
	}
	if o.Scores != nil {
		m["scores"] = o.Scores
	} else {
		m["scores"] = []int32{}
	}
	if o.Items != nil {
		m["items"] = o.Items
	} else {
		m["items"] = []OrderItem{}
	}
	if o.UpdatedAt != nil {
		m["updated_at"] = o.UpdatedAt.Format(time.RFC3339Nano)
	}
	if o.Discount != nil {
		m["discount"] = *o.Discount
	}
	if o.Coupon != nil {
		m["coupon"] = *o.Coupon
	}
	if o.Priority != nil {
		m["priority"] = *o.Priority
	}
	return m
}

// Proto is the order as a binary shop.Order of set
// (ProtoDescriptorSet(t, OrderProtoFile())).
func (o Order) Proto(t testing.TB, set []byte) []byte {
	t.Helper()
	m := o.jsonMap()
	m["payload"] = base64.StdEncoding.EncodeToString(o.Payload)
	m["amount"] = o.amountText()
	m["id"], m["delta"] = fmt.Sprint(o.ID), fmt.Sprint(o.Delta)
	c := map[string]any{"id": fmt.Sprint(o.Customer.ID), "name": o.Customer.Name, "tier": o.Customer.Tier}
	m["customer"] = c
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return ProtoFromJSON(t, set, "shop.Order", string(b))
}

// Avro is the order as plain Avro binary of OrderAvroSchema.
func (o Order) Avro(t testing.TB) []byte {
	t.Helper()
	schema, err := avro.Parse(OrderAvroSchema)
	if err != nil {
		t.Fatal(err)
	}
	items := []any{}
	for _, it := range o.Items {
		items = append(items, map[string]any{"sku": it.SKU, "qty": int(it.Qty)})
	}
	tags := []any{}
	for _, s := range o.Tags {
		tags = append(tags, s)
	}
	scores := []any{}
	for _, s := range o.Scores {
		scores = append(scores, int(s))
	}
	attrs := map[string]any{}
	for k, v := range o.Attrs {
		attrs[k] = v
	}
	m := map[string]any{
		"id": o.ID, "qty": int(o.Qty), "price": o.Price, "weight": o.Weight, "paid": o.Paid, "note": o.Note,
		"status": o.Status, "created_at": o.CreatedAt, "payload": o.Payload, "tags": tags, "scores": scores,
		"customer": map[string]any{"id": o.Customer.ID, "name": o.Customer.Name, "tier": o.Customer.Tier},
		"attrs":    attrs, "items": items, "amount": new(big.Rat).SetFrac(big.NewInt(o.AmountCts), big.NewInt(100)),
		"ref": o.Ref, "ship_date": o.ShipDate, "delta": o.Delta,
		"updated_at": nil, "discount": nil, "coupon": nil, "priority": nil,
	}
	if o.UpdatedAt != nil {
		m["updated_at"] = *o.UpdatedAt
	}
	if o.Discount != nil {
		m["discount"] = int(*o.Discount)
	}
	if o.Coupon != nil {
		m["coupon"] = *o.Coupon
	}
	if o.Priority != nil {
		m["priority"] = int(*o.Priority)
	}
	b, err := avro.Marshal(schema, m)
	if err != nil {
		t.Fatalf("avro: %v", err)
	}
	return b
}
