// Package cluster is what the servers of one --cluster share besides the
// coordinator's lease (package ha): membership, the view-groups of the
// catalog and the placement of those groups on servers.
//
// Membership is one entry per server in the key-value bucket
// SDB_NODES_<cluster>, whose entries the NATS server expires after the
// bucket's TTL; each server rewrites its own entry every heartbeat with
// a compare-and-set on the revision it last wrote, and deletes it on a
// clean shutdown. How old a heartbeat is is judged by the NATS server's
// clock alone: the time it stored the entry, against the time it stored
// the reader's own newest heartbeat.
//
// A view-group is a connected part of the graph of materialized views
// (groups.go); the placement map (placement.go) says which server runs
// each group, and only ever changes by compare-and-set on its revision.
// Assign (assign.go) computes a new map from the old one and the live
// servers' loads.
package cluster
