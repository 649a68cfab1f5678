package e2e

import (
	"testing"

	"streamdb/tests/testutil"
)

// TestKeyedBlocksSpill checks that a transaction block spills its
// changes to disk past transaction_spill_memory for each kind of write
// that used to stay in memory: tables with a UNIQUE constraint, a
// unique index, a foreign key (parent and child), a block after INSERT
// ... ON CONFLICT DO NOTHING, a table without a primary key that has a
// UNIQUE constraint and a unique index, and rows inserted into a stream. The
// server's streamdb_transaction_spills_total must grow while each block
// runs, and the COMMIT must land what the block wrote. (The answers
// themselves are compared with PostgreSQL in
// sqllogic/testdata/pg/transaction_spill_keys.slt and
// transaction_spill_fk.slt.)
func TestKeyedBlocksSpill(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE sk_u (k int PRIMARY KEY, u int UNIQUE)",
		"CREATE TABLE sk_i (k int PRIMARY KEY, a int)",
		"CREATE UNIQUE INDEX sk_i_a ON sk_i (a)",
		"CREATE TABLE sk_p (k int PRIMARY KEY)",
		"CREATE TABLE sk_c (k int PRIMARY KEY, p int REFERENCES sk_p ON DELETE CASCADE)",
		"CREATE TABLE sk_d (k int PRIMARY KEY, v int)",
		"CREATE TABLE sk_n (a int UNIQUE, b int)",
		"CREATE UNIQUE INDEX sk_n_b ON sk_n (b)",
		"CREATE STREAM sk_s (k bigint, v text) WITH (subject = 'spillkeys.s')",
		"CREATE MATERIALIZED VIEW sk_s_sum AS SELECT count(*) AS n, sum(k) AS total FROM sk_s",
		"SET transaction_spill_memory = '1kB'")
	spills := func(what string) float64 {
		fams := srv.Metrics(t)
		f, ok := fams["streamdb_transaction_spills_total"]
		if !ok {
			return 0
		}
		for _, m := range f.GetMetric() {
			if testutil.HasLabels(m, []string{"what", what}) {
				return m.GetCounter().GetValue()
			}
		}
		return 0
	}
	for _, c := range []struct {
		name, what string
		block      []string
		check      string
		want       string
	}{
		{"unique constraint", "table", []string{
			"INSERT INTO sk_u SELECT g, g FROM generate_series(1, 3000) g",
			"INSERT INTO sk_u SELECT g, g FROM generate_series(3001, 6000) g",
		}, "SELECT count(*), sum(u) FROM sk_u", "6000 18003000"},
		{"unique index", "table", []string{
			"INSERT INTO sk_i SELECT g, g FROM generate_series(1, 3000) g",
			"UPDATE sk_i SET a = a + 3000",
		}, "SELECT count(*), sum(a) FROM sk_i", "3000 13501500"},
		{"foreign key", "table", []string{
			"INSERT INTO sk_p SELECT g FROM generate_series(1, 3000) g",
			"INSERT INTO sk_c SELECT g, g FROM generate_series(1, 3000) g",
			"DELETE FROM sk_p WHERE k <= 1000",
		}, "SELECT count(*), sum(p) FROM sk_c", "2000 4001000"},
		{"unique without a primary key", "table", []string{
			"INSERT INTO sk_n SELECT g, g FROM generate_series(1, 3000) g",
			"INSERT INTO sk_n SELECT NULL::int, NULL::int FROM generate_series(1, 100) g",
			"UPDATE sk_n SET a = a + 3000 WHERE a <= 1000",
		}, "SELECT count(*), count(a), sum(a), sum(b) FROM sk_n", "3100 3000 7501500 4501500"},
		{"on conflict do nothing", "table", []string{
			"INSERT INTO sk_d SELECT g, g FROM generate_series(1, 3000) g ON CONFLICT DO NOTHING",
			"INSERT INTO sk_d SELECT g, -g FROM generate_series(2001, 5000) g ON CONFLICT DO NOTHING",
			"INSERT INTO sk_d SELECT g, 0 FROM generate_series(5001, 6000) g",
		}, "SELECT count(*), sum(v) FROM sk_d", "6000 -3499500"},
		{"stream rows", "stream", []string{
			"INSERT INTO sk_s SELECT g, 'row ' || g FROM generate_series(1, 3000) g",
			"INSERT INTO sk_s SELECT g, 'row ' || g FROM generate_series(3001, 5000) g",
		}, "SELECT n, total FROM sk_s_sum", "5000 12502500"},
	} {
		before := spills(c.what)
		exec(t, conn, "BEGIN")
		exec(t, conn, c.block...)
		if after := spills(c.what); after <= before {
			t.Errorf("%s: the block spilled nothing (streamdb_transaction_spills_total{what=%q} stayed at %v)", c.name, c.what, after)
		}
		exec(t, conn, "COMMIT")
		if c.what == "stream" {
			flush(t, conn)
		}
		wantRows(t, conn, c.check, c.want)
	}
}

// TestLinkedBlockCommitsFromSpill checks that the COMMIT of a block whose
// changes to tables linked by foreign keys spilled checks them from the
// spill, without reading them back into memory: the server's
// streamdb_transaction_spill_reads_total does not move, and the COMMIT
// lands the block (a child whose parent the block deleted went with it,
// by CASCADE).
func TestLinkedBlockCommitsFromSpill(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE lb_p (k int PRIMARY KEY, u int UNIQUE)",
		"CREATE TABLE lb_c (k int PRIMARY KEY, p int REFERENCES lb_p ON DELETE CASCADE, pu int REFERENCES lb_p (u) DEFERRABLE INITIALLY DEFERRED)",
		"SET transaction_spill_memory = '1kB'")
	reads := func() float64 {
		f, ok := srv.Metrics(t)["streamdb_transaction_spill_reads_total"]
		if !ok || len(f.GetMetric()) != 1 {
			t.Fatal("the server has no streamdb_transaction_spill_reads_total")
		}
		return f.GetMetric()[0].GetCounter().GetValue()
	}
	before := reads()
	exec(t, conn, "BEGIN",
		"INSERT INTO lb_p SELECT g, g FROM generate_series(1, 5000) g",
		"INSERT INTO lb_c SELECT g, g, g FROM generate_series(1, 5000) g",
		"DELETE FROM lb_p WHERE k <= 1000",
		"COMMIT")
	if after := reads(); after != before {
		t.Errorf("the COMMIT read spilled changes back into memory (streamdb_transaction_spill_reads_total %v -> %v)", before, after)
	}
	wantRows(t, conn, "SELECT count(*), sum(p), sum(pu) FROM lb_c", "4000 12002000 12002000")
}
