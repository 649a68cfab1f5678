package rewrite

import (
	"slices"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/sqlerr"
	"streamdb/types"
)

// fakeEngine is a pgcatalog.Engine over one table t and one
// materialized view mv, without a server.
type fakeEngine struct{}

func (fakeEngine) Relations() []pgcatalog.Relation {
	return []pgcatalog.Relation{
		{OID: pgcatalog.FirstUserOID + 2, Name: "mv", Kind: "m", Owner: pgcatalog.BootstrapUser, Query: "SELECT g FROM t;",
			Columns: []pgcatalog.Column{{Name: "g", Type: types.Int4}}},
		{OID: pgcatalog.FirstUserOID + 1, Name: "t", Kind: "r", Owner: pgcatalog.BootstrapUser, Comment: "the table",
			PrimaryKey: []string{"id"},
			Columns: []pgcatalog.Column{{Name: "id", Type: types.Int4, NotNull: true}, {Name: "g", Type: types.Int4, Comment: "group"},
				{Name: "n", Type: types.Int8, Default: "nextval('t_n_seq'::regclass)"}}},
	}
}
func (fakeEngine) Sequences() []pgcatalog.Sequence {
	return []pgcatalog.Sequence{{OID: pgcatalog.FirstUserOID + 3, Name: "t_n_seq", Type: "bigint"}}
}
func (fakeEngine) SequenceLastValue(int64) (int64, bool) { return 0, false }
func (fakeEngine) OwnedSequences() []pgcatalog.OwnedSequence {
	return []pgcatalog.OwnedSequence{{OID: pgcatalog.FirstUserOID + 3, TableOID: pgcatalog.FirstUserOID + 1, Column: 3}}
}
func (fakeEngine) Views() []pgcatalog.View                       { return nil }
func (fakeEngine) DefaultSequences() []pgcatalog.DefaultSequence { return nil }
func (fakeEngine) EngineTables() map[string][]types.Column       { return nil }
func (fakeEngine) Backends() []pgcatalog.Backend                 { return nil }
func (fakeEngine) Setting(key string) (string, bool)             { return "v-" + key, false }
func (fakeEngine) SessionDefaults() map[string]string            { return nil }
func (fakeEngine) Roles() []pgcatalog.Role {
	return []pgcatalog.Role{{OID: 10, Name: pgcatalog.BootstrapUser, Superuser: true, Login: true}}
}

// fakeSession is a session of database shop with one setting, whose
// role holds SELECT on t alone, and whose Call answers version() (as
// sql answers set_config) and records it.
type fakeSession struct{ called []string }

// fakeRole holds SELECT on t and nothing on mv.
type fakeRole struct{}

func (fakeRole) Holds(privs []string) map[int64]bool {
	return map[int64]bool{pgcatalog.FirstUserOID + 1: slices.Equal(privs, []string{"SELECT"}), pgcatalog.FirstUserOID + 2: false}
}

func (*fakeSession) PrivilegeRole(arg ast.ExprNode) (Role, error) {
	if name, _ := ConstString(arg); name == "nobody" {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
	}
	return fakeRole{}, nil
}

func (*fakeSession) Catalog() pgcatalog.Engine { return fakeEngine{} }
func (*fakeSession) DatabaseName() string      { return "shop" }
func (*fakeSession) BackendPID() int64         { return 42 }
func (*fakeSession) Setting(key string) (string, bool) {
	if key == "application_name" {
		return "psql", true
	}
	return "", false
}
func (f *fakeSession) Call(name string, args []ast.ExprNode) (ast.ExprNode, bool, error) {
	if name != "version" {
		return nil, false, nil
	}
	f.called = append(f.called, name)
	return Value("fake"), true, nil
}

// rewritten is sql after Statement, as SQL text again.
func rewritten(t *testing.T, s Session, sql string) (string, error) {
	t.Helper()
	st, err := front.Parse(sql)
	if err != nil {
		t.Fatalf("parse %q: %v", sql, err)
	}
	if err := Statement(st.Node, s); err != nil {
		return "", err
	}
	var sb strings.Builder
	if err := st.Node.(ast.Node).Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordUppercase, &sb)); err != nil {
		t.Fatalf("restore %q: %v", sql, err)
	}
	return sb.String(), nil
}

