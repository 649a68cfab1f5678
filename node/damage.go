package node

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"streamdb/metrics"
	"streamdb/storage"
)

// damageMarker, in the data directory, says that the live state's files
// were found damaged (its text says which and how). A start that finds it
// recovers from the newest intact checkpoint or savepoint, never from the
// live state, and removes it once that state is open.
const damageMarker = "STATE-DAMAGED"

// readDamage returns the text of the damage marker, "" if there is none.
func readDamage(dataDir string) string {
	data, err := os.ReadFile(filepath.Join(dataDir, damageMarker))
	if err != nil {
		return ""
	}
	if text := strings.TrimSpace(string(data)); text != "" {
		return text
	}
	return "damaged files in the state directory"
}

// markDamaged writes the damage marker, synced, so that the next start
// recovers from a checkpoint even after a power cut.
func markDamaged(dataDir string, damage error) error {
	return storage.WriteFileSynced(filepath.Join(dataDir, damageMarker), []byte(damage.Error()+"\n"), 0o644)
}

// recoveredFromDamage logs, counts and clears a recovery from damaged
// state.
func recoveredFromDamage(dataDir, damage, from string, log *slog.Logger) {
	log.Error("RECOVERED FROM DAMAGED STATE: the live state's files were damaged; the state was restored from the newest intact checkpoint, and sources replay what came after it",
		"damage", damage, "restored_from", from)
	metrics.StateDamageRecoveries.Inc()
	if err := os.Remove(filepath.Join(dataDir, damageMarker)); err == nil {
		storage.SyncDir(dataDir)
	}
}

// watchDamage waits until Pebble reports damaged files in the live state
// (or the node closes). Then no checkpoint completes any more (the
// coordinator checks Store.Damage), the damage marker is written and
// notify is told, so that the process restarts and recovers.
func (n *Node) watchDamage(notify chan<- error) {
	select {
	case <-n.store.Damaged():
	case <-n.closing:
		return
	}
	damage := n.store.Damage()
	n.log.Error("the live state's files are damaged: restarting to recover from the newest intact checkpoint", "err", damage)
	if err := markDamaged(n.cfg.DataDir, damage); err != nil {
		n.log.Error("cannot write the damage marker; the next start may use the damaged state", "err", err)
	}
	if notify != nil {
		select {
		case notify <- fmt.Errorf("state store damaged: %w", damage):
		default:
		}
	}
}
