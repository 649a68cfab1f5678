package e2e

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"streamdb/tests/testutil"
)

// totalsAvroSchema and totalsProtoFile describe the rows of the view
// totals in TestSinkFormats.
const totalsAvroSchema = `{"type": "record", "name": "Total", "namespace": "shop", "fields": [
	{"name": "k", "type": ["null", "long"]},
	{"name": "total", "type": ["null", "long"]},
	{"name": "label", "type": ["null", "string"]},
	{"name": "last_at", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
	{"name": "mean", "type": ["null", "double"]}
]}`

var totalsCols = []string{"k", "total", "label", "last_at", "mean"}

func totalsProtoFile() *descriptorpb.FileDescriptorProto {
	f := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
		fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), JsonName: proto.String(name)}
		if typeName != "" {
			fd.TypeName = proto.String(typeName)
		}
		return fd
	}
	label, mean := f("label", 3, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""), f("mean", 5, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, "")
	label.Proto3Optional, label.OneofIndex = proto.Bool(true), proto.Int32(0)
	mean.Proto3Optional, mean.OneofIndex = proto.Bool(true), proto.Int32(1)
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String("shop/total.proto"), Package: proto.String("shop"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/timestamp.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Total"), Field: []*descriptorpb.FieldDescriptorProto{
			f("k", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, ""),
			f("total", 2, descriptorpb.FieldDescriptorProto_TYPE_SINT64, ""),
			label,
			f("last_at", 4, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.Timestamp"),
			mean,
			f("unused", 6, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""),
		}, OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("_label")}, {Name: proto.String("_mean")}}}},
	}
}

// TestSinkFormats: sinks in format 'protobuf' and 'avro' publish a view's
// rows and changes, one message per change with its op in Streamdb-Op;
// decoded with the same schema they equal the view and PostgreSQL 15's
// answer over the same data. Bad schemas are refused with SQLSTATEs.
func TestSinkFormats(t *testing.T) {
	const seed = 4811
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	dir := filepath.Join(srv.DataDir, "schemas")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	set := testutil.ProtoDescriptorSet(t, totalsProtoFile())
	if err := os.WriteFile(filepath.Join(dir, "total.pb"), set, 0o644); err != nil {
		t.Fatal(err)
	}
	const view = "SELECT k, sum(v) AS total, max(name) AS label, max(at) AS last_at, avg(v)::float8 AS mean FROM t GROUP BY k"
	for _, c := range []*pgx.Conn{conn, pg} {
		exec(t, c, "SET TimeZone = 'UTC'", "CREATE TABLE t (id int PRIMARY KEY, k int, v int, name text, at timestamp)")
	}
	exec(t, conn, "ALTER SYSTEM SET execution.checkpointing.interval = '100ms'",
		"CREATE MATERIALIZED VIEW totals AS "+view,
		"CREATE SINK s_pb FROM totals INTO 'out.pb' WITH (format = 'protobuf', schema_file = 'total.pb', message = 'shop.Total')",
		"CREATE SINK s_avro FROM totals INTO 'out.avro' WITH (format = 'avro', schema = '"+totalsAvroSchema+"')")

	ids := []int{}
	next := 0
	for round := range 6 {
		var stmts []string
		for range 8 {
			switch {
			case len(ids) == 0 || rng.Intn(3) > 0:
				name := "NULL"
				if rng.Intn(4) > 0 {
					name = fmt.Sprintf("'n%d'", rng.Intn(50))
				}
				stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d, %s, timestamp '2024-03-01 00:00:00' + interval '%d seconds')",
					next, rng.Intn(5), rng.Intn(100)+1, name, rng.Intn(1e6)))
				ids = append(ids, next)
				next++
			case rng.Intn(2) == 0:
				stmts = append(stmts, fmt.Sprintf("UPDATE t SET v = v + %d WHERE id = %d", rng.Intn(10)+1, ids[rng.Intn(len(ids))]))
			default:
				i := rng.Intn(len(ids))
				stmts = append(stmts, fmt.Sprintf("DELETE FROM t WHERE id = %d", ids[i]))
				ids = slices.Delete(ids, i, i+1)
			}
		}
		exec(t, conn, stmts...)
		exec(t, pg, stmts...)
		flush(t, conn)
		want := testutil.SortedRows(t, pg, view)
		if got := testutil.SortedRows(t, conn, "SELECT * FROM totals"); !slices.Equal(got, want) {
			t.Fatalf("seed %d round %d: view %v, PostgreSQL %v", seed, round, got, want)
		}
		for _, s := range []struct {
			subject string
			decode  func([]byte) (string, error)
		}{{"out.pb", testutil.ProtoSinkDecoder(t, set, "shop.Total", totalsCols)}, {"out.avro", testutil.AvroSinkDecoder(t, totalsAvroSchema, totalsCols)}} {
			testutil.Poll(t, 30*time.Second, s.subject+" equals PostgreSQL", func() error {
				f, err := testutil.ReadFormatSink(js, s.subject, s.decode)
				if err != nil {
					return err
				}
				if id := f.DuplicateID(); id != "" {
					t.Fatalf("seed %d: %s published Nats-Msg-Id %s twice", seed, s.subject, id)
				}
				if got := f.Sorted(); !slices.Equal(got, want) {
					return fmt.Errorf("seed %d round %d: consumer has %v, PostgreSQL %v", seed, round, got, want)
				}
				return nil
			})
		}
	}
	if show := textRows(t, conn, "SHOW SINKS"); len(show) != 2 || !strings.Contains(show[0], " avro changelog ") || !strings.Contains(show[1], " protobuf changelog ") {
		t.Fatalf("SHOW SINKS: %q", show)
	}
}

