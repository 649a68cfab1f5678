package meta

import (
	"errors"

	"streamdb/exec"
	"streamdb/sqlerr"
)

// A view or table whose input JetStream no longer holds (exec.ErrInputLost:
// a stream's limits dropped it, or it was purged once nothing retained
// needed it, and then an older state was restored from outside the
// server's directories) stops, and its reads fail with 55000 naming the
// missing range, never with rows that miss it.
func init() {
	sqlerr.Classify(func(err error) *sqlerr.Error {
		if !errors.Is(err, exec.ErrInputLost) {
			return nil
		}
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s", err.Error()).
			WithHint("The state was restored from a point older than the input JetStream still holds. Restore a newer checkpoint or savepoint, or drop and re-create what reads it.")
	})
}
