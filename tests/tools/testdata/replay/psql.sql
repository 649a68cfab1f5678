-- psql 15.18 (Debian 15.18-0+deb12u1) tab completion, captured from
-- PostgreSQL 15's statement log while psql completed, in a terminal:
-- "SELECT * FROM me<TAB>", "SELECT * FROM <TAB>", "\d me<TAB>",
-- "INSERT INTO metrics (<TAB>", "\dt pub<TAB>", "SET ti<TAB>" and
-- "\c <TAB>" (the queries of src/bin/psql/tab-complete.c at REL_15).

SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE c.relkind IN ('r', 'S', 'v', 'm', 'f', 'p') AND (c.relname) LIKE 'me%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')

SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE c.relkind IN ('r', 'S', 'v', 'm', 'f', 'p') AND (c.relname) LIKE '%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')

SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE (c.relname) LIKE 'me%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')

SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE (c.relname) LIKE 'metrics%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')

SELECT a.attname, NULL::pg_catalog.text FROM pg_catalog.pg_attribute a, pg_catalog.pg_class c WHERE c.oid = a.attrelid and a.attnum > 0 and not a.attisdropped AND (a.attname) LIKE '%' AND c.relname = 'metrics' AND pg_catalog.pg_table_is_visible(c.oid)

SELECT c.relname, NULL::pg_catalog.text FROM pg_catalog.pg_class c WHERE c.relkind IN ('r', 'p') AND (c.relname) LIKE 'pub%' AND pg_catalog.pg_table_is_visible(c.oid) AND c.relnamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog')

SELECT c.relname, n.nspname FROM pg_catalog.pg_class c, pg_catalog.pg_namespace n WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p') AND (c.relname) LIKE '%' AND n.nspname = 'public'

-- PostgreSQL has many more settings than streamdb.
-- compare: columns
SELECT pg_catalog.lower(name) FROM pg_catalog.pg_settings  WHERE context IN ('user', 'superuser')    AND pg_catalog.lower(name) LIKE pg_catalog.lower('ti%')

-- compare: columns
SELECT datname FROM pg_catalog.pg_database  WHERE datname LIKE '%'
