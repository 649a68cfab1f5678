// Package recovery tests streamdb's checkpoints and recovery against real
// server processes (tests/testutil): repeated kill -9 under a steady
// producer with every view checked against PostgreSQL's batch answer over
// exactly the published events; each checkpoint setting
// (execution.checkpointing.*, state.checkpoints.*, in config.Settings); damaged checkpoints skipped on recovery; exactly-once versus
// at-least-once processing of a multi-source view; input that
// JetStream no longer holds when a view resumes; and power cuts, with the
// data directory on a filesystem that keeps only what was fsynced
// (tests/testutil/powercut; needs /dev/fuse).
//
// The random parts (event content, kill moments) come from a seed that every
// test logs; RECOVERY_SEED=<n> replays one.
//
// Run: go test ./tests/recovery (STREAMDB_BIN=bin/streamdb uses a prebuilt
// binary). Needs PostgreSQL server binaries, as tests/differential does.
package recovery
