// Package ha tests servers of one --ha-group against an external NATS:
// standbys refuse sessions with 57P03 naming the active server, clients
// given every host find the active one, a standby takes over when the
// active server's lease expires, and a server paused past its lease
// commits nothing and steps down.
package ha
