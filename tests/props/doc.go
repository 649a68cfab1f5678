// Package props holds property tests of streamdb's values and operators
// against a real PostgreSQL 15 given the same statements.
//
// TestValues drives random values of every supported type, edge values
// first, through INSERT into a table and into a stream (as literals, as
// text parameters and as binary parameters), the table's changelog, a
// materialized view over each, and SELECT in the text and the binary
// format. TestOperators evaluates operators, casts and functions on random
// edge inputs. TestAggregates groups edge and random values of the numeric
// types and intervals, ad hoc and in a materialized view, through inserts
// and then deletes. TestQueries runs generated SELECTs (subqueries,
// correlated or not, aggregates, CASE, ORDER BY/LIMIT, DISTINCT ON, WITH
// TIES, bitwise operators, jsonb) over two tables of five integer columns
// and one with a jsonb column too (make queries: 2,000 of them);
// TestQueriesAsViews makes a quarter as many of them materialized views
// and compares them with PostgreSQL's after rounds of inserts, updates
// and deletes. TestSubqueryViewsChurn creates and drops views with
// subqueries (anti joins, scalar subqueries, DISTINCT ON over them) while
// one session writes to both their input tables, and compares each with
// PostgreSQL after a FLUSH (make views-churn runs many rounds). TestJSON draws random JSON documents and checks the json
// and jsonb operators and functions (jsonb_path_ included) on each, ad
// hoc and in views through inserts, updates and deletes. Each result must
// equal PostgreSQL's, or fail with PostgreSQL's SQLSTATE when PostgreSQL
// refuses (TestQueries: its SQLSTATE class).
//
// TestValues does not generate json and jsonb (TestJSON covers them) nor
// bytea; time, time(3) and timetz it does.
//
// Each test logs its seed; replay a failure with it, and run longer with
// more cases:
//
//	STREAMDB_PROP_SEED=123 go test ./tests/props -run TestValues -v
//	STREAMDB_PROP_CASES=5000 go test ./tests/props   (or make props)
//
// The default size keeps a run within about a minute on two cores.
package props
