// Package pgcatalog is PostgreSQL 15's pg_catalog and
// information_schema as streamdb shows them: the facts that are
// PostgreSQL's own and do not depend on a database (the rows of pg_proc
// for the functions streamdb has, the columns of the catalogs of
// objects streamdb does not have). The relations computed from the
// catalog are still in package sql (sql/pgcatalog*.go,
// sql/infoschema*.go); they move here, one relation or function group
// per file, behind an interface that sql implements.
//
// pgcatalog never imports sql, storage, broker or node (tests/arch).
package pgcatalog
