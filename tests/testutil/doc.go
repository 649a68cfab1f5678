// Package testutil starts the processes that streamdb's integration tests
// talk to: the streamdb server itself (built once per test binary), a
// standalone NATS server with JetStream, and a real PostgreSQL server for
// differential tests.
//
// Everything runs on free ports chosen at run time and in temporary
// directories, and is stopped by t.Cleanup. Readiness is always detected by
// polling with a deadline, never by fixed sleeps.
package testutil
