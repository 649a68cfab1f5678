package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// jsonbEvent draws one nested order event: a user object, an array of
// items, optional fields, duplicate keys, unicode and numbers whose scale
// matters. Some events leave doc out (NULL) or make it a scalar.
func jsonbEvent(rng *rand.Rand, id int) (msg, doc string) {
	tiers := []string{"gold", "silver", "bronze", "ünï", ""}
	user := fmt.Sprintf(`{"id": %d, "tier": %q, "tier": %q}`, rng.Intn(50), tiers[rng.Intn(len(tiers))], tiers[rng.Intn(len(tiers))])
	var items []string
	for range rng.Intn(4) {
		items = append(items, fmt.Sprintf(`{"sku": "s%d", "qty": %d, "price": %d.%02d0}`, rng.Intn(5), 1+rng.Intn(3), rng.Intn(100), rng.Intn(100)))
	}
	switch rng.Intn(10) {
	case 0:
		return fmt.Sprintf(`{"id": %d}`, id), ""
	case 1:
		doc = `"just a string"`
	case 2:
		doc = `null`
	default:
		doc = fmt.Sprintf(`{"user": %s, "items": [%s], "note": null, "nested": {"a": {"b": [1, {"c": %d}]}}}`, user, strings.Join(items, ", "), rng.Intn(3))
	}
	return fmt.Sprintf(`{"id": %d, "doc": %s, "extra": {"ignored": [1, 2]}}`, id, doc), doc
}

// TestJSONBStreamColumn: a stream column of type jsonb reads the nested
// JSON value of its key from each event as it is; views group, filter and
// join on values extracted from it, and agree with PostgreSQL 15 fed the
// same documents, before and after a restart. pgx reads the jsonb column
// in binary (OID 3802).
func TestJSONBStreamColumn(t *testing.T) {
	const seed = 40
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, conn,
		`CREATE STREAM orders (id bigint, doc jsonb) WITH (subject = 'orders.jsonb')`,
		`CREATE TABLE tiers (tier text PRIMARY KEY, rank int)`,
		`INSERT INTO tiers VALUES ('gold', 1), ('silver', 2), ('ünï', 3)`)
	exec(t, pg,
		`CREATE TABLE orders (id bigint, doc jsonb)`,
		`CREATE TABLE tiers (tier text PRIMARY KEY, rank int)`,
		`INSERT INTO tiers VALUES ('gold', 1), ('silver', 2), ('ünï', 3)`)
	queries := map[string]string{
		"by_tier": `SELECT doc->'user'->>'tier' AS tier, count(*) AS n, sum((doc #>> '{user,id}')::bigint) AS ids,
			sum(jsonb_array_length(doc->'items')) AS items FROM orders GROUP BY 1`,
		"by_doc_kind": `SELECT jsonb_typeof(doc) AS kind, count(*) AS n FROM orders GROUP BY 1`,
		"s1_orders":   `SELECT id, doc->'items'->0 AS first_item, doc #> '{nested,a,b,1}' AS c FROM orders WHERE doc @> '{"items": [{"sku": "s1"}]}'`,
		"ranked": `SELECT o.id, t.rank, o.doc->'user' AS u FROM orders o JOIN tiers t ON t.tier = o.doc->'user'->>'tier'
			WHERE o.doc ? 'items' AND (o.doc->'user'->>'id')::int < 25`,
		"by_user": `SELECT doc->'user' AS u, count(*) AS n FROM orders WHERE jsonb_typeof(doc) = 'object' GROUP BY doc->'user'`,
	}
	names := make([]string, 0, len(queries))
	for name := range queries {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		exec(t, conn, fmt.Sprintf(`CREATE MATERIALIZED VIEW %s AS %s`, name, queries[name]))
	}

	_, js := testutil.JetStream(t, srv.NATSURL())
	ctx := testutil.Context(t, 2*time.Minute)
	const events = 300
	batch := &pgx.Batch{}
	for i := range events {
		msg, doc := jsonbEvent(rng, i)
		if !json.Valid([]byte(msg)) {
			t.Fatalf("seed %d: event %d is not JSON: %s", seed, i, msg)
		}
		if _, err := js.Publish(ctx, "orders.jsonb", []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if doc == "" {
			batch.Queue(`INSERT INTO orders VALUES ($1, NULL)`, i)
		} else {
			batch.Queue(`INSERT INTO orders VALUES ($1, $2::text::jsonb)`, i, doc)
		}
	}
	if err := pg.SendBatch(ctx, batch).Close(); err != nil {
		t.Fatal(err)
	}

	compare := func() {
		t.Helper()
		for _, name := range names {
			want := textRows(t, pg, queries[name])
			slices.Sort(want)
			poll(t, 60*time.Second, func() error {
				got, err := textRowsErr(ctx, conn, "SELECT * FROM "+name)
				if err != nil {
					return err
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					return fmt.Errorf("seed %d: view %s:\n got: %q\nwant: %q", seed, name, got, want)
				}
				return nil
			})
		}
	}
	compare()

	// The jsonb column in binary through pgx: OID 3802, decoded as JSON.
	rows, err := conn.Query(ctx, `SELECT u FROM by_user ORDER BY n DESC, u LIMIT 1`)
	if err != nil {
		t.Fatal(err)
	}
	var u map[string]any
	for rows.Next() {
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
	}
	if oid := rows.FieldDescriptions()[0].DataTypeOID; oid != 3802 {
		t.Errorf("jsonb column OID %d, want 3802", oid)
	}
	if err := rows.Err(); err != nil || u["tier"] == nil {
		t.Errorf("by_user's first user read as %v (%v)", u, err)
	}

	srv.Restart(t)
	conn = srv.Conn(t)
	compare()
}

