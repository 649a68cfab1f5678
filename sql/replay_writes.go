package sql

import "streamdb/sqlerr"

// refuseReplayWrite refuses a statement that writes table data on a
// server replaying another cluster's epochs (--replay-control): its
// tables take exactly the recorded cuts of their changelogs, so a write
// of its own would be acknowledged and never read back. DDL still runs:
// a replay holds the streams, tables and views created on it.
func (e *Engine) refuseReplayWrite(command string) error {
	if !e.rt.Following() {
		return nil
	}
	switch command {
	case "INSERT", "UPDATE", "DELETE", "COPY FROM", "TRUNCATE TABLE", "ROLLBACK TO":
		return sqlerr.New(sqlerr.ReadOnlySQLTransaction, "cannot execute %s on a server replaying a cluster's recorded epochs", command).
			WithHint("This server was started with --replay-control: its tables hold what the recorded cluster wrote. Write on a server of that cluster.")
	}
	return nil
}
