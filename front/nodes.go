package front

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/types"
)

// The statement nodes this package parses itself. Statement.Node holds a
// pointer to one of them, or a TiDB ast.StmtNode for queries and DML.

// ObjectKind is the kind of a catalog object.
type ObjectKind string

// Object kinds.
const (
	KindStream           ObjectKind = "stream"
	KindTable            ObjectKind = "table"
	KindMaterializedView ObjectKind = "materialized view"
	KindView             ObjectKind = "view"
)

// CreateSource is CREATE STREAM or CREATE TABLE. CREATE TABLE ... APPEND
// ONLY (and RisingWave's CREATE SOURCE) make a stream: Kind is KindStream
// and AppendOnly is true. AppendOnly is also set when CREATE STREAM says
// APPEND ONLY; a stream is append-only whether or not it says so.
type CreateSource struct {
	Kind        ObjectKind // KindStream or KindTable
	Schema      string     // schema of a dotted name, or ""
	Name        string
	IfNotExists bool
	Columns     []ColumnDef
	// PrimaryKey lists the key columns, from a column's PRIMARY KEY or a
	// PRIMARY KEY (a, b) clause; nil if there is none.
	PrimaryKey []string
	// Constraints are the UNIQUE, CHECK and FOREIGN KEY constraints, on
	// columns and after them, in the order written.
	Constraints []ConstraintDef
	Watermark   *Watermark
	// Options holds WITH (k = 'v', ...): keys lower-cased, values unquoted.
	// Nil when there is no WITH clause.
	Options    map[string]string
	AppendOnly bool
	// Includes are the INCLUDE clauses: columns after Columns, filled
	// from each message's metadata.
	Includes []Include
}

// ColumnDef is one column of CREATE STREAM / CREATE TABLE.
type ColumnDef struct {
	Name string
	// TypeName is the normalised type name ("character varying(20)",
	// "timestamp with time zone"); Type is what types.Parse makes of it.
	TypeName   string
	Type       types.Type
	NotNull    bool // NOT NULL, or part of the primary key
	PrimaryKey bool
	// Default is the DEFAULT expression, or nil; DefaultText is its text as
	// written.
	Default     ast.ExprNode
	DefaultText string
	// Serial: the type was serial, bigserial or smallserial (TypeName is
	// the integer type); the column takes its values from a sequence of
	// its own.
	Serial bool
	// Identity is GENERATED ALWAYS or BY DEFAULT AS IDENTITY ("" when the
	// column is not an identity column), with the options of its sequence.
	Identity        string
	IdentityOptions *SequenceOptions
	// Constraints are the column's UNIQUE, CHECK and REFERENCES
	// constraints.
	Constraints []ConstraintDef
	// Generated is the expression of GENERATED ALWAYS AS (expr) STORED,
	// or nil; GeneratedText is its text as written, without the
	// parentheses.
	Generated     ast.ExprNode
	GeneratedText string
}

// The kinds of identity columns (ColumnDef.Identity), as pg_attribute's
// attidentity says them.
const (
	IdentityAlways    = "a"
	IdentityByDefault = "d"
)

// Watermark is WATERMARK FOR column AS expr: the event-time column of a
// stream and the expression that gives its watermark from each row.
type Watermark struct {
	Column   string
	Expr     ast.ExprNode // parsed from the text after AS, after the rewrites
	ExprText string       // the text after AS as written
}

// CreateMaterializedView is CREATE MATERIALIZED VIEW [IF NOT EXISTS] name
// [(columns)] [WITH (options)] AS query. The query's parameters, windows and
// AS OF are on the Statement.
type CreateMaterializedView struct {
	Schema      string
	Name        string
	IfNotExists bool
	// Replace is CREATE OR REPLACE: an existing view of that name is
	// altered (Alter), a missing one created.
	Replace bool
	// Alter is ALTER MATERIALIZED VIEW name [WITH (...)] AS query: the
	// view must exist; its query is replaced, keeping operator state.
	Alter     bool
	Columns   []string          // optional column names
	Options   map[string]string // WITH (k = 'v', ...): keys lower-cased, values unquoted; nil without WITH
	Query     ast.ResultSetNode // *ast.SelectStmt or *ast.SetOprStmt
	QueryText string            // the query as written (for the catalog)
	// NoData is WITH NO DATA: the view is defined but not populated (no
	// dataflow runs and reading it fails) until REFRESH MATERIALIZED VIEW.
	NoData bool
}

// RefreshMaterializedView is REFRESH MATERIALIZED VIEW [CONCURRENTLY]
// name [WITH DATA]: it populates a view created WITH NO DATA; streamdb
// views are otherwise always current, so it waits until the view holds
// every write published so far, as FLUSH does.
type RefreshMaterializedView struct {
	Schema, Name string
	Concurrently bool
}

