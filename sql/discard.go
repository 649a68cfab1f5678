package sql

import (
	"context"

	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// DISCARD and DEALLOCATE, which connection poolers (a pgbouncer reset)
// and drivers (psycopg 3) send. Prepared statements live in the
// connection (pgwire), reached through the RowWriter's
// PreparedStatements.

// prepareDeallocate prepares DEALLOCATE name and DEALLOCATE ALL.
func (s *session) prepareDeallocate(n *front.Deallocate) (*prepared, error) {
	return &prepared{run: func(_ context.Context, _ []types.Datum, w pgwire.RowWriter) (string, error) {
		ps, _ := w.(pgwire.PreparedStatements)
		if n.All {
			s.deallocateNamed("")
			if ps != nil {
				ps.DeallocateAll()
			}
			return "DEALLOCATE ALL", nil
		}
		if s.deallocateNamed(n.Name) {
			return "DEALLOCATE", nil
		}
		if ps == nil || !ps.Deallocate(n.Name) {
			return "", sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement %q does not exist", n.Name)
		}
		return "DEALLOCATE", nil
	}}, nil
}

// prepareDiscard: DISCARD ALL resets the session as a new one starts (it
// refuses to run in a transaction block, as PostgreSQL): settings to
// their defaults, cursors closed, prepared statements removed, and what
// currval and lastval answer forgotten. DISCARD SEQUENCES forgets only
// the latter. streamdb caches no plans across statements and has no
// temporary tables, so DISCARD PLANS and TEMP have nothing to do.
func (s *session) prepareDiscard(n *front.Discard) (*prepared, error) {
	return &prepared{run: func(_ context.Context, _ []types.Datum, w pgwire.RowWriter) (string, error) {
		if n.What == "SEQUENCES" {
			s.seqs = seqSession{}
		}
		if n.What != "ALL" {
			return "DISCARD " + n.What, nil
		}
		s.seqs = seqSession{}
		if s.tx != nil {
			return "", sqlerr.New(sqlerr.ActiveSQLTransaction, "DISCARD ALL cannot run inside a transaction block")
		}
		s.resetAllSettings()
		s.closeAllCursors()
		s.deallocateNamed("")
		if ps, ok := w.(pgwire.PreparedStatements); ok {
			ps.DeallocateAll()
		}
		return "DISCARD ALL", nil
	}}, nil
}
