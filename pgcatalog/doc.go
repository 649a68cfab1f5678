// Package pgcatalog is PostgreSQL 15's pg_catalog and
// information_schema as streamdb shows them: the facts that are
// PostgreSQL's own and do not depend on a database (the rows of pg_proc
// for the functions streamdb has, the columns of the catalogs of
// objects streamdb does not have, the rows of pg_collation, pg_range and
// pg_tablespace), and the relations computed from the engine's catalog,
// which they read through the Engine interface that sql implements
// (pg_sequence, pg_depend and pg_rewrite so far). The other relations
// are still in package sql (sql/pgcatalog*.go, sql/infoschema*.go); they
// move here, one relation or function group per file.
//
// pgcatalog never imports sql, storage, broker or node (tests/arch).
package pgcatalog
