// Package e2e holds end-to-end tests that drive a real streamdb process
// (tests/testutil.StartServer) with the pgx driver and with NATS producers:
// the extended and simple query protocols and type encoding, error
// SQLSTATEs and positions, external JSON producers and malformed input,
// restart, misbehaving clients and query cancellation, and an external
// NATS server given with --nats-url.
//
// Run: go test ./tests/e2e (STREAMDB_BIN=bin/streamdb uses a prebuilt binary).
package e2e
