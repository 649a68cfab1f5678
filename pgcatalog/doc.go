// Package pgcatalog is PostgreSQL 15's pg_catalog and
// information_schema as streamdb shows them, one relation or function
// group per file, as RisingWave's system_catalog/pg_catalog:
//
//   - the facts that are PostgreSQL's own and do not depend on a
//     database: the rows of pg_proc for the functions streamdb has
//     (proc_data.go, pg_proc.go), pg_type (pg_type.go), the columns of
//     the catalogs of objects streamdb does not have (empty.go), and the
//     rows of pg_collation, pg_range and pg_tablespace (fixed.go);
//   - the system tables computed from the engine on every read
//     (tables.go holds their registry): pg_class, pg_attribute,
//     pg_description, pg_attrdef, pg_namespace (pg_class.go), pg_index
//     and pg_indexes (pg_index.go), pg_constraint (pg_constraint.go),
//     pg_tables, pg_views and pg_matviews (pg_tables.go), the sequences'
//     catalogs (pg_sequence.go), pg_depend and pg_rewrite (pg_depend.go),
//     pg_roles and pg_user (pg_roles.go), pg_stat_activity, pg_database,
//     pg_settings and pg_extension, and information_schema
//     (information_schema.go);
//   - the answers of the catalog functions and of the reg* types' input
//     and output (functions.go, names.go), and of psql's and the drivers'
//     describe queries (describe.go).
//
// Everything is computed from the user relations and the other facts the
// Engine interface returns (engine.go, relations.go), which package sql
// implements; sql resolves a system table's name here, and rewrites the
// calls of catalog functions into their answers.
//
// pgcatalog never imports sql, storage, broker or node (tests/arch).
package pgcatalog
