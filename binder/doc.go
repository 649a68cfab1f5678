// Package binder turns a parsed statement (front's AST) into a logical
// plan (plan.Node) against a catalog: name resolution, types, aggregates,
// windows, set-returning functions, subqueries, and the decorrelation of
// a materialized view's subqueries and LATERAL joins into joins. It reads
// the catalog only through Catalog and the session only through Session,
// so that it runs without a server (OfflineCatalog, testdata/plan).
//
// sql calls it through a small API:
//
//   - BindQuery binds a SELECT (or set operation); BindView and
//     BindUnpopulatedView bind a materialized view's query and
//     decorrelate it; CheckStreamable refuses what a view cannot
//     compute; BindPlainViewQuery binds a plain view's stored text.
//   - ExprBinder binds one expression over a Scope (a table's columns):
//     DML's VALUES, SET, WHERE and RETURNING, defaults, CHECKs and USING.
//   - Params carries a statement's parameters and context (NewParams,
//     NoParams; BindContext makes a long bind stop when the statement is
//     cancelled).
//   - The nodes only ad-hoc queries run (LateralJoin, RecursiveCTE,
//     SRFNode, SetOp) are exported for sql's runners, with MapPlan to
//     copy plans that hold them.
//
// It never imports sql, pgwire, node, storage, broker, checkpoint, sink,
// Pebble or nats.go (tests/arch).
package binder