// TestJSONBDriver: pgx sends json and jsonb parameters (binary jsonb is
// the version byte then the text) and reads them back, in the extended
// and the simple protocol.
func TestJSONBDriver(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, `CREATE TABLE docs (id int PRIMARY KEY, b jsonb, j json)`)
	ctx := testutil.Context(t, 60*time.Second)
	doc := map[string]any{"z": []any{1.5, "é", nil}, "a": map[string]any{"n": true}}
	for i, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		var arg any = doc
		if mode == pgx.QueryExecModeSimpleProtocol {
			// pgx needs a parameter's type to encode a map as text.
			text, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			arg = string(text)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO docs VALUES ($1, $2, $3)`, mode, i+1, arg, arg); err != nil {
			t.Fatalf("mode %v: INSERT: %v", mode, err)
		}
		var b, j map[string]any
		if err := conn.QueryRow(ctx, `SELECT b, j FROM docs WHERE id = $1`, mode, i+1).Scan(&b, &j); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		if fmt.Sprint(b) != fmt.Sprint(doc) || fmt.Sprint(j) != fmt.Sprint(doc) {
			t.Errorf("mode %v: read back %v and %v, want %v", mode, b, j, doc)
		}
	}
	// The binary format itself: jsonb is the byte 1 then the text, json
	// the text, both ways.
	res := conn.PgConn().ExecParams(ctx, `INSERT INTO docs VALUES (3, $1, $2) RETURNING b, j`,
		[][]byte{[]byte("\x01{\"k\": [1, 2.0]}"), []byte(`{"k" : 1}`)}, []uint32{3802, 114},
		[]int16{1, 1}, []int16{1, 1}).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if len(res.Rows) != 1 || string(res.Rows[0][0]) != "\x01{\"k\": [1, 2.0]}" || string(res.Rows[0][1]) != `{"k" : 1}` {
		t.Errorf("binary jsonb and json read back as %q", res.Rows)
	}
	res = conn.PgConn().ExecParams(ctx, `SELECT $1::jsonb`, [][]byte{[]byte("\x02{}")}, []uint32{3802}, []int16{1}, nil).Read()
	wantCode(t, res.Err, "22P03")
	exec(t, conn, `DELETE FROM docs WHERE id = 3`)
	wantRows(t, conn, `SELECT id, b, b->'z'->>1 FROM docs ORDER BY id`,
		`1 {"a": {"n": true}, "z": [1.5, "é", null]} é`, `2 {"a": {"n": true}, "z": [1.5, "é", null]} é`)
}
