package compat

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"streamdb/catalog"
	"streamdb/tests/testutil"
)

// TestPlanRecordKeepsState: a view is built at each start from the plan it
// was created with, not from its SQL bound again. The test swaps the SQL
// stored with a view for one that binds to the same operators with its
// aggregates in the other order (as a changed binder might): built from
// the SQL, the aggregate's stored state would be read back into the wrong
// accumulators; built from the plan record, the view keeps counting right.
func TestPlanRecordKeepsState(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	exec(t, conn, schema[0],
		`CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k`)
	publish(t, srv, 0, 300)
	exec(t, conn, "FLUSH")
	if got, want := rows(t, conn, "SELECT * FROM per_k"), perK(300); !slices.Equal(got, want) {
		t.Fatalf("before the restart:\n got %v\nwant %v", got, want)
	}
	srv.Stop(t)

	recorded := false
	editDescriptor(t, srv.DataDir, "per_k", func(d *catalog.Descriptor) {
		recorded = len(d.Plan) > 0
		d.Query = `SELECT k, sum(v) AS n, count(*) AS total FROM ev GROUP BY k`
	})
	if !recorded {
		t.Fatal("CREATE MATERIALIZED VIEW recorded no plan")
	}
	srv.Restart(t)
	conn = srv.Conn(t)
	if got, want := rows(t, conn, "SELECT * FROM per_k"), perK(300); !slices.Equal(got, want) {
		t.Errorf("after the restart:\n got %v\nwant %v", got, want)
	}
	publish(t, srv, 300, 200)
	exec(t, conn, "FLUSH")
	if got, want := rows(t, conn, "SELECT * FROM per_k"), perK(500); !slices.Equal(got, want) {
		t.Errorf("after new input:\n got %v\nwant %v", got, want)
	}
}

// perK is per_k's rows over events 0..n-1, as SortedRows renders them.
func perK(n int) []string {
	count, sum := map[int]int{}, map[int]int{}
	for i := 0; i < n; i++ {
		count[i%13]++
		sum[i%13] += (i * 7919) % 1000
	}
	var out []string
	for k := range count {
		out = append(out, fmt.Sprintf("%d|%d|%d", k, count[k], sum[k]))
	}
	sort.Strings(out)
	return out
}

// viewsWithoutPlan lists the views of a stopped server's data directory
// that have no plan record.
func viewsWithoutPlan(t *testing.T, dataDir string) []string {
	t.Helper()
	st, descs := openCatalog(t, dataDir)
	defer st.Close()
	var out []string
	for _, d := range descs {
		if d.Kind == catalog.KindView && len(d.Plan) == 0 {
			out = append(out, d.Name)
		}
	}
	return out
}
