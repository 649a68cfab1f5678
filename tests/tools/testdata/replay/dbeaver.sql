-- DBeaver's PostgreSQL plugin when it connects and opens the navigator,
-- from plugins/org.jkiss.dbeaver.ext.postgresql (dbeaver/dbeaver at
-- 005a1a1c): PostgreExecutionContext reads its defaults, PostgreDataSource
-- the server version, PostgreDatabase its schemas (SchemaCache) and
-- PostgreSchema its tables (TableCache, bound to public's OID, 2200).
-- The user and the server's version differ, so those compare columns.

-- compare: columns
SELECT current_schema(),session_user

-- compare: columns
SELECT version()

SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=n.oid AND d.objsubid=0 AND d.classoid='pg_namespace'::regclass
 WHERE nspname = 'public' ORDER BY nspname

-- compare: columns
SELECT c.oid,c.*,d.description FROM pg_catalog.pg_class c
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_class'::regclass
WHERE c.relnamespace=2200 AND c.relkind not in ('i','I','c')

SELECT c.relname, c.relkind FROM pg_catalog.pg_class c
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_class'::regclass
WHERE c.relnamespace=2200 AND c.relkind not in ('i','I','c')
