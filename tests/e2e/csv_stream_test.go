package e2e

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestCSVStreamMatchesPostgresCopy: CSV records published one per
// message, with a ';' delimiter, a null string and quoted fields holding
// the delimiter, quotes and line breaks, read by a stream of format =
// 'csv' equal the same lines read by PostgreSQL 15's COPY ... (FORMAT
// csv) with the same options; malformed records are skipped and counted.
// A second stream with header = true takes a header line in each message
// naming its columns in any order. INSERT into either publishes CSV that
// reads back. A view over each agrees with the same query in PostgreSQL.
func TestCSVStreamMatchesPostgresCopy(t *testing.T) {
	const seed = 4104
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, conn, `CREATE STREAM sales (id int, item text, price numeric(8,2), sold timestamptz, tags text[])
		WITH (subject = 'sales.csv', format = 'csv', delimiter = ';', null = 'NULL')`,
		`CREATE STREAM returns (id int, reason text, qty int) WITH (subject = 'returns.csv', format = 'csv', header = true)`,
		`CREATE MATERIALIZED VIEW sales_by_item AS SELECT item, count(*) AS n, sum(price) AS total, max(sold) AS last FROM sales GROUP BY item`,
		`CREATE MATERIALIZED VIEW returns_by_reason AS SELECT reason, count(*) AS n, sum(qty) AS qty FROM returns GROUP BY reason`)
	exec(t, pg, `SET timezone = 'UTC'`,
		`CREATE TABLE sales (id int, item text, price numeric(8,2), sold timestamptz, tags text[])`,
		`CREATE TABLE returns (id int, reason text, qty int)`)
	exec(t, conn, `SET timezone = 'UTC'`)
	items := []string{"apple", `pear; "green"`, "plum\nbox", "NULL", ""}
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	_, js := testutil.JetStream(t, srv.NATSURL())
	var lines []string
	bad := 0
	for i := range 300 {
		item := items[rng.Intn(len(items))]
		field := quote(item)
		if rng.Intn(2) == 0 && !strings.ContainsAny(item, ";\"\n") && item != "NULL" && item != "" {
			field = item
		}
		price := fmt.Sprintf("%d.%02d", rng.Intn(1000), rng.Intn(100))
		if rng.Intn(10) == 0 {
			price = "NULL"
		}
		sold := time.Date(2026, 1, 1+rng.Intn(28), rng.Intn(24), 0, 0, 0, time.UTC).Format("2006-01-02 15:04:05Z")
		line := fmt.Sprintf(`%d;%s;%s;%s;"{%s,x}"`, i, field, price, sold, fmt.Sprint(rng.Intn(3)))
		switch rng.Intn(25) {
		case 0:
			line = fmt.Sprintf("%d;%s", i, field) // too few fields
			bad++
		case 1:
			line = fmt.Sprintf("%d;%s;not a price;%s;{}", i, field, sold)
			bad++
		default:
			lines = append(lines, line)
		}
		testutil.Publish(t, js, "sales.csv", line)
	}
	if _, err := pg.PgConn().CopyFrom(testutil.Context(t, time.Minute), strings.NewReader(strings.Join(lines, "\n")+"\n"),
		"COPY sales FROM STDIN (FORMAT csv, DELIMITER ';', NULL 'NULL')"); err != nil {
		t.Fatalf("COPY: %v", err)
	}
	reasons := []string{"broken", "late", "wrong, size"}
	batch := &pgx.Batch{}
	for i := range 100 {
		reason, qty := reasons[rng.Intn(len(reasons))], rng.Intn(5)+1
		msg := fmt.Sprintf("id,reason,qty\n%d,%s,%d", i, quote(reason), qty)
		if rng.Intn(2) == 0 {
			msg = fmt.Sprintf("qty,note,id,reason\r\n%d,x,%d,%s\r\n", qty, i, quote(reason))
		}
		testutil.Publish(t, js, "returns.csv", msg)
		batch.Queue("INSERT INTO returns VALUES ($1, $2, $3)", i, reason, qty)
	}
	if err := pg.SendBatch(testutil.Context(t, time.Minute), batch).Close(); err != nil {
		t.Fatal(err)
	}
	// INSERT publishes CSV in the stream's own options.
	for _, c := range []*pgx.Conn{conn, pg} {
		exec(t, c, `INSERT INTO sales VALUES (1000, 'semi;colon "q"', NULL, '2026-02-01 00:00:00+00', '{a}'), (1001, 'NULL', 1.5, NULL, NULL), (1002, '', 2, NULL, '{}')`,
			`INSERT INTO returns (qty, id, reason) VALUES (2, 1000, 'torn,
open')`)
	}
	flush(t, conn)
	for _, q := range []string{"SELECT * FROM sales", "SELECT * FROM returns"} {
		if diff := testutil.RowsDiff(t, conn, q, pg, q); diff != "" {
			t.Fatalf("seed %d: %s has %s", seed, q, diff)
		}
	}
	for _, v := range []struct{ name, query string }{
		{"sales_by_item", "SELECT item, count(*) AS n, sum(price) AS total, max(sold) AS last FROM sales GROUP BY item"},
		{"returns_by_reason", "SELECT reason, count(*) AS n, sum(qty) AS qty FROM returns GROUP BY reason"},
	} {
		if diff := testutil.RowsDiff(t, conn, "SELECT * FROM "+v.name, pg, v.query); diff != "" {
			t.Fatalf("seed %d: view %s has %s", seed, v.name, diff)
		}
	}
	if got := showStream(t, conn, "sales")["skipped_messages"]; got != fmt.Sprint(bad) {
		t.Errorf("sales skipped %s messages, want %d", got, bad)
	}
	wantExecCode(t, conn, "CREATE STREAM c (a int) WITH (format = 'csv', delimiter = ';;')", "22023")
	wantExecCode(t, conn, "CREATE STREAM c (a int) WITH (header = true)", "22023")
}
