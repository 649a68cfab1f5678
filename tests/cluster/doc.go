// Package cluster tests servers of one --cluster on a three-node NATS
// cluster: every member registers and heartbeats (streamdb_nodes on the
// coordinator lists them with their heartbeat ages), a member killed
// with -9 shows stale and then leaves within the entry's TTL, the
// coordinator runs every view (SHOW MATERIALIZED VIEWS' node) and keeps
// the placement map in KV naming live nodes only, also after the
// coordinator itself is killed and another member takes over. The
// replay oracle (replay_test.go, one NATS server) replays a recorded
// control log into another server up to chosen epochs and compares its
// views with PostgreSQL over the input up to those epochs' cuts. The
// fault rounds (fault_rounds_test.go) kill or pause the coordinator or a
// member under writes and check, through every server, that nothing
// acknowledged is lost and every view and the sink are exact.
package cluster
