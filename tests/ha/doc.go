// Package ha tests servers of one --ha-group against an external NATS
// (one server, or a three-node cluster): standbys refuse sessions with
// 57P03 naming the active server and are not ready on /readyz, clients
// given every host find the active one, a standby takes over when the
// active server's lease expires (kill -9 under load, views compared with
// PostgreSQL) with the roles and savepoints the old active server made, a
// server paused past its lease commits nothing and steps down, and a
// signal while taking over stops a server cleanly and releases the lease.
package ha