func TestStatementSubstitutes(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{"SELECT current_database(), current_setting('application_name'), pg_backend_pid()",
			"SELECT 'shop' AS current_database,'psql' AS current_setting,42 AS pg_backend_pid"},
		{"SELECT 1 FROM pg_class WHERE oid = 't'::regclass", "SELECT 1 FROM pg_class WHERE oid=16385"},
		{"SELECT 't'::regclass", "SELECT 't' AS regclass"},
		{"SELECT parse_ident('a.\"B\"')", "SELECT STREAMDB_ARRAY('a', 'B') AS parse_ident"},
		{"SELECT obj_description(oid, 'pg_class') FROM pg_class",
			"SELECT CASE oid WHEN 2200 THEN 'standard public schema' WHEN 16385 THEN 'the table' END AS obj_description FROM pg_class"},
		{"SELECT col_description(16385, 2)",
			"SELECT CASE WHEN 16385=16385 AND 2=2 THEN 'group' END AS col_description"},
		{"SELECT pg_is_in_recovery()", "SELECT 1=0 AS pg_is_in_recovery"},
		{"SELECT has_table_privilege('t', 'SELECT')", "SELECT 1=1 AS has_table_privilege"},
		{"SELECT pg_get_serial_sequence('t', 'n')", "SELECT 'public.t_n_seq' AS pg_get_serial_sequence"},
		{"SELECT pg_get_serial_sequence('public.t', 'g')", "SELECT NULL AS pg_get_serial_sequence"},
		{"SELECT pg_get_serial_sequence(a, b) FROM x", "SELECT CASE WHEN b='n' AND a IN ('t','t','\"t\"','public.t','public.t','public.\"t\"','\"public\".t','\"public\".t','\"public\".\"t\"') THEN 'public.t_n_seq' ELSE STREAMDB_CAST(NULL, 'text') END AS pg_get_serial_sequence FROM x"},
		{"SELECT has_table_privilege('alice', 'mv', 'SELECT')", "SELECT 1=0 AS has_table_privilege"},
		{"SELECT has_table_privilege('pg_class', 'SELECT')", "SELECT 1=1 AS has_table_privilege"},
		{"SELECT has_column_privilege('t', 'g', 'SELECT')", "SELECT 1=1 AS has_column_privilege"},
		{"SELECT has_any_column_privilege('t', 'INSERT')", "SELECT 1=0 AS has_any_column_privilege"},
	} {
		got, err := rewritten(t, &fakeSession{}, c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, got, c.want)
		}
	}
}

func TestStatementAsksSessionFirst(t *testing.T) {
	s := &fakeSession{}
	got, err := rewritten(t, s, "SELECT version()")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.called) != 1 || got != "SELECT 'fake' AS version" {
		t.Errorf("Session.Call answered %d calls of version() (%s), want it asked first", len(s.called), got)
	}
}

func TestStatementErrors(t *testing.T) {
	for _, c := range []struct {
		sql  string
		code string
	}{
		{"SELECT 'nosuch'::regclass", sqlerr.UndefinedTable},
		{"SELECT current_setting('no_such_setting')", sqlerr.UndefinedObject},
		{"SELECT current_setting(name) FROM t", sqlerr.FeatureNotSupported},
		{"SELECT pg_is_in_recovery(1)", sqlerr.UndefinedFunction},
		{"SELECT has_table_privilege('nobody', 't', 'SELECT')", sqlerr.UndefinedObject},
		{"SELECT has_table_privilege('t', 'BOGUS')", sqlerr.InvalidParameterValue},
		{"SELECT has_table_privilege('nosuch', 'SELECT')", sqlerr.UndefinedTable},
		{"SELECT has_column_privilege('t', 'nosuch', 'SELECT')", sqlerr.UndefinedColumn},
		{"SELECT has_column_privilege('t', 'g', 'DELETE')", sqlerr.InvalidParameterValue},
		{"SELECT pg_get_serial_sequence('nosuch', 'n')", sqlerr.UndefinedTable},
		{"SELECT pg_get_serial_sequence('t_n_seq', 'n')", sqlerr.UndefinedTable},
		{"SELECT pg_get_serial_sequence('t', 'zz')", sqlerr.UndefinedColumn},
	} {
		_, err := rewritten(t, &fakeSession{}, c.sql)
		if got := sqlerr.From(err).Code; err == nil || got != c.code {
			t.Errorf("%s: error %v (%s), want SQLSTATE %s", c.sql, err, got, c.code)
		}
	}
	if got, err := rewritten(t, &fakeSession{}, "SELECT current_setting('no_such_setting', true)"); err != nil || !strings.Contains(got, "NULL") {
		t.Errorf("current_setting with missing_ok: %q, %v; want NULL", got, err)
	}
}

func TestStatementLeavesOtherStatements(t *testing.T) {
	st, err := front.Parse("CREATE TABLE x (a int)")
	if err != nil {
		t.Fatal(err)
	}
	if err := Statement(st.Node, &fakeSession{}); err != nil {
		t.Fatalf("CREATE TABLE: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	q := &front.CatalogQuery{Shape: front.CatalogRelations, Items: []string{"Name", "Type", "Owner"}, NamePattern: "^(t)$"}
	cols, rows, err := Describe(q, "alice", "shop")
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 3 || cols[0].Type != types.Text {
		t.Fatalf("columns %v, want three of text", cols)
	}
	got := rows(fakeEngine{})
	if len(got) != 1 || got[0][0].S != "t" {
		t.Fatalf("rows %v, want the table t alone", got)
	}
	q.NamePattern = "("
	if _, _, err := Describe(q, "alice", "shop"); sqlerr.From(err).Code != sqlerr.InvalidRegularExpression {
		t.Errorf("an invalid pattern: %v, want SQLSTATE %s", err, sqlerr.InvalidRegularExpression)
	}
}
