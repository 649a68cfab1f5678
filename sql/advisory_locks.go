package sql

import (
	"context"
	"sync"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/sqlerr"
)

// pg_advisory_xact_lock(key): a transaction-level advisory lock, as
// migration tools take one around their migrations (Kysely's Migrator).
// The lock is taken when the statement runs, waiting (cancellable) while
// another session holds it, and held until the session's transaction
// block ends; outside a block the statement is its transaction, so it
// only waits for the key to be free.

// advisoryLocks are the engine's advisory locks, by key.
type advisoryLocks struct {
	mu   sync.Mutex
	held map[int64]*session
	// free is closed, and replaced, whenever a lock is released.
	free chan struct{}
}

// lock takes key for s, waiting while another session holds it.
func (l *advisoryLocks) lock(ctx context.Context, s *session, key int64) error {
	for {
		l.mu.Lock()
		if l.held == nil {
			l.held = map[int64]*session{}
			l.free = make(chan struct{})
		}
		if h := l.held[key]; h == nil || h == s {
			l.held[key] = s
			l.mu.Unlock()
			return nil
		}
		ch := l.free
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return sqlerr.New(sqlerr.QueryCanceled, "canceling statement while waiting for advisory lock %d", key)
		}
	}
}

// releaseAll releases every lock s holds.
func (l *advisoryLocks) releaseAll(s *session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	released := false
	for k, h := range l.held {
		if h == s {
			delete(l.held, k)
			released = true
		}
	}
	if released {
		close(l.free)
		l.free = make(chan struct{})
	}
}

// advisoryXactLock substitutes pg_advisory_xact_lock(key): the lock is
// taken when the statement runs; the call reads as PostgreSQL's void, an
// empty value.
func (v *catalogFuncs) advisoryXactLock(args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) != 1 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "pg_advisory_xact_lock takes one bigint key here").
			WithHint("Combine two int keys into one bigint.")
	}
	key, ok := constInt(args[0])
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "pg_advisory_xact_lock needs a constant key").
			WithHint("Write the key as a literal: SELECT pg_advisory_xact_lock(42).")
	}
	s := v.s
	v.effects = append(v.effects, func(ctx context.Context) error {
		if err := s.e.advisory.lock(ctx, s, key); err != nil {
			return err
		}
		if s.tx == nil {
			s.e.advisory.releaseAll(s)
		}
		return nil
	})
	return value(""), nil
}
