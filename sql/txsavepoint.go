package sql

import (
	"context"

	"streamdb/sqlerr"
)

// Inside an explicit transaction block (BEGIN ... COMMIT), SAVEPOINT,
// RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT are transaction savepoints, as
// drivers and psql's ON_ERROR_ROLLBACK use them. streamdb runs every
// statement on its own, so they mark nothing and undo nothing; they only
// keep the names so that misuse errors as in PostgreSQL. Durable,
// whole-system savepoints are taken outside transaction blocks.

func (s *session) txSavepoint(name string) *prepared {
	return command(func(context.Context) (string, error) {
		s.txSavepoints = append(s.txSavepoints, name)
		return "SAVEPOINT", nil
	})
}

func (s *session) txFind(name string) int {
	for i := len(s.txSavepoints) - 1; i >= 0; i-- {
		if s.txSavepoints[i] == name {
			return i
		}
	}
	return -1
}

func (s *session) txRelease(name string) *prepared {
	return command(func(context.Context) (string, error) {
		i := s.txFind(name)
		if i < 0 {
			return "", sqlerr.New(invalidSavepoint, "savepoint %q does not exist", name)
		}
		s.txSavepoints = s.txSavepoints[:i]
		return "RELEASE", nil
	})
}

func (s *session) txRollbackTo(name string) *prepared {
	return command(func(context.Context) (string, error) {
		i := s.txFind(name)
		if i < 0 {
			return "", sqlerr.New(invalidSavepoint, "savepoint %q does not exist", name)
		}
		s.txSavepoints = s.txSavepoints[:i+1]
		return "ROLLBACK", nil
	})
}
