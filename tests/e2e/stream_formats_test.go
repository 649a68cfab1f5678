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

	"streamdb/tests/testutil"
)

// formatViews are the views made over each of the three order streams
// (%s: the stream), each with its query over PostgreSQL's table o.
var formatViews = []struct{ name, query string }{
	{"rows", "SELECT " + strings.Join(testutil.OrderColumnNames, ", ") + " FROM %s"},
	{"agg", `SELECT status, paid, count(*) AS n, sum(qty) AS qty, sum(amount) AS amount, sum(weight) AS weight,
		max(created_at) AS last, count(updated_at) AS updated, max(updated_at) AS last_update, sum(discount) AS discount,
		count(coupon) AS coupons, max(coupon) AS coupon, sum((customer->>'id')::bigint) AS customers,
		min(ship_date) AS first_ship, max(delta) AS delta, sum(priority) AS priority, count(*) FILTER (WHERE tags = '{}') AS untagged,
		sum(jsonb_array_length(items)) AS items, count(*) FILTER (WHERE attrs ? 'gift') AS gifts, max(ref::text) AS ref
		FROM %s GROUP BY status, paid`},
}

// TestStreamFormatsAgree: the same order events published as JSON,
// Protobuf (a descriptor set file) and Avro (an inline schema) to three
// streams decode to the same rows, every field kind the formats map
// included, and views over each equal PostgreSQL 15's answer over the
// same rows; the Protobuf and Avro streams' dotted columns read the
// nested customer. Messages that do not decode are skipped and counted
// with errors that say why. The streams keep their schemas through the
// files' removal and a kill -9.
func TestStreamFormatsAgree(t *testing.T) {
	const seed = 4103
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, pg, "SET TimeZone = 'UTC'", "CREATE TABLE o ("+testutil.OrderColumns+")")

	dir := filepath.Join(srv.DataDir, "schemas")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	set := testutil.ProtoDescriptorSet(t, testutil.OrderProtoFile())
	if err := os.WriteFile(filepath.Join(dir, "orders.pb"), set, 0o644); err != nil {
		t.Fatal(err)
	}
	dotted := `, "customer.id" bigint, "customer.name" text`
	exec(t, conn, "CREATE STREAM o_json ("+testutil.OrderColumns+") WITH (subject = 'fmt.json')",
		"CREATE STREAM o_pb ("+testutil.OrderColumns+dotted+") WITH (subject = 'fmt.pb', format = 'protobuf', schema_file = 'orders.pb', message = 'shop.Order')",
		"CREATE STREAM o_avro ("+testutil.OrderColumns+dotted+") WITH (subject = 'fmt.avro', format = 'avro', schema = '"+testutil.OrderAvroSchema+"')")
	streams := []string{"o_json", "o_pb", "o_avro"}
	setup := func(conn *pgx.Conn) { exec(t, conn, "SET TimeZone = 'UTC'") }
	setup(conn)
	for _, s := range streams {
		for _, v := range formatViews {
			exec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s_%s AS "+v.query, v.name, s, s))
		}
	}
	for _, s := range streams[1:] {
		exec(t, conn, fmt.Sprintf(`CREATE MATERIALIZED VIEW cust_%s AS SELECT "customer.id" AS id, "customer.name" AS name, count(*) AS n FROM %s GROUP BY 1, 2`, s, s))
	}

	next := int64(1)
	skipped := map[string]int{}
	round := func(n int) {
		t.Helper()
		nc, js := testutil.JetStream(t, srv.NATSURL())
		defer nc.Close()
		orders := testutil.RandomOrders(rng, next, n)
		next += int64(n)
		publishMany(t, js, "fmt.json", n, func(i int) string { return string(orders[i].JSON()) })
		publishMany(t, js, "fmt.pb", n, func(i int) string { return string(orders[i].Proto(t, set)) })
		publishMany(t, js, "fmt.avro", n, func(i int) string { return string(orders[i].Avro(t)) })
		ctx := testutil.Context(t, time.Minute)
		for _, o := range orders {
			if _, err := pg.Exec(ctx, "INSERT INTO o SELECT * FROM jsonb_populate_record(NULL::o, $1::jsonb)", string(o.JSON())); err != nil {
				t.Fatalf("PostgreSQL insert of %s: %v", o.JSON(), err)
			}
		}
		// Messages that are no order: each binary stream skips them.
		bad := map[string][][]byte{
			"fmt.pb":   {{0xff, 0xff, 0xff}, []byte(`{"id": 1}`)},
			"fmt.avro": {{0x02}, append([]byte{0, 0, 0, 0, 7}, orders[0].Avro(t)...)},
		}
		for subj, msgs := range bad {
			for _, m := range msgs {
				if _, err := js.Publish(ctx, subj, m); err != nil {
					t.Fatal(err)
				}
				skipped[subj]++
			}
		}
		flush(t, conn)
	}
	check := func(when string) {
		t.Helper()
		for _, v := range formatViews {
			want := textRows(t, pg, fmt.Sprintf("SELECT * FROM ("+v.query+") q ORDER BY 1, 2, 3", "o"))
			for _, s := range streams {
				got := textRows(t, conn, fmt.Sprintf("SELECT * FROM %s_%s ORDER BY 1, 2, 3", v.name, s))
				if !slices.Equal(got, want) {
					t.Errorf("seed %d, %s: view %s_%s differs from PostgreSQL's answer:\n%s", seed, when, v.name, s, lineDiff(got, want))
				}
			}
		}
		want := textRows(t, pg, "SELECT (customer->>'id')::bigint, customer->>'name', count(*) FROM o GROUP BY 1, 2 ORDER BY 1, 2")
		for _, s := range streams[1:] {
			if got := textRows(t, conn, "SELECT * FROM cust_"+s+" ORDER BY 1, 2"); !slices.Equal(got, want) {
				t.Errorf("seed %d, %s: cust_%s differs from PostgreSQL's answer:\n%s", seed, when, s, lineDiff(got, want))
			}
		}
		for s, subj := range map[string]string{"o_pb": "fmt.pb", "o_avro": "fmt.avro"} {
			if got := showStream(t, conn, s)["skipped_messages"]; got != fmt.Sprint(skipped[subj]) {
				t.Errorf("%s: SHOW STREAMS skipped_messages of %s = %s, want %d", when, s, got, skipped[subj])
			}
		}
	}

	round(300)
	check("first round")
	errs := strings.Join(textRows(t, conn, "SELECT stream, sqlstate, error FROM streamdb_view_errors WHERE view = 'rows_o_avro' AND operator = 'source' ORDER BY seq"), "\n")
	if !strings.Contains(errs, "Confluent Schema Registry header") || !strings.Contains(errs, "not an Avro binary record") {
		t.Errorf("the errors of rows_o_avro's skipped messages do not say why:\n%s", errs)
	}
	if errs := strings.Join(textRows(t, conn, "SELECT error FROM streamdb_view_errors WHERE view = 'rows_o_pb' AND operator = 'source'"), "\n"); !strings.Contains(errs, "not a Protobuf message") {
		t.Errorf("the errors of rows_o_pb's skipped messages do not say why:\n%s", errs)
	}

	// The streams hold their schemas: the files may go.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	setup(conn)
	round(200)
	check("after kill -9 and restart")
}

