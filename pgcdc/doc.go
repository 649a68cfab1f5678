// Package pgcdc reads a PostgreSQL database's changes through logical
// replication (the pgoutput plugin, protocol version 1): it creates and
// drops replication slots, copies the tables of a publication as they
// were when a slot was created (its exported snapshot), and streams the
// committed transactions after that point, whole, in commit order.
//
// Values travel as PostgreSQL's text output; turning them into typed
// rows, and keeping the position a consumer has durably applied, is the
// caller's. The caller confirms a position only once what came before it
// is durable on its side, so the slot keeps everything not yet applied.
// The package imports no other streamdb package.
package pgcdc
