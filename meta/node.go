package meta

import (
	"github.com/cockroachdb/pebble/v2"

	"streamdb/broker"
	"streamdb/checkpoint"
	"streamdb/exec"
	"streamdb/node"
	"streamdb/sink"
	"streamdb/storage"
)

// Node is the opened server (package node) as the frontend reaches it:
// its components, its settings, the checkpoint coordinator as meta's
// services use it, the checkpoints the statements take (checkpoints.go),
// the sinks' publishing status and the state swap of a rollback.
// cmd/streamdb opens a node.Node and hands the SQL engine NewNode of it,
// so that sql reaches node, checkpoint and sink only through meta.
//
// Its methods take the node's settings lock (a leaf: see node.Node) or
// none, except ReplaceState (the coordinator's Exclusive, see there).
type Node struct {
	n *node.Node
}

// NewNode returns the frontend's view of n, opened by node.Open.
func NewNode(n *node.Node) *Node { return &Node{n: n} }

// Store is the state store. ReplaceState replaces what it holds, never
// the store itself.
func (n *Node) Store() *storage.Store { return n.n.Store() }

// PebbleDB is the state store's database, for its metrics. It stays the
// same for the server's life (a rollback replaces its contents, not it).
func (n *Node) PebbleDB() *pebble.DB { return n.n.Store().DB() }

// Broker is the server's NATS connection (and embedded server).
func (n *Node) Broker() *broker.Broker { return n.n.Broker() }

// Runtime runs the views' dataflows.
func (n *Node) Runtime() *exec.Runtime { return n.n.Runtime() }

// QueryPool is the memory pool all ad-hoc queries draw on.
func (n *Node) QueryPool() *exec.MemoryPool { return n.n.QueryPool() }

// Coordinator is the checkpoint coordinator, for meta's services (Points,
// Purger, DroppedStreams) and for the statements that pause checkpoints
// or take a savepoint of their own.
func (n *Node) Coordinator() Coordinator { return n.n.Coordinator() }

// DataDir is the data directory (a setting no client changes).
func (n *Node) DataDir() string { return n.n.DataDir() }

// SecretKeyPath is the key file of CREATE SECRET values, and whether
// --secret-key-file named it.
func (n *Node) SecretKeyPath() (string, bool) { return n.n.SecretKeyPath() }

// SchemaDir is the directory stream and sink schema files are read from.
func (n *Node) SchemaDir() string { return n.n.SchemaDir() }

// CheckFence is nil while this server may commit (always, for a server
// of no --ha-group).
func (n *Node) CheckFence() error { return n.n.CheckFence() }

// MarkRunning marks the data directory as in use, once the catalog is
// loaded: from then on a start that finds the mark recovers from a
// checkpoint.
func (n *Node) MarkRunning() error { return n.n.MarkRunning() }

// Start starts the runtime's barriers, periodic checkpoints and the sink
// publisher.
func (n *Node) Start() { n.n.Start() }

// Abandon closes what node.Open opened when the engine fails to start
// over it (before Start).
func (n *Node) Abandon() { n.n.Abandon() }

// Close shuts the node down cleanly (node.Node.Close).
func (n *Node) Close() error { return n.n.Close() }

// SettingChange is a SET, RESET or ALTER SYSTEM SET of a server setting.
type SettingChange = node.SettingChange

// Setting reads one server setting.
func (n *Node) Setting(key string) string { return n.n.Setting(key) }

// CheckpointSettings reads the current checkpoint settings.
func (n *Node) CheckpointSettings() checkpoint.Settings { return n.n.CheckpointSettings() }

// ChangeSetting applies a SET, RESET or ALTER SYSTEM SET of a server
// setting; its errors carry a SQLSTATE.
func (n *Node) ChangeSetting(c SettingChange) error { return n.n.ChangeSetting(c) }

// RestartSetting reports whether a server setting takes effect only at
// the next start (pg_settings.context "postmaster").
func RestartSetting(key string) bool { return node.RestartSetting(key) }

// ReplaceState replaces everything the state store holds with src's
// state (ROLLBACK TO), while checkpoints wait (the coordinator's
// Exclusive): every view stops, reset runs (the caller forgets what it
// cached of the old state), the sinks' outboxes and views are read
// (CaptureSinks), the store's contents are swapped at the runtime's
// committed epoch, the outboxes are put back with the changes that take
// each sink's consumers to the point (SinkCarry.Restore), and load
// starts the views again from the new state. The caller holds what keeps
// reads and catalog changes out (sql's ddlMu and stateMu).
func (n *Node) ReplaceState(src *storage.Store, reset func(), load func() error) error {
	store := n.n.Store()
	carry := func() (func(epoch uint64) error, error) {
		reset()
		sinks, err := CaptureSinks(store)
		if err != nil {
			return nil, err
		}
		return func(epoch uint64) error { return sinks.Restore(store, epoch) }, nil
	}
	return n.n.ReplaceState(src, carry, load)
}

// SinkStatus is how publishing a sink goes (sink.Status).
type SinkStatus = sink.Status

// SinkStatus returns how publishing sink d goes; the node must have
// started (Start).
func (n *Node) SinkStatus(d *storage.SinkDescriptor) SinkStatus { return n.n.Publisher().Status(d) }
