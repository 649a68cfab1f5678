package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestOperatorFigures checks streamdb_operators and
// streamdb_operator_rows_out_total against what was published: the scan
// sends every decoded row, the filter the rows it keeps, the aggregate
// keeps state tables; rows_per_second rises while events flow and falls
// back to 0 when they stop; and the Prometheus counter of each operator
// equals the table's rows_out. The aggregate's cache answers repeated
// groups from memory (cache_hits) and, after a restart, reads the groups
// from Pebble (cache_reads).
func TestOperatorFigures(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn,
		"CREATE STREAM ops (k BIGINT, v BIGINT) WITH (subject = 'e2e.ops')",
		"CREATE MATERIALIZED VIEW opv AS SELECT k % 3 AS g, count(*) AS n FROM ops WHERE v > 10 GROUP BY k % 3")
	const n = 3000
	publishMany(t, js, "e2e.ops", n, func(i int) string { return fmt.Sprintf(`{"k": %d, "v": %d}`, i, i%20) })
	flush(t, conn)
	kept := 0
	for i := 0; i < n; i++ {
		if i%20 > 10 {
			kept++
		}
	}

	type op struct {
		id, kind, tables string
		rows             int64
		rate             float64
		hits, reads      int64
	}
	operators := func() []op {
		var out []op
		for _, r := range textRows(t, conn, "SELECT operator, kind, rows_out, rows_per_second, coalesce(state_tables, '-'), state_bytes IS NULL, coalesce(cache_hits, -1), coalesce(cache_reads, -1) FROM streamdb_operators WHERE view = 'opv'") {
			f := strings.Fields(r)
			if len(f) != 8 {
				t.Fatalf("streamdb_operators row %q", r)
			}
			rows, _ := strconv.ParseInt(f[2], 10, 64)
			rate, _ := strconv.ParseFloat(f[3], 64)
			if (f[4] == "-") != (f[5] == "t") {
				t.Errorf("operator %s: state_tables %s but state_bytes IS NULL = %s", f[0], f[4], f[5])
			}
			hits, _ := strconv.ParseInt(f[6], 10, 64)
			reads, _ := strconv.ParseInt(f[7], 10, 64)
			out = append(out, op{id: f[0], kind: f[1], rows: rows, rate: rate, tables: f[4], hits: hits, reads: reads})
		}
		return out
	}
	byKind := func(ops []op, kind string) op {
		t.Helper()
		for _, o := range ops {
			if o.kind == kind {
				return o
			}
		}
		t.Fatalf("no %s operator in streamdb_operators: %+v", kind, ops)
		return op{}
	}
	ops := operators()
	if scan := byKind(ops, "scan"); scan.rows != n || scan.tables != "-" {
		t.Errorf("scan: rows_out %d, state tables %s; want %d and none", scan.rows, scan.tables, n)
	}
	if f := byKind(ops, "filter"); f.rows != int64(kept) {
		t.Errorf("filter: rows_out %d, want %d", f.rows, kept)
	}
	agg := byKind(ops, "aggregate")
	if agg.tables == "-" || agg.rows == 0 || agg.hits <= 0 {
		t.Errorf("aggregate: rows_out %d, state tables %s, cache hits %d; want some of each", agg.rows, agg.tables, agg.hits)
	}
	fams := srv.Metrics(t)
	for _, o := range ops {
		if got := metricValue(t, fams, "streamdb_operator_rows_out_total", "view", "opv", "operator", o.id); int64(got) != o.rows {
			t.Errorf("streamdb_operator_rows_out_total{operator=%q} = %v, streamdb_operators says %d", o.id, got, o.rows)
		}
	}
	if got := metricValue(t, fams, "streamdb_operator_cache_hits_total", "view", "opv", "operator", agg.id); int64(got) != agg.hits {
		t.Errorf("streamdb_operator_cache_hits_total{operator=%q} = %v, streamdb_operators says %d", agg.id, got, agg.hits)
	}

	// The rate rises while events flow (each poll publishes a batch) and
	// falls to 0 once they stop.
	batch := 0
	poll(t, 60*time.Second, func() error {
		publishMany(t, js, "e2e.ops", 200, func(j int) string { return fmt.Sprintf(`{"k": %d, "v": 1}`, batch*200+j) })
		batch++
		if r := byKind(operators(), "scan").rate; r <= 0 {
			return fmt.Errorf("scan rows_per_second = %v while events flow", r)
		}
		return nil
	})
	poll(t, 60*time.Second, func() error {
		if r := byKind(operators(), "scan").rate; r != 0 {
			return fmt.Errorf("scan rows_per_second = %v after events stopped", r)
		}
		return nil
	})

	// After a restart the groups are in Pebble only: their first lookups
	// read it.
	srv.Restart(t)
	conn = srv.Conn(t)
	_, js = testutil.JetStream(t, srv.NATSURL())
	publishMany(t, js, "e2e.ops", 30, func(i int) string { return fmt.Sprintf(`{"k": %d, "v": 15}`, i) })
	flush(t, conn)
	if agg := byKind(operators(), "aggregate"); agg.reads <= 0 {
		t.Errorf("aggregate after a restart: cache_reads %d, want the groups read from Pebble", agg.reads)
	}
}
