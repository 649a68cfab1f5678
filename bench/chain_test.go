package bench

import (
	"fmt"
	"testing"
)

const chainBench = "view chain"

// chainSQL is a chain of four views over stream ev, each over the one
// before; the first is also the single view the chain is compared with.
var chainSQL = []string{
	"CREATE MATERIALIZED VIEW c1 AS SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k",
	"CREATE MATERIALIZED VIEW c2 AS SELECT k, n, total FROM c1 WHERE total >= 0",
	"CREATE MATERIALIZED VIEW c3 AS SELECT k % 100 AS b, sum(n) AS n, sum(total) AS total FROM c2 GROUP BY k % 100",
	"CREATE MATERIALIZED VIEW c4 AS SELECT sum(n) AS n, sum(total) AS total FROM c3",
}

// BenchmarkViewChain measures issue 17's chain figure (see viewsBacklog):
// one GROUP BY view over a stream against a chain of four views each over
// the one before (the same view, a filter, a regrouping, a total).
func BenchmarkViewChain(b *testing.B) {
	sz := currentSizes(b)
	report.Configf("view chain: %d events over %d keys published while paused; one view (%s) vs a chain of four views each over the one before; runs in the order one, chain, chain, one, each a fresh server",
		sz.backlog, sz.backlogKeys, chainSQL[0][len("CREATE MATERIALIZED VIEW c1 AS "):])
	viewsBacklog{
		bench: chainBench, subject: "bench.chain", views: chainSQL,
		counted: func(n int) []string { return []string{fmt.Sprintf("c%d", n)} },
		several: "chain of four views", target: "0.6",
	}.run(b, sz)
}
