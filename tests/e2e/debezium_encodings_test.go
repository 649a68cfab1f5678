package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// dbzField is one column of the test table: its PostgreSQL type, the
// Kafka Connect schema Debezium gives it by default, and how a random
// value is written as a PostgreSQL literal and as Debezium encodes it.
type dbzField struct {
	name, pgType string
	schema       map[string]any
	value        func(r *rand.Rand) (literal string, encoded any)
}

// unscaledBytes is n as Kafka Connect's Decimal holds it: big-endian
// two's complement, the fewest bytes.
func unscaledBytes(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	size := len(n.Bytes()) + 1
	m := new(big.Int).Add(n, new(big.Int).Lsh(big.NewInt(1), uint(8*size)))
	b := m.FillBytes(make([]byte, size))
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}

func decimalText(unscaled int64, scale int) string {
	neg := unscaled < 0
	if neg {
		unscaled = -unscaled
	}
	s := fmt.Sprintf("%0*d", scale+1, unscaled)
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

var dbzFields = []dbzField{
	{"amount", "numeric(14,3)", map[string]any{"type": "bytes", "optional": true, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
		"parameters": map[string]any{"scale": "3", "connect.decimal.precision": "14"}},
		func(r *rand.Rand) (string, any) {
			u := r.Int63n(2e13) - 1e13
			return decimalText(u, 3), base64.StdEncoding.EncodeToString(unscaledBytes(big.NewInt(u)))
		}},
	{"price", "numeric", map[string]any{"type": "struct", "optional": true, "name": "io.debezium.data.VariableScaleDecimal", "version": 1,
		"fields": []any{map[string]any{"type": "int32", "optional": false, "field": "scale"}, map[string]any{"type": "bytes", "optional": false, "field": "value"}}},
		func(r *rand.Rand) (string, any) {
			u, scale := r.Int63n(2e9)-1e9, r.Intn(6)+1
			return decimalText(u, scale), map[string]any{"scale": scale, "value": base64.StdEncoding.EncodeToString(unscaledBytes(big.NewInt(u)))}
		}},
	{"day", "date", map[string]any{"type": "int32", "optional": true, "name": "io.debezium.time.Date", "version": 1},
		func(r *rand.Rand) (string, any) {
			days := r.Intn(50000) - 20000
			return time.Unix(int64(days)*86400, 0).UTC().Format("2006-01-02"), days
		}},
	{"at", "timestamp", map[string]any{"type": "int64", "optional": true, "name": "io.debezium.time.MicroTimestamp", "version": 1},
		func(r *rand.Rand) (string, any) {
			us := r.Int63n(4e15) - 1e15
			return time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05.999999"), us
		}},
	{"at_ms", "timestamp(3)", map[string]any{"type": "int64", "optional": true, "name": "io.debezium.time.Timestamp", "version": 1},
		func(r *rand.Rand) (string, any) {
			ms := r.Int63n(4e12) - 1e12
			return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.999"), ms
		}},
	{"at_tz", "timestamptz", map[string]any{"type": "string", "optional": true, "name": "io.debezium.time.ZonedTimestamp", "version": 1},
		func(r *rand.Rand) (string, any) {
			t := time.UnixMicro(r.Int63n(2e15)).UTC()
			return t.Format("2006-01-02 15:04:05.999999Z07:00"), t.Format("2006-01-02T15:04:05.000000Z")
		}},
	{"clock", "time", map[string]any{"type": "int64", "optional": true, "name": "io.debezium.time.MicroTime", "version": 1},
		func(r *rand.Rand) (string, any) {
			us := r.Int63n(86400e6)
			return time.UnixMicro(us).UTC().Format("15:04:05.999999"), us
		}},
	{"took", "interval", map[string]any{"type": "int64", "optional": true, "name": "io.debezium.time.MicroDuration", "version": 1},
		func(r *rand.Rand) (string, any) {
			us := r.Int63n(2e11) - 1e11
			return fmt.Sprintf("%d microseconds", us), us
		}},
	{"doc", "jsonb", map[string]any{"type": "string", "optional": true, "name": "io.debezium.data.Json", "version": 1},
		func(r *rand.Rand) (string, any) {
			s := fmt.Sprintf(`{"n": %d, "tags": ["a", "b%d"], "ok": %t}`, r.Intn(1000), r.Intn(9), r.Intn(2) == 0)
			return s, s
		}},
	{"raw", "bytea", map[string]any{"type": "bytes", "optional": true},
		func(r *rand.Rand) (string, any) {
			b := make([]byte, r.Intn(12))
			r.Read(b)
			return `\x` + hex.EncodeToString(b), base64.StdEncoding.EncodeToString(b)
		}},
}

// TestDebeziumEncodingsMatchPostgres publishes change events in the exact
// shapes Debezium Server emits with its default settings (schemas
// enabled; decimal.handling.mode precise: base64 unscaled bytes with the
// scale in the schema, VariableScaleDecimal for an unconstrained
// numeric; dates as epoch days; timestamps as epoch micro- and
// milliseconds, timestamptz as ZonedTimestamp; times as MicroTime;
// intervals as MicroDuration; json as a string; bytea as base64) for
// random values, applies the same changes to a PostgreSQL table, and
// compares the stream with envelope = 'debezium' with the table.
func TestDebeziumEncodingsMatchPostgres(t *testing.T) {
	const seed = 4141
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	cols := "id int PRIMARY KEY"
	valueFields := []any{map[string]any{"type": "int32", "optional": false, "field": "id"}}
	for _, f := range dbzFields {
		cols += ", " + f.name + " " + f.pgType
		s := map[string]any{"field": f.name}
		for k, v := range f.schema {
			s[k] = v
		}
		valueFields = append(valueFields, s)
	}
	exec(t, conn, "SET TIME ZONE 'UTC'", fmt.Sprintf("CREATE STREAM dbz_types (%s) WITH (subject = 'dbz.public.dbz_types', envelope = 'debezium')", cols))
	exec(t, pg, "SET TIME ZONE 'UTC'", fmt.Sprintf("CREATE TABLE dbz_types (%s)", cols))
	schema := map[string]any{"type": "struct", "optional": false, "name": "dbz.public.dbz_types.Envelope", "version": 1,
		"fields": []any{
			map[string]any{"type": "struct", "optional": true, "name": "dbz.public.dbz_types.Value", "field": "before", "fields": valueFields},
			map[string]any{"type": "struct", "optional": true, "name": "dbz.public.dbz_types.Value", "field": "after", "fields": valueFields},
			map[string]any{"type": "struct", "optional": false, "name": "io.debezium.connector.postgresql.Source", "field": "source"},
			map[string]any{"type": "string", "optional": false, "field": "op"},
			map[string]any{"type": "int64", "optional": true, "field": "ts_ms"}}}

	_, js := testutil.JetStream(t, srv.NATSURL())
	rows := map[int]map[string]any{} // the events' rows, by id
	lsn := 5000
	publish := func(op string, before, after map[string]any) {
		t.Helper()
		lsn += 8
		ev := map[string]any{"schema": schema, "payload": map[string]any{"before": before, "after": after, "op": op,
			"source": map[string]any{"version": "2.7.3.Final", "connector": "postgresql", "name": "dbz", "ts_ms": 1733400000000 + lsn,
				"snapshot": "false", "db": "postgres", "schema": "public", "table": "dbz_types", "txId": 900 + lsn, "lsn": lsn},
			"ts_ms": 1733400000000 + lsn, "transaction": nil}}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(testutil.Context(t, time.Minute), "dbz.public.dbz_types", b); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	row := func(id int) (map[string]any, []any) {
		ev := map[string]any{"id": id}
		args := []any{id}
		for _, f := range dbzFields {
			if r.Intn(8) == 0 {
				ev[f.name] = nil
				args = append(args, nil)
				continue
			}
			lit, enc := f.value(r)
			ev[f.name] = enc
			args = append(args, lit)
		}
		return ev, args
	}
	upsert := "INSERT INTO dbz_types VALUES ($1"
	for i := range dbzFields {
		upsert += fmt.Sprintf(", $%d", i+2)
	}
	upsert += ") ON CONFLICT (id) DO UPDATE SET "
	for i, f := range dbzFields {
		if i > 0 {
			upsert += ", "
		}
		upsert += fmt.Sprintf("%s = EXCLUDED.%s", f.name, f.name)
	}
	for i := 0; i < 400; i++ {
		id := r.Intn(150)
		old, exists := rows[id]
		switch {
		case exists && r.Intn(5) == 0:
			delete(rows, id)
			exec(t, pg, fmt.Sprintf("DELETE FROM dbz_types WHERE id = %d", id))
			publish("d", old, nil)
		default:
			ev, args := row(id)
			if _, err := pg.Exec(testutil.Context(t, time.Minute), upsert, args...); err != nil {
				t.Fatalf("seed %d: %s %v: %v", seed, upsert, args, err)
			}
			rows[id] = ev
			op := "c"
			if exists {
				op = "u"
			} else {
				old = nil
			}
			publish(op, old, ev)
		}
	}
	flush(t, conn)
	const q = "SELECT * FROM dbz_types"
	if diff := testutil.RowsDiff(t, conn, q, pg, q); diff != "" {
		t.Fatalf("seed %d: the Debezium stream has %s", seed, diff)
	}
	if got := textRows(t, conn, "SELECT count(*) FROM streamdb_view_errors WHERE view = 'dbz_types'"); len(got) != 1 || got[0] != "0" {
		t.Errorf("seed %d: messages skipped: %v %v", seed, got, textRows(t, conn, "SELECT error FROM streamdb_view_errors WHERE view = 'dbz_types' LIMIT 3"))
	}
}
