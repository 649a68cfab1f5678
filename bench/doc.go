// Package bench holds streamdb's benchmarks. They are Go benchmarks that
// start real server processes (tests/testutil), drive them over NATS and the
// PostgreSQL protocol, and report figures; they never assert on speed.
//
// Run them with
//
//	BENCH_MODE=quick go test -run '^$' -bench . -benchtime 1x -timeout 60m ./bench/
//
// BENCH_MODE is quick (default) or full. Each run prints a Markdown table and
// writes results/<timestamp>-<mode>.md and .json (the directory
// can be changed with BENCH_RESULTS_DIR).
package bench
