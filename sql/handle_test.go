package sql

import (
	"reflect"
	"testing"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/plan"
)

// TestHandlersCoverStatements checks the statement table against one
// statement of each kind the parser makes: each has a handler, and each
// handler is for one of them.
func TestHandlersCoverStatements(t *testing.T) {
	stmts := []string{
		";",
		"SELECT 1",
		"SELECT 1 UNION SELECT 2",
		"EXPLAIN SELECT 1",
		"SUBSCRIBE TO v",
		"SELECT * FROM v CHANGES BETWEEN CHECKPOINT 1 AND CHECKPOINT 2",
		"INSERT INTO t VALUES (1)",
		"UPDATE t SET a = 1",
		"DELETE FROM t",
		"TRUNCATE t",
		"COPY t FROM STDIN",
		"LOCK TABLE t",
		"BEGIN",
		"COMMIT",
		"ROLLBACK",
		"SAVEPOINT p",
		"RELEASE SAVEPOINT p",
		"ROLLBACK TO SAVEPOINT p",
		"ROLLBACK TO CHECKPOINT 1",
		"CHECKPOINT",
		"ALTER MATERIALIZED VIEW v RESTORE GROUP FROM '/tmp/chk'",
		"SET CONSTRAINTS ALL DEFERRED",
		"DECLARE c CURSOR FOR SELECT 1",
		"FETCH c",
		"CLOSE c",
		"PREPARE p AS SELECT 1",
		"EXECUTE p",
		"DEALLOCATE p",
		"DISCARD ALL",
		"SHOW timezone",
		psqlListRelations,
		"SET timezone = 'UTC'",
		"FLUSH",
		"ALTER SYSTEM PAUSE",
		"CREATE USER u",
		"GRANT SELECT ON t TO u",
		"ALTER TABLE t OWNER TO u",
		"CREATE STREAM s (a int) WITH (subject = 'x')",
		"CREATE TABLE t (a int)",
		"CREATE SOURCE pg FROM POSTGRES (CONNECTION 'host=x', PUBLICATION 'p') FOR ALL TABLES",
		"CREATE SINK k FROM v INTO 'x'",
		"DROP SINK k",
		"CREATE SECRET x AS 'y'",
		"ALTER SECRET x AS 'z'",
		"DROP SECRET x",
		"CREATE MATERIALIZED VIEW v AS SELECT 1",
		"CREATE VIEW w AS SELECT 1",
		"REFRESH MATERIALIZED VIEW v",
		"DROP TABLE t",
		"ALTER TABLE t ADD CONSTRAINT c UNIQUE (a)",
		"ALTER TABLE t ADD COLUMN b int",
		"ALTER TABLE t RENAME TO u",
		"ALTER TABLE t SET (retention = '1h')",
		"ALTER STREAM s SET POSITION = 'earliest'",
		"CREATE INDEX i ON t (a)",
		"DROP INDEX i",
		"CREATE SEQUENCE q",
		"ALTER SEQUENCE q RESTART",
		"COMMENT ON TABLE t IS 'x'",
		"CREATE SCHEMA x",
		"DROP SCHEMA x",
	}
	kinds := map[reflect.Type]bool{}
	for _, sql := range stmts {
		st, err := front.Parse(sql)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		kinds[reflect.TypeOf(st.Node)] = true
		if _, ok := handlers[reflect.TypeOf(st.Node)]; !ok {
			t.Errorf("%s: no handler for %T", sql, st.Node)
		}
	}
	for k := range handlers {
		if !kinds[k] {
			t.Errorf("a handler for %v, which no statement here makes: add one", k)
		}
	}
}

// psqlListRelations is psql 15's \d query, which the parser recognises
// by its shape.
const psqlListRelations = `SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','v','m','S','f','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;`

// TestBoundViewBindsOnce checks that CREATE MATERIALIZED VIEW's run uses
// the plan bound at Prepare while the catalog is the one it was bound
// against, once, and binds again otherwise.
func TestBoundViewBindsOnce(t *testing.T) {
	e := &Engine{objs: map[string]*catalog.Descriptor{"t": {Name: "t", Kind: catalog.KindTable}}}
	binds := 0
	bind := func() (plan.Node, error) {
		binds++
		return &plan.Values{}, nil
	}
	b, err := e.bindOnce(bind)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.plan(); err != nil || binds != 1 {
		t.Fatalf("first run over the same catalog: %d binds (err %v), want 1", binds, err)
	}
	if _, err := b.plan(); err != nil || binds != 2 {
		t.Fatalf("second run: %d binds (err %v), want 2: the plan is handed out once", binds, err)
	}

	b, _ = e.bindOnce(bind)
	e.objs["t"] = &catalog.Descriptor{Name: "t", Kind: catalog.KindTable}
	if _, err := b.plan(); err != nil || binds != 4 {
		t.Fatalf("run after t changed: %d binds (err %v), want 4", binds, err)
	}
	b, _ = e.bindOnce(bind)
	e.objs["u"] = &catalog.Descriptor{Name: "u", Kind: catalog.KindTable}
	if _, err := b.plan(); err != nil || binds != 6 {
		t.Fatalf("run after u was created: %d binds (err %v), want 6", binds, err)
	}
}
