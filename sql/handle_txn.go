package sql

import (
	"context"

	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/types"
)

// The handlers of transaction blocks (BEGIN, COMMIT, ROLLBACK, txn.go),
// of savepoints, which are the block's inside one and durable
// whole-system savepoints outside (savepoints.go), of ROLLBACK TO a
// savepoint, checkpoint or time, and of CHECKPOINT.

// runTransaction runs BEGIN, COMMIT/END and ROLLBACK/ABORT.
func (s *session) runTransaction(ctx context.Context, n *front.Transaction) (string, error) {
	switch n.Action {
	case front.TxnBegin:
		return s.begin(n.Modes)
	case front.TxnCommit:
		return s.commit(ctx)
	}
	return s.rollbackTx(ctx)
}

// runCheckpoint runs CHECKPOINT once every write of the session is
// acknowledged.
func (s *session) runCheckpoint(ctx context.Context, _ *front.Checkpoint) (string, error) {
	if err := s.waitAllAcknowledged(ctx); err != nil {
		return "", err
	}
	return s.e.checkpointNow(ctx)
}

// prepareSavepoint: inside a transaction block SAVEPOINT is a transaction
// savepoint (txn.go); outside, a durable whole-system savepoint. Which one
// is decided when the statement runs.
func (s *session) prepareSavepoint(n *front.Savepoint) (*prepared, error) {
	durable := command(func(ctx context.Context) (string, error) {
		if err := s.waitAllAcknowledged(ctx); err != nil {
			return "", err
		}
		return s.e.createSavepoint(ctx, n.Name)
	})
	return s.inBlockOr(s.txSavepoint(n.Name), durable), nil
}

// prepareReleaseSavepoint releases a transaction or a durable savepoint,
// as prepareSavepoint decides.
func (s *session) prepareReleaseSavepoint(n *front.ReleaseSavepoint) (*prepared, error) {
	durable := command(func(context.Context) (string, error) { return s.e.releaseSavepoint(n.Name) })
	return s.inBlockOr(s.txRelease(n.Name), durable), nil
}

// prepareRollbackTo: ROLLBACK TO SAVEPOINT goes to a transaction or a
// durable savepoint, as prepareSavepoint decides; ROLLBACK TO a checkpoint
// or a time is always durable.
func (s *session) prepareRollbackTo(n *front.RollbackTo) (*prepared, error) {
	durable := command(func(ctx context.Context) (string, error) {
		m, err := s.e.resolvePoint(n.Kind, n.Name, n.ID, n.Time)
		if err != nil {
			return "", err
		}
		return s.e.rollback(ctx, m)
	})
	if n.Kind != front.PointSavepoint {
		return durable, nil
	}
	return s.inBlockOr(s.txRollbackTo(n.Name), durable), nil
}

// inBlockOr runs inBlock inside a transaction block and outside one
// otherwise.
func (s *session) inBlockOr(inBlock, outside *prepared) *prepared {
	return &prepared{run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		if s.tx != nil {
			return inBlock.run(ctx, vals, w)
		}
		return outside.run(ctx, vals, w)
	}}
}