// lineDiff shows the rows of got and want that the other lacks.
func lineDiff(got, want []string) string {
	var sb strings.Builder
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&sb, "+ %s\n", g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&sb, "- %s\n", w)
		}
	}
	fmt.Fprintf(&sb, "(%d rows, want %d)", len(got), len(want))
	return sb.String()
}

// TestStreamFormatErrors: CREATE STREAM with a schema file outside the
// schema directory, missing or not a schema, a message the set does not
// hold, or columns that do not fit the schema fails with a SQLSTATE and a
// message that names the file, message, column or field.
func TestStreamFormatErrors(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	dir := filepath.Join(srv.DataDir, "schemas")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	set := testutil.ProtoDescriptorSet(t, testutil.OrderProtoFile())
	outside := filepath.Join(srv.DataDir, "outside.pb")
	for path, data := range map[string][]byte{
		filepath.Join(dir, "sub", "orders.pb"): set,
		filepath.Join(dir, "junk.pb"):          []byte("not a descriptor set"),
		outside:                                set,
		filepath.Join(dir, "order.avsc"):       []byte(testutil.OrderAvroSchema),
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.pb")); err != nil {
		t.Fatal(err)
	}
	pb := func(cols, file, msg string) string {
		return fmt.Sprintf("CREATE STREAM p (%s) WITH (subject = 'p', format = 'protobuf', schema_file = '%s', message = '%s')", cols, file, msg)
	}
	for _, c := range []struct{ sql, code, says string }{
		{pb("id bigint", "../outside.pb", "shop.Order"), "42501", `schema_file "../outside.pb" is not a file under the schema directory`},
		{pb("id bigint", outside, "shop.Order"), "42501", "is not a file under the schema directory"},
		{pb("id bigint", "link.pb", "shop.Order"), "42501", `schema_file "link.pb" is not a file under the schema directory`},
		{pb("id bigint", "nope.pb", "shop.Order"), "58P01", `schema_file "nope.pb" does not exist`},
		{pb("id bigint", "junk.pb", "shop.Order"), "22023", "not a compiled Protobuf FileDescriptorSet"},
		{pb("id bigint", "sub/orders.pb", "shop.Ordr"), "22023", `message "shop.Ordr" is not in the Protobuf descriptor set`},
		{pb("id bigint, colour text", "sub/orders.pb", "shop.Order"), "42703", `column "colour" names no field of message shop.Order`},
		{pb("id bigint, payload integer", "sub/orders.pb", "shop.Order"), "42804", `column "payload" is integer, but its field is bytes`},
		{pb("id bigint, customer text", "sub/orders.pb", "shop.Order"), "42804", `column "customer" is text, but its field is shop.Customer`},
		{pb(`id bigint, "customer.age" int`, "sub/orders.pb", "shop.Order"), "42703", `column "customer.age" names no field of message shop.Customer`},
		{pb("id bigint, tags text", "sub/orders.pb", "shop.Order"), "42804", `column "tags" is text, but its field is repeated string`},
		{"CREATE STREAM p (id bigint) WITH (subject = 'p', format = 'protobuf', schema_file = 'sub/orders.pb')", "22023", "format 'protobuf' needs the options schema_file and message"},
		{"CREATE STREAM p (id bigint) WITH (subject = 'p', format = 'avro')", "22023", "format 'avro' needs one of the options schema"},
		{"CREATE STREAM p (id bigint) WITH (subject = 'p', format = 'avro', schema = '{\"type\": \"record\"')", "22023", "invalid Avro schema"},
		{"CREATE STREAM p (id bigint) WITH (subject = 'p', format = 'avro', schema = '\"string\"')", "22023", "the Avro schema is a string, not a record"},
		{"CREATE STREAM p (id bigint, items text[]) WITH (subject = 'p', format = 'avro', schema_file = 'order.avsc')", "42804", `column "items" is text[], but its field is`},
		{"CREATE STREAM p (id bigint, customer text) WITH (subject = 'p', format = 'avro', schema_file = 'order.avsc')", "42804", `column "customer" is text, but its field is an Avro record`},
		{"CREATE STREAM p (id bigint, nope int) WITH (subject = 'p', format = 'avro', schema_file = 'order.avsc')", "42703", `column "nope" names no field of Avro record shop.Order`},
		{"CREATE STREAM p (id bigint) WITH (subject = 'p', schema_file = 'order.avsc')", "22023", "option schema_file is for format 'protobuf' or 'avro'"},
		{"CREATE TABLE p (id bigint) WITH (format = 'avro', schema_file = 'order.avsc')", "0A000", `format "avro" on a table is not supported`},
		{"CREATE STREAM p (id bigint) WITH (subject = 'p', format = 'xml')", "0A000", `format "xml" is not supported`},
	} {
		e := wantCode(t, execErr(t, conn, c.sql), c.code)
		if e != nil && !strings.Contains(e.Message, c.says) {
			t.Errorf("%s: message %q does not say %q", testutil.OneLine(c.sql), e.Message, c.says)
		}
		if e != nil && e.Hint == "" {
			t.Errorf("%s: no hint", testutil.OneLine(c.sql))
		}
	}
	wantRows(t, conn, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'p'", "0")
	// The Avro file works, and a dotted column reads a nested record.
	exec(t, conn, `CREATE STREAM p (id bigint, "customer.tier" text, items jsonb) WITH (subject = 'p', format = 'avro', schema_file = 'order.avsc')`)
	// ALTER STREAM checks added columns against the stored schema (the
	// file is no longer read); a column with a default needs no field.
	if err := os.Remove(filepath.Join(dir, "order.avsc")); err != nil {
		t.Fatal(err)
	}
	if e := wantExecCode(t, conn, "ALTER STREAM p ADD COLUMN colour text", "42703"); e != nil && !strings.Contains(e.Message, `column "colour" names no field of Avro record shop.Order`) {
		t.Errorf("ALTER STREAM ADD COLUMN colour: %s", e.Message)
	}
	wantExecCode(t, conn, "ALTER STREAM p ADD COLUMN payload int", "42804")
	exec(t, conn, "ALTER STREAM p ADD COLUMN qty int, ADD COLUMN colour text DEFAULT 'red'")
}