// CreateView is a plain CREATE [OR REPLACE] VIEW. It has the same shape as a
// materialized view; the caller decides whether to keep it as one or to
// refuse it.
type CreateView struct {
	Schema      string
	Name        string
	IfNotExists bool
	OrReplace   bool
	Columns     []string
	Query       ast.ResultSetNode
	QueryText   string
}

// Drop is DROP STREAM | TABLE | MATERIALIZED VIEW | VIEW [IF EXISTS] names
// [CASCADE | RESTRICT].
type Drop struct {
	Kind     ObjectKind
	Names    []string // last parts of the names
	Schemas  []string // their schemas ("" when not dotted), parallel to Names
	IfExists bool
	Cascade  bool
	// Source: written DROP SOURCE, which drops a PostgreSQL source of the
	// name if there is one, and a stream otherwise.
	Source bool
}

// Show is SHOW x. Target is "streams", "tables", "materialized views",
// "views", "checkpoints", "savepoints", "all", or the lower-cased name of a
// setting (SHOW TIME ZONE is "timezone", SHOW TRANSACTION ISOLATION LEVEL is
// "transaction_isolation").
type Show struct {
	Target string
}

// Set is SET [SESSION | LOCAL] name {= | TO} value, SET TIME ZONE value,
// RESET name, and ALTER SYSTEM SET / RESET (System). Reset is true for RESET
// and for SET name TO DEFAULT; Name is "all" for RESET ALL. Value is
// unquoted; a list of values is joined with ", ".
type Set struct {
	Name   string
	Value  string
	Local  bool
	System bool
	Reset  bool
	// Default marks a reset written as SET name TO DEFAULT (or SET TIME
	// ZONE LOCAL | DEFAULT), whose command tag is SET, not RESET.
	Default bool
	// Also are the further modes of SET TRANSACTION mode, mode: set
	// with this one.
	Also []*Set
}

// Flush is FLUSH: wait until all writes so far are visible in every view.
type Flush struct{}

// Checkpoint is CHECKPOINT: take a checkpoint now.
type Checkpoint struct{}

// Savepoint is SAVEPOINT name: take a durable, user-owned savepoint.
type Savepoint struct {
	Name string
}

// RollbackTo is ROLLBACK TO [SAVEPOINT] name, ROLLBACK TO CHECKPOINT n or
// ROLLBACK TO TIMESTAMP '...'.
type RollbackTo struct {
	Kind PointKind
	Name string // savepoint name
	ID   string // checkpoint id
	Time string // timestamp text
}

// ReleaseSavepoint is RELEASE [SAVEPOINT] name: delete a savepoint.
type ReleaseSavepoint struct {
	Name string
}

// SystemAction is what ALTER SYSTEM PAUSE / RESUME does.
type SystemAction string

// System actions.
const (
	SystemPause  SystemAction = "pause"
	SystemResume SystemAction = "resume"
)

// AlterSystem is ALTER SYSTEM PAUSE or ALTER SYSTEM RESUME.
type AlterSystem struct {
	Action SystemAction
}

// Stream positions for ALTER STREAM ... SET POSITION.
const (
	PositionEarliest  = "earliest"
	PositionLatest    = "latest"
	PositionTimestamp = "timestamp"
)

// AlterStreamPosition is ALTER STREAM s SET POSITION = 'earliest' |
// 'latest' | <sequence> | TIMESTAMP '...'. Position is "earliest",
// "latest", the sequence number's digits, or "timestamp" with Timestamp set.
type AlterStreamPosition struct {
	Schema    string
	Stream    string
	Position  string
	Timestamp string
}

// Explain is EXPLAIN [ANALYZE] [VERBOSE] stmt or EXPLAIN (options) stmt.
type Explain struct {
	Stmt    *Statement
	Analyze bool
	Verbose bool
	// Options holds the parenthesised options, keys lower-cased ("format":
	// "text"); ANALYZE and VERBOSE are reflected in the fields above too.
	Options map[string]string
}

// TxnAction is the action of a transaction statement.
type TxnAction string

// Transaction actions.
const (
	TxnBegin    TxnAction = "begin"
	TxnCommit   TxnAction = "commit"
	TxnRollback TxnAction = "rollback"
)

// Transaction is BEGIN / START TRANSACTION, COMMIT / END, ROLLBACK / ABORT.
// Modes are BEGIN's transaction modes (ISOLATION LEVEL ..., READ ONLY),
// as the local settings they make.
type Transaction struct {
	Action TxnAction
	Modes  []*Set
}

// Empty is a statement with no tokens (only whitespace or comments).
type Empty struct{}
