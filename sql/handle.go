package sql

import (
	"context"
	"fmt"
	"reflect"

	"streamdb/binder"
	"streamdb/front"
	"streamdb/sqlerr"
)

// One handler per statement kind. A statement's kind is the type of its
// syntax tree's root (front's nodes, and TiDB's for SELECT and DML);
// handlers maps each kind to the function that prepares it, which lives
// with the rest of its statement family. Adding a statement is one line
// here and one handler there.

// handler prepares one statement, whose node is of the handler's kind;
// ctx is Prepare's, params the statement's parameters.
type handler func(s *session, ctx context.Context, st *front.Statement, params *binder.Params) (*prepared, error)

// kindHandler is a handler with the kind it is registered for.
type kindHandler struct {
	kind reflect.Type
	h    handler
}

// handlers is the statement table. It is filled by init, as handlers
// reach prepareStatement again (COPY (query), EXECUTE).
var handlers map[reflect.Type]handler

func init() {
	handlers = handlerTable(
		// Queries (handle_query.go, subscribe.go, changes_between.go,
		// pgcatalog_psql.go).
		runs((*session).runEmpty),
		handles((*session).prepareSelect),
		handles((*session).prepareSetOpr),
		prepares((*session).prepareExplain),
		prepares((*session).prepareSubscribe),
		prepares((*session).prepareChangesBetween),
		prepares((*session).prepareCatalogQuery),

		// Writes to tables (insert.go, table_dml.go, table_truncate.go,
		// copy.go, lock.go).
		preparesBound((*session).prepareInsert),
		preparesBound((*session).prepareUpdate),
		preparesBound((*session).prepareDelete),
		prepares((*session).prepareTruncate),
		preparesIn((*session).prepareCopy),
		prepares((*session).prepareLock),

		// Transactions, savepoints, checkpoints (handle_txn.go,
		// set_constraints.go).
		runs((*session).runTransaction),
		prepares((*session).prepareSavepoint),
		prepares((*session).prepareReleaseSavepoint),
		prepares((*session).prepareRollbackTo),
		runs((*session).runCheckpoint),
		runs((*session).runRestoreViewGroup),
		runs((*session).setConstraints),

		// Cursors and prepared statements (subscribe_cursor.go,
		// prepare_sql.go, discard.go).
		preparesBound((*session).prepareDeclare),
		prepares((*session).prepareFetch),
		runs((*session).runCloseCursor),
		runs((*session).runPrepare),
		preparesIn((*session).prepareExecute),
		prepares((*session).prepareDeallocate),
		prepares((*session).prepareDiscard),

		// Session settings and the system (privileges.go, show.go,
		// handle_ddl.go).
		prepares((*session).prepareShowStatement),
		prepares((*session).prepareSet),
		runs((*session).runFlush),
		runs((*session).runAlterSystem),

		// Roles and privileges (roles.go, alter_owner.go).
		runs((*session).execRoleStmt),
		runs((*session).execGrant),
		runs((*session).alterOwner),

		// Streams, sources, sinks and secrets (handle_ddl.go, pg_source.go,
		// sinks.go, secrets.go, savepoints.go).
		runs((*session).runCreateSource),
		runsOnEngine((*Engine).createPGSource),
		prepares((*session).prepareCreateSink),
		runsOnEngine((*Engine).dropSink),
		runsOnEngine((*Engine).createSecret),
		runsOnEngine((*Engine).alterSecret),
		runsOnEngine((*Engine).dropSecret),
		runsOnEngine((*Engine).alterStreamPosition),

		// Views (handle_ddl.go, plain_views.go, refresh.go).
		handles((*session).prepareCreateMaterializedView),
		handles((*session).prepareCreateView),
		runsOnEngine((*Engine).refreshView),

		// Tables, indexes, sequences, schemas and the other DDL
		// (handle_ddl.go, table_constraints_ddl.go,
		// alter_table_column_constraints.go, alter_table_options.go,
		// rename.go, indexes.go, sequences.go, comments.go, schemas.go).
		prepares((*session).prepareDrop),
		runs((*session).alterConstraint),
		runs((*session).alterTableAndConstraints),
		runsOnEngine((*Engine).alterTableOptions),
		runsOnEngine((*Engine).renameRelation),
		runsOnEngine((*Engine).createIndex),
		runsOnEngine((*Engine).dropIndex),
		runsOnEngine((*Engine).createSequence),
		runsOnEngine((*Engine).alterSequence),
		runsOnEngine((*Engine).commentOn),
		runs(func(_ *session, ctx context.Context, n *front.CreateSchema) (string, error) {
			return createSchema(ctx, n)
		}),
		runs(func(_ *session, ctx context.Context, n *front.DropSchema) (string, error) { return dropSchema(ctx, n) }),
	)
}

