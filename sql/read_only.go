package sql

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A transaction is read only when BEGIN READ ONLY or SET TRANSACTION READ
// ONLY made it so, or default_transaction_read_only was on when it
// began; a statement outside a block is its own transaction under
// default_transaction_read_only. As in PostgreSQL, a read-only
// transaction refuses every statement that changes data or the catalog
// (25006) and may still read, SET, CHECKPOINT and take savepoints.

// readOnly reports whether the statement about to run is in a read-only
// transaction.
func (s *session) readOnly() bool {
	if s.alwaysReadOnly {
		return true
	}
	if s.tx != nil {
		return s.settings["transaction_read_only"] == "on"
	}
	return s.settings["default_transaction_read_only"] == "on"
}

// beginSettings starts a block's transaction_read_only from
// default_transaction_read_only, then applies BEGIN's own modes.
func (s *session) beginSettings(modes []*front.Set) {
	ro := "off"
	if s.settings["default_transaction_read_only"] == "on" {
		ro = "on"
	}
	s.setSetting("transaction_read_only", ro, true)
	for _, m := range modes {
		s.setSetting(m.Name, m.Value, true)
	}
}

// writeCommand names the command n runs when it changes data or the
// catalog ("INSERT", "CREATE TABLE"), or is "" for one a read-only
// transaction may run.
func writeCommand(st *front.Statement) string {
	switch n := st.Node.(type) {
	case *ast.InsertStmt:
		return "INSERT"
	case *ast.UpdateStmt:
		return "UPDATE"
	case *ast.DeleteStmt:
		return "DELETE"
	case *front.Copy:
		if n.From {
			return "COPY FROM"
		}
		return ""
	case *front.Truncate:
		return "TRUNCATE TABLE"
	case *front.RefreshMaterializedView:
		return "REFRESH MATERIALIZED VIEW"
	case *front.RollbackTo:
		if n.Kind != front.PointSavepoint {
			return "ROLLBACK TO"
		}
		return ""
	case ast.DDLNode, *front.AlterTable, *front.AlterTableConstraint, *front.AlterTableOptions,
		*front.AlterStreamPosition, *front.AlterSequence, *front.AlterSystem, *front.Comment,
		*front.CreateIndex, *front.DropIndex, *front.CreateSource, *front.CreateMaterializedView,
		*front.CreateView, *front.CreatePGSource, *front.CreateSchema, *front.DropSchema,
		*front.CreateSequence, *front.CreateSink, *front.DropSink, *front.Drop,
		*front.RenameRelation, *front.RoleStmt, *front.Grant, *front.AlterOwner,
		*front.CreateSecret, *front.AlterSecret, *front.DropSecret:
		return statementName(st.Text)
	}
	return ""
}

// refuseInReadOnly makes p fail with 25006 when it runs in a read-only
// transaction and changes data or the catalog. The check is made when
// the statement runs, since SET TRANSACTION may come between a prepare
// and its execute.
func (s *session) refuseInReadOnly(st *front.Statement, p *prepared) *prepared {
	name := writeCommand(st)
	if name == "" || p == nil || p.run == nil {
		return p
	}
	run := p.run
	p.run = func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		if s.readOnly() {
			return "", sqlerr.New(sqlerr.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", name)
		}
		if err := s.e.refuseReplayWrite(name); err != nil {
			return "", err
		}
		return run(ctx, vals, w)
	}
	return p
}
