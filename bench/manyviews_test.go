package bench

import (
	"fmt"
	"testing"
)

const manyViewsBench = "many views"

// manyViewsSQL are eight different GROUP BY views over stream ev; the
// first is also the single view they are compared with.
var manyViewsSQL = []string{
	"CREATE MATERIALIZED VIEW m1 AS SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k",
	"CREATE MATERIALIZED VIEW m2 AS SELECT k % 10 AS g, count(*) AS n, sum(v) AS total FROM ev GROUP BY k % 10",
	"CREATE MATERIALIZED VIEW m3 AS SELECT v, count(*) AS n FROM ev GROUP BY v",
	"CREATE MATERIALIZED VIEW m4 AS SELECT k % 1000 AS g, count(*) AS n, max(v) AS top FROM ev GROUP BY k % 1000",
	"CREATE MATERIALIZED VIEW m5 AS SELECT v % 7 AS g, count(*) AS n, min(k) AS low FROM ev GROUP BY v % 7",
	"CREATE MATERIALIZED VIEW m6 AS SELECT k % 100 AS g, count(*) AS n, avg(v) AS mean FROM ev GROUP BY k % 100",
	"CREATE MATERIALIZED VIEW m7 AS SELECT v % 10 AS g, count(*) AS n, sum(k) AS keys FROM ev GROUP BY v % 10",
	"CREATE MATERIALIZED VIEW m8 AS SELECT count(*) AS n, sum(v) AS total FROM ev",
}

// BenchmarkManyViews measures issue 17's fan-out figure (see
// viewsBacklog): one GROUP BY view over a stream against eight different
// GROUP BY views over it, which share one JetStream reader and decoder,
// and the eight against PostgreSQL maintaining the same aggregates with
// triggers (pgTriggersRate).
func BenchmarkManyViews(b *testing.B) {
	sz := currentSizes(b)
	report.Configf("many views: %d events over %d keys published while paused; one view (%s) vs eight different GROUP BY views over the same stream; runs in the order one, eight, eight, one, each a fresh server",
		sz.backlog, sz.backlogKeys, manyViewsSQL[0][len("CREATE MATERIALIZED VIEW m1 AS "):])
	viewsBacklog{
		bench: manyViewsBench, subject: "bench.manyviews", views: manyViewsSQL,
		counted: func(n int) []string {
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("m%d", i+1)
			}
			return names
		},
		several: "eight views", target: "0.5",
		postgres: pgTriggersRate,
	}.run(b, sz)
}
