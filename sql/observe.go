package sql

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
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

// PebbleDB is the state store's database, for its metrics. It stays the
// same for the engine's life (a rollback replaces its contents, not it).
func (e *Engine) PebbleDB() *pebble.DB { return e.state.DB() }