// prepareStatement prepares st, whose catalog functions are substituted,
// with the handler of its kind.
func (s *session) prepareStatement(ctx context.Context, st *front.Statement, params *binder.Params) (*prepared, error) {
	h, ok := handlers[reflect.TypeOf(st.Node)]
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "statement %q is not supported", statementName(st.Text))
	}
	return h(s, ctx, st, params)
}

// handlerTable indexes hs by kind; a kind registered twice is a
// programming error.
func handlerTable(hs ...kindHandler) map[reflect.Type]handler {
	m := make(map[reflect.Type]handler, len(hs))
	for _, kh := range hs {
		if _, dup := m[kh.kind]; dup {
			panic(fmt.Sprintf("sql: two handlers for %v", kh.kind))
		}
		m[kh.kind] = kh.h
	}
	return m
}

// The registrations below take the kind from the handler's node
// parameter, so the table cannot pair a kind with another kind's handler.

// handles registers a handler that needs the whole statement.
func handles[N any](f func(*session, context.Context, N, *front.Statement, *binder.Params) (*prepared, error)) kindHandler {
	return kindHandler{reflect.TypeFor[N](), func(s *session, ctx context.Context, st *front.Statement, params *binder.Params) (*prepared, error) {
		return f(s, ctx, st.Node.(N), st, params)
	}}
}

// prepares registers a handler that prepares from the node alone.
func prepares[N any](f func(*session, N) (*prepared, error)) kindHandler {
	return kindHandler{reflect.TypeFor[N](), func(s *session, _ context.Context, st *front.Statement, _ *binder.Params) (*prepared, error) {
		return f(s, st.Node.(N))
	}}
}

// preparesBound registers a handler that prepares from the node and the
// statement's parameters.
func preparesBound[N any](f func(*session, N, *binder.Params) (*prepared, error)) kindHandler {
	return kindHandler{reflect.TypeFor[N](), func(s *session, _ context.Context, st *front.Statement, params *binder.Params) (*prepared, error) {
		return f(s, st.Node.(N), params)
	}}
}

// preparesIn registers a handler that prepares from the node with
// Prepare's context.
func preparesIn[N any](f func(*session, context.Context, N) (*prepared, error)) kindHandler {
	return kindHandler{reflect.TypeFor[N](), func(s *session, ctx context.Context, st *front.Statement, _ *binder.Params) (*prepared, error) {
		return f(s, ctx, st.Node.(N))
	}}
}

// runs registers a command of the session: nothing happens at Prepare,
// f runs at each Execute and returns the command tag.
func runs[N any](f func(*session, context.Context, N) (string, error)) kindHandler {
	return kindHandler{reflect.TypeFor[N](), func(s *session, _ context.Context, st *front.Statement, _ *binder.Params) (*prepared, error) {
		n := st.Node.(N)
		return command(func(ctx context.Context) (string, error) { return f(s, ctx, n) }), nil
	}}
}

// runsOnEngine registers a command of the engine, as runs does.
func runsOnEngine[N any](f func(*Engine, context.Context, N) (string, error)) kindHandler {
	return kindHandler{reflect.TypeFor[N](), func(s *session, _ context.Context, st *front.Statement, _ *binder.Params) (*prepared, error) {
		n := st.Node.(N)
		return command(func(ctx context.Context) (string, error) { return f(s.e, ctx, n) }), nil
	}}
}
