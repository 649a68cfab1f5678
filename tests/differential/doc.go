// Package differential holds the differential test of streamdb against
// PostgreSQL: the same generated events go to a streamdb stream (as JSON on
// NATS JetStream) and to a PostgreSQL table, and every materialized view
// must equal its defining query run as a batch in PostgreSQL.
//
// Run it with a fixed seed to replay a failure:
//
//	DIFF_SEED=123 go test ./tests/differential -run TestDifferential -v
//
// DIFF_EVENTS overrides the number of generated events.
package differential
