package sql

import (
	"context"
	"fmt"
	"time"

	"streamdb/meta"
)

// Ready reports whether the engine serves queries: it has recovered (Open
// returned) and epochs commit. It waits, until ctx ends, for one more
// epoch to commit.
func (e *Engine) Ready(ctx context.Context) error {
	start := e.rt.CommittedEpoch()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for e.rt.CommittedEpoch() == start {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no epoch committed since epoch %d", start)
		case <-tick.C:
		}
	}
	return nil
}

// Node is the opened server the engine runs over, for what the process
// reports of it (the state store's metrics: meta.Node.PebbleDB); nil for
// an engine over a unit test's fake node.
func (e *Engine) Node() *meta.Node {
	n, _ := e.node.(*meta.Node)
	return n
}
