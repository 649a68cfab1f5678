package sql

import (
	"context"
	"errors"
	"sync"

	"streamdb/catalog"
	"streamdb/meta"
	"streamdb/types"
)

// The node and checkpoint coordinator of a fakeEngine, for DDL: a
// catalog change is stored in the fake node's in-memory Pebble through
// meta.Catalog as on a server, its JetStream streams are made in the
// fake JetStream, and the checkpoint each DDL statement takes is counted
// (fakeNode.ddlCheckpoints) instead of taken. Nothing here takes or
// restores a checkpoint: SAVEPOINT that needs a durable point and
// ROLLBACK TO one are refused with errFakeNoPoints.

// errFakeNoPoints is the fake node's answer to what needs a durable
// checkpoint or savepoint.
var errFakeNoPoints = errors.New("the fake node keeps no checkpoints or savepoints")

// fakeNode is the engineNode of a fakeEngine.
type fakeNode struct {
	e                  *Engine
	dataDir, schemaDir string

	mu sync.Mutex
	// ddlCheckpoints counts the checkpoints DDL statements asked for;
	// checkpoints those of CHECKPOINT.
	ddlCheckpoints, checkpoints int
	// failDDLCheckpoint, when set, is what the next DDL checkpoint fails
	// with (then it clears).
	failDDLCheckpoint error
	settings          meta.CheckpointSettings
	changed           []meta.SettingChange
}

func (n *fakeNode) Broker() *meta.Broker                     { return n.e.broker }
func (n *fakeNode) DataDir() string                          { return n.dataDir }
func (n *fakeNode) SchemaDir() string                        { return n.schemaDir }
func (n *fakeNode) SecretKeyPath() (string, bool)            { return n.dataDir + "/secret.key", false }
func (n *fakeNode) CheckpointRows() []types.Row              { return nil }
func (n *fakeNode) Close() error                             { return nil }
func (n *fakeNode) CheckpointRollback(context.Context) error { return errFakeNoPoints }

func (n *fakeNode) CheckpointSettings() meta.CheckpointSettings {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.settings
}

// ChangeSetting records the change; the fake host's settings stay at
// their defaults.
func (n *fakeNode) ChangeSetting(c meta.SettingChange) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.changed = append(n.changed, c)
	return nil
}

func (n *fakeNode) Checkpoint(context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.checkpoints++
	return nil
}

func (n *fakeNode) CheckpointDDL(context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.failDDLCheckpoint; err != nil {
		n.failDDLCheckpoint = nil
		return err
	}
	n.ddlCheckpoints++
	return nil
}

func (n *fakeNode) SinkStatus(*meta.SinkDescriptor) meta.SinkStatus { return meta.SinkStatus{} }

func (n *fakeNode) ReplaceState(*meta.StateStore, func(), func() error) error {
	return errFakeNoPoints
}

// fakeCoordinator is the checkpoint coordinator of a fakeEngine: no
// checkpoint is ever taken, so Exclusive only serialises its callers and
// no point is retained.
type fakeCoordinator struct{ mu sync.Mutex }

func (c *fakeCoordinator) Exclusive(fn func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fn()
}

func (c *fakeCoordinator) TakeSavepoint(context.Context, string) (*meta.CheckpointMeta, error) {
	return nil, errFakeNoPoints
}
func (c *fakeCoordinator) Remotes() (checkpoints, savepoints *meta.CheckpointRemote) { return nil, nil }
func (c *fakeCoordinator) ReleaseRemoteSavepoint(context.Context, string) error      { return nil }
func (c *fakeCoordinator) SetAfterCheckpoint(func(*meta.CheckpointMeta))             {}
func (c *fakeCoordinator) RetainedPositions() ([]meta.CheckpointPosition, error)     { return nil, nil }
func (c *fakeCoordinator) History() []meta.CheckpointMeta                            { return nil }
func (c *fakeCoordinator) Healthy() (bool, int)                                      { return true, 0 }
func (c *fakeCoordinator) DeleteAll()                                                {}

var (
	_ engineNode       = (*fakeNode)(nil)
	_ meta.Coordinator = (*fakeCoordinator)(nil)
)

// detachTables takes the tables' dataflows out of the runtime: CREATE
// TABLE registers one, which never starts (the fake runtime is not
// started), and reads would wait for it. The fake JetStream applies a
// table's changes to its state instead, as for a table of the catalog
// command.
func (f *fakeEngine) detachTables() {
	f.catMu.RLock()
	var ids []uint32
	for _, d := range f.objs {
		if d.Kind == catalog.KindTable {
			ids = append(ids, d.ID)
		}
	}
	f.catMu.RUnlock()
	for _, id := range ids {
		f.rt.Remove(id)
	}
}