// TestSinkFormatErrors: a Protobuf or Avro sink whose schema does not fit
// the view is refused at CREATE SINK with a SQLSTATE, a message naming
// the column and field, and a hint.
func TestSinkFormatErrors(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	dir := filepath.Join(srv.DataDir, "schemas")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "total.pb"), testutil.ProtoDescriptorSet(t, totalsProtoFile()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "total.avsc"), []byte(totalsAvroSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	exec(t, conn, "CREATE TABLE t (id int PRIMARY KEY, k int, v int, name text, at timestamp)",
		"CREATE MATERIALIZED VIEW totals AS SELECT k, sum(v) AS total, max(name) AS label, max(at) AS last_at, avg(v)::float8 AS mean FROM t GROUP BY k",
		"CREATE MATERIALIZED VIEW extra AS SELECT k, v AS colour FROM t",
		"CREATE MATERIALIZED VIEW wrong AS SELECT k, name AS total FROM t",
		"CREATE MATERIALIZED VIEW narrow AS SELECT k FROM t")
	pb := func(view, file, msg string) string {
		return fmt.Sprintf("CREATE SINK s FROM %s INTO 'out.s' WITH (format = 'protobuf', schema_file = '%s', message = '%s')", view, file, msg)
	}
	av := func(view, schema string) string {
		return fmt.Sprintf("CREATE SINK s FROM %s INTO 'out.s' WITH (format = 'avro', schema = '%s')", view, schema)
	}
	for _, c := range []struct{ sql, code, says string }{
		{pb("totals", "nope.pb", "shop.Total"), "58P01", `schema_file "nope.pb" does not exist`},
		{pb("totals", "../total.pb", "shop.Total"), "42501", "is not a file under the schema directory"},
		{pb("totals", "total.avsc", "shop.Total"), "22023", "not a compiled Protobuf FileDescriptorSet"},
		{pb("totals", "total.pb", "shop.Totl"), "22023", `message "shop.Totl" is not in the Protobuf descriptor set`},
		{pb("extra", "total.pb", "shop.Total"), "42703", `column "colour" of the view has no field of its name in the Protobuf message shop.Total`},
		{pb("wrong", "total.pb", "shop.Total"), "42804", `column "total" (text) cannot be written to field "total" of type sint64`},
		{"CREATE SINK s FROM totals INTO 'out.s' WITH (format = 'protobuf', schema_file = 'total.pb')", "22023", "format 'protobuf' needs the options schema_file and message"},
		{"CREATE SINK s FROM totals INTO 'out.s' WITH (format = 'protobuf', schema = 'x', message = 'shop.Total')", "22023", "format 'protobuf' takes its schema from schema_file"},
		{"CREATE SINK s FROM totals INTO 'out.s' WITH (format = 'protobuf', schema_file = 'total.pb', message = 'shop.Total', envelope = 'upsert')", "0A000", `envelope "upsert" with format "protobuf" is not supported`},
		{"CREATE SINK s FROM totals INTO 'out.s' WITH (format = 'avro')", "22023", "format 'avro' needs one of the options schema"},
		{"CREATE SINK s FROM totals INTO 'out.s' WITH (schema_file = 'total.avsc')", "22023", "are for format 'protobuf' or 'avro', not 'json'"},
		{"CREATE SINK s FROM totals INTO 'out.s' WITH (format = 'xml')", "22023", `invalid value for sink option format: "xml"`},
		{av("totals", `{"type": "record"`), "22023", "invalid Avro schema"},
		{av("extra", totalsAvroSchema), "42703", `column "colour" of the view has no field of its name in the Avro record shop.Total`},
		{av("narrow", totalsAvroSchema), "42703", `field "total" of the Avro record has no column of its name in the view`},
		{av("wrong", totalsAvroSchema), "42804", `column "total" (text) cannot be written to field "total" of type "long"`},
		{av("narrow", `{"type": "record", "name": "N", "fields": [{"name": "k", "type": "long"}]}`), "42804", `field "k" of the Avro record is "long", not a union with "null"`},
	} {
		e := wantCode(t, execErr(t, conn, c.sql), c.code)
		if e != nil && !strings.Contains(e.Message, c.says) {
			t.Errorf("%s: message %q does not say %q", testutil.OneLine(c.sql), e.Message, c.says)
		}
		if e != nil && e.Hint == "" {
			t.Errorf("%s: no hint", testutil.OneLine(c.sql))
		}
	}
	if show := textRows(t, conn, "SHOW SINKS"); len(show) != 0 {
		t.Fatalf("SHOW SINKS after refused sinks: %q", show)
	}
	// The Avro schema from a file works too.
	exec(t, conn, "CREATE SINK s FROM totals INTO 'out.s' WITH (format = 'avro', schema_file = 'total.avsc')")
}
