package recovery

import (
	"testing"
	"time"
)

// TestCrashRecovery kills streamdb with SIGKILL 12 times at random moments
// while a producer publishes about 3000 events per second to two streams
// (a standalone NATS keeps the input across kills), restarting it each
// time (three times also killing the next start while it restores). Checkpoints are taken every 200ms, so each restart recovers from a
// recent checkpoint and replays from its JetStream positions. At the end
// every view must equal PostgreSQL's batch answer over exactly the published
// events: nothing lost, nothing counted twice.
func TestCrashRecovery(t *testing.T) {
	runChaos(t, chaosOpts{
		config: []string{"execution.checkpointing.interval=200ms"},
		kills:  12,
		// 3 of the restarts are first interrupted by another kill -9
		// during startup.
		startupKills: 3,
		minDelay:     300 * time.Millisecond,
		maxDelay:     1500 * time.Millisecond,
		rate:         3000,
	})
}
