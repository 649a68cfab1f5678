// Package front is streamdb's PostgreSQL-dialect SQL front layer.
//
// Users write PostgreSQL-style SQL; the TiDB parser (MySQL dialect) reads
// query bodies. This package sits in front of it:
//
//   - Split breaks a simple-query string into statements.
//   - Parse reads one statement. Statements the TiDB parser does not know
//     (CREATE STREAM/TABLE/MATERIALIZED VIEW, DROP, SHOW, SET, FLUSH,
//     CHECKPOINT, SAVEPOINT, ROLLBACK TO, EXPLAIN, ...) are parsed here into
//     the node types of nodes.go. SELECT, INSERT, UPDATE and DELETE are
//     rewritten at the token level and handed to the TiDB parser.
//
// # Rewrites
//
// The rewrites work on tokens, never inside strings or comments, and keep a
// map from the rewritten text back to the original so that syntax errors
// report a 1-based character Position in the text the user wrote:
//
//   - Unquoted identifiers and keywords are folded to lower case, as
//     PostgreSQL does; "quoted" identifiers keep their case.
//   - $n parameters become ? markers; Statement.Params says which $n each
//     marker stands for.
//   - expr::type and CAST(expr AS type) become streamdb_cast(expr, 'type')
//     with a normalised type name ('bigint', 'double precision',
//     'timestamp with time zone', 'character varying(20)'; names that
//     types.Parse does not know are passed through lower-cased, without a
//     pg_catalog. prefix, e.g. 'regclass').
//   - Typed literals TIMESTAMP '...', TIMESTAMPTZ '...', DATE '...' (any
//     known type name followed by a string) become streamdb_cast('...',
//     'type'); INTERVAL '1 hour' and INTERVAL '10' SECOND become
//     streamdb_interval('1 hour') and streamdb_interval('10 second').
//   - a IS NOT DISTINCT FROM b becomes a <=> b; a IS DISTINCT FROM b becomes
//     NOT a <=> b (operands that are not a single primary are parenthesised).
//   - ORDER BY x [ASC|DESC] NULLS FIRST becomes (x) IS NULL DESC, x [ASC|DESC];
//     NULLS LAST becomes (x) IS NULL ASC, x [ASC|DESC].
//   - a FULL [OUTER] JOIN b ON cond becomes
//     a LEFT JOIN b ON streamdb_full_join() AND (cond). The binder must treat
//     a join whose ON condition's first conjunct is the call
//     streamdb_full_join() as a FULL OUTER JOIN on the remaining condition.
//   - a JOIN's USING (x) AS j becomes USING (x, streamdb_using_as.j)
//     (UsingAliasTable): the binder takes the qualified name as the alias
//     of the merged columns.
//   - TUMBLE(src, time_col, size) and HOP(src, time_col, slide, size) in a
//     FROM clause become a table named streamdb_window_N (aliased as src when
//     no alias follows), described in Statement.Windows.
//   - AS OF SAVEPOINT name | CHECKPOINT n | TIMESTAMP '...' is removed and
//     recorded in Statement.AsOf.
//   - EXTRACT(field FROM x) becomes date_part('field', x), so that every
//     PostgreSQL field (epoch, dow, ...) reads the same way.
//   - agg(x) FILTER (WHERE cond) becomes agg(CASE WHEN cond THEN x END)
//     (count(*) counts CASE WHEN cond THEN 1 END).
//   - a ~ b and a !~ b become a REGEXP b and a NOT REGEXP b, ~~ and !~~
//     become LIKE and NOT LIKE, OPERATOR(pg_catalog.op) becomes op, COLLATE
//     clauses are dropped (psql's \d queries use all of these), and a ^ b
//     becomes power(a, b) (^ is XOR in MySQL).
//   - x ISNULL and x NOTNULL become x IS NULL and x IS NOT NULL.
//   - The bitwise operators & | # << >> and prefix ~ are parenthesised to
//     group as in PostgreSQL (one left-associative level between + - and
//     the comparisons), and # (xor) becomes ^.
//   - TRIM([LEADING|TRAILING|BOTH] [chars] FROM s) becomes ltrim, rtrim or
//     btrim(s, chars); count() is 42809; FILTER on a call that is not an
//     aggregate is 42809.
//   - OFFSET without LIMIT, OFFSET before LIMIT and LIMIT ALL are put into
//     the LIMIT ... OFFSET form the TiDB parser reads. A LIMIT or OFFSET
//     count that is an expression is parsed on its own and put back into
//     the AST's Limit in place of a placeholder (limit_expr.go); its
//     parameters keep their place among the statement's.
//   - A subquery in FROM with a column list after its alias,
//     (SELECT ...) AS s(p, q), which the TiDB parser takes only after
//     LATERAL, gets a placeholder alias; the alias and the names are put
//     back into the AST's TableSource (derived_columns.go).
//   - VALUES lists become the UNION ALL of one-row SELECTs with columns
//     column1, column2, ... (or the names of an alias's column list), in
//     parentheses: as a FROM item or subquery, and as a query of its own
//     (VALUES (1), (2) ORDER BY 1, a set operation's branch); INSERT's
//     VALUES stays.
//   - An INSERT's ON CONFLICT ... DO NOTHING is removed into
//     Statement.OnConflict; ON CONFLICT ... DO UPDATE SET ... [WHERE c]
//     becomes ON DUPLICATE KEY UPDATE with the SET list's assignments and
//     c as an assignment to OnConflictWhere (on_conflict.go). The
//     target's alias (INSERT INTO t AS a) is removed into
//     Statement.InsertAlias.
//   - An empty select list (SELECT FROM t) gets the field
//     streamdb_no_columns() (NoColumnsFunc), which the binder drops.
//   - SELECT DISTINCT ON (e, ...) list becomes SELECT
//     streamdb_distinct_on(e, ...), list (DistinctOnFunc): the binder
//     takes the first field back as the DISTINCT ON expressions.
//   - Words the TiDB parser reserves but PostgreSQL allows as names (key,
//     rank, index, dec, over, values, set, ...) are quoted where they are
//     not keywords.
//   - The space PostgreSQL allows between a function name and its '('
//     (COUNT (*)) is dropped for the names the TiDB parser reads as calls
//     only without one.
//
// The names of the generated calls and tables are exported as CastFunc,
// IntervalFunc, FullJoinFunc, UsingAliasTable, NoColumnsFunc and
// WindowTablePrefix.
//
// Constructs the TiDB parser stops at and streamdb does not offer
// (RETURNING, ON CONFLICT, SIMILAR TO, arrays) are reported as
// 0A000 errors naming them rather than as syntax errors.
//
// The TiDB parser runs with ANSI_QUOTES, PIPES_AS_CONCAT and
// NO_BACKSLASH_ESCAPES, so "x" is an identifier, || concatenates and a
// backslash in a string is an ordinary character, as in PostgreSQL. E'...'
// and $$...$$ strings are decoded here and handed on as plain literals.
package front
