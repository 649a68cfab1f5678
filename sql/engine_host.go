package sql

import (
	"context"

	"streamdb/exec"
	"streamdb/meta"
	"streamdb/types"
)

// engineHost is what sessions need of the node on the paths of ad-hoc
// reads and of writes: the memory pool every ad-hoc query draws on, the
// fence a write checks before it publishes (a server that lost its
// group's lease writes nothing), and the server's settings (how often a
// long wait reports, for one). The server's is its *meta.Node; the
// unit tests' engine without a node has its own (session_fake_test.go).
type engineHost interface {
	QueryPool() *exec.MemoryPool
	CheckFence() error
	Setting(key string) string
}

// natsLink is what a write needs to know of the NATS connection before
// it publishes: whether the connection is up, and the largest message
// it takes. The server's is its *broker.Broker.
type natsLink interface {
	Connected() bool
	MaxPayload() int64
}

// engineNode is what the engine asks of its node once open: checkpoints
// and their rows, settings, the schema and secret key files, the sinks'
// status, a rollback's state swap and shutdown. The server's is its
// *meta.Node; the unit tests' engine has a fake (session_fake_node_test.go).
type engineNode interface {
	Broker() *meta.Broker
	DataDir() string
	SchemaDir() string
	SecretKeyPath() (string, bool)
	CheckpointSettings() meta.CheckpointSettings
	ChangeSetting(c meta.SettingChange) error
	Checkpoint(ctx context.Context) error
	CheckpointDDL(ctx context.Context) error
	CheckpointRollback(ctx context.Context) error
	CheckpointRows() []types.Row
	SinkStatus(d *meta.SinkDescriptor) meta.SinkStatus
	ReplaceState(src *meta.StateStore, reset func(), load func() error) error
	Close() error
}

var _ engineNode = (*meta.Node)(nil)
