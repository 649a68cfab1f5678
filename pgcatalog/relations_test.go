package pgcatalog

import (
	"fmt"
	"strings"
	"testing"

	"streamdb/types"
)

// fakeEngine is an Engine over fixed relations, without a server.
type fakeEngine struct {
	rels     []Relation
	seqs     []Sequence
	roles    []Role
	backends []Backend
}

func (f fakeEngine) Relations() []Relation                   { return f.rels }
func (f fakeEngine) Sequences() []Sequence                   { return f.seqs }
func (f fakeEngine) SequenceLastValue(int64) (int64, bool)   { return 0, false }
func (f fakeEngine) OwnedSequences() []OwnedSequence         { return nil }
func (f fakeEngine) Views() []View                           { return nil }
func (f fakeEngine) DefaultSequences() []DefaultSequence     { return nil }
func (f fakeEngine) EngineTables() map[string][]types.Column { return nil }
func (f fakeEngine) Roles() []Role                           { return f.roles }
func (f fakeEngine) Backends() []Backend                     { return f.backends }
func (f fakeEngine) Setting(key string) (string, bool)       { return "v-" + key, key == "nats.url" }
func (f fakeEngine) SessionDefaults() map[string]string {
	return map[string]string{"DateStyle": "ISO, MDY"}
}

// shopEngine has a table parent (primary key id, UNIQUE code, a CHECK),
// a table child whose foreign key references parent's key, with a
// secondary index, and a materialized view.
func shopEngine() fakeEngine {
	parent := Relation{OID: FirstUserOID + 1, Name: "parent", Kind: "r", Owner: BootstrapUser, PrimaryKey: []string{"id"},
		Columns: []Column{
			{Name: "id", Type: types.Int4, NotNull: true},
			{Name: "code", Type: types.Varchar, Mod: types.Modifier{Length: 10}},
			{Name: "amount", Type: types.Numeric, Mod: types.Modifier{Precision: 10, Scale: 2}},
		},
		Constraints: []Constraint{
			{Name: "parent_code_key", Type: "u", Columns: []string{"code"}},
			{Name: "parent_amount_check", Type: "c", Check: "amount >= 0"},
		}}
	child := Relation{OID: FirstUserOID + 2, Name: "child", Kind: "r", Owner: BootstrapUser, PrimaryKey: []string{"id"},
		Columns: []Column{
			{Name: "id", Type: types.Int8, NotNull: true},
			{Name: "pid", Type: types.Int4},
			{Name: "at", Type: types.Timestamptz, NotNull: true},
		},
		Constraints: []Constraint{{Name: "child_pid_fkey", Type: "f", Columns: []string{"pid"}, RefTable: "parent",
			RefColumns: []string{"id"}, OnDelete: "c", OnUpdate: "a"}},
		Indexes: []Index{{Name: "child_at_idx", Seq: 1, Columns: []IndexColumn{{Name: "at", Desc: true}}}}}
	mv := Relation{OID: FirstUserOID + 3, Name: "totals", Kind: "m", Owner: BootstrapUser, Query: "SELECT pid FROM child;",
		Columns: []Column{{Name: "pid", Type: types.Int4}}}
	return fakeEngine{rels: []Relation{child, parent, mv}}
}

// rowsOf reads the system table name as r, each row as its values'
// text joined by "|".
func rowsOf(t *testing.T, e Engine, r Reader, name string) []string {
	t.Helper()
	tab, ok := Lookup(name)
	if !ok {
		t.Fatalf("no system table %s", name)
	}
	var out []string
	for _, row := range tab.Rows(e, r) {
		if len(row) != len(tab.Columns) {
			t.Fatalf("%s: a row of %d values for %d columns", name, len(row), len(tab.Columns))
		}
		vals := make([]string, len(row))
		for i, d := range row {
			vals[i] = datumText(d)
		}
		out = append(out, strings.Join(vals, "|"))
	}
	return out
}

func datumText(d types.Datum) string {
	switch d.K {
	case types.KindNull:
		return "NULL"
	case types.KindBool:
		return fmt.Sprint(d.Bool())
	case types.KindInt:
		return fmt.Sprint(d.I)
	case types.KindFloat:
		return fmt.Sprint(d.Float())
	}
	return d.S
}

// column picks the named columns of a system table's rows.
func column(t *testing.T, e Engine, name string, cols ...string) []string {
	t.Helper()
	tab, _ := Lookup(name)
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = -1
		for j, tc := range tab.Columns {
			if tc.Name == c {
				idx[i] = j
			}
		}
		if idx[i] < 0 {
			t.Fatalf("%s has no column %s", name, c)
		}
	}
	var out []string
	for _, row := range tab.Rows(e, NoPrivileges{}) {
		vals := make([]string, len(idx))
		for i, j := range idx {
			vals[i] = datumText(row[j])
		}
		out = append(out, strings.Join(vals, "|"))
	}
	return out
}

func contains(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	set := map[string]bool{}
	for _, g := range got {
		set[g] = true
	}
	for _, w := range want {
		if !set[w] {
			t.Errorf("%s lacks %q; it has:\n%s", what, w, strings.Join(got, "\n"))
		}
	}
}

func TestPgClassListsRelationsIndexesAndSystemTables(t *testing.T) {
	e := shopEngine()
	got := column(t, e, "pg_class", "oid", "relname", "relnamespace", "relkind", "relhasindex", "relchecks", "relhastriggers", "relnatts")
	pk := fmt.Sprint(FirstUserOID + 1 + PKOIDBase)
	idx := fmt.Sprint(FirstUserOID + 2 + PKOIDBase + 1<<20)
	contains(t, "pg_class", got,
		"16385|parent|2200|r|true|1|true|3",
		"16386|child|2200|r|true|0|true|3",
		"16387|totals|2200|m|false|0|false|1",
		pk+"|parent_pkey|2200|i|false|0|false|1",
		idx+"|child_at_idx|2200|i|false|0|false|1",
		"1259|pg_class|11|v|false|0|false|33",
	)
	r, ok := ClassRowByName(e, "information_schema.tables")
	if !ok || r.Namespace != NamespaceInfoSchema {
		t.Errorf("information_schema.tables is not in pg_class: %+v", r)
	}
	if r, ok := ClassRowByName(e, "parent"); !ok || r.OID != FirstUserOID+1 {
		t.Errorf("parent resolves to %+v, %v", r, ok)
	}
}

func TestPgAttributeTypeFacts(t *testing.T) {
	e := shopEngine()
	got := column(t, e, "pg_attribute", "attrelid", "attname", "atttypid", "attnum", "atttypmod", "attnotnull", "attstorage")
	contains(t, "pg_attribute", got,
		"16385|id|23|1|-1|true|p",
		"16385|code|1043|2|14|false|x",
		"16385|amount|1700|3|655366|false|m",
		"16385|ctid|27|-1|-1|true|p",
	)
}

func TestPgConstraintForeignKey(t *testing.T) {
	e := shopEngine()
	got := column(t, e, "pg_constraint", "conname", "contype", "conrelid", "confrelid", "conindid", "conkey", "confkey", "confdeltype")
	contains(t, "pg_constraint", got,
		fmt.Sprintf("child_pid_fkey|f|16386|16385|%d|{2}|{1}|c", FirstUserOID+1+PKOIDBase),
		fmt.Sprintf("parent_pkey|p|16385|0|%d|{1}|NULL| ", FirstUserOID+1+PKOIDBase),
	)
	var fk Constraint
	for _, c := range e.rels[0].Constraints {
		fk = c
	}
	if got, want := ConstraintDefText(fk), "FOREIGN KEY (pid) REFERENCES parent(id) ON DELETE CASCADE"; got != want {
		t.Errorf("pg_get_constraintdef: %q, want %q", got, want)
	}
	if !HasForeignKeys(e, e.rels[1]) {
		t.Errorf("the referenced table has no relhastriggers")
	}
	refs := ReferencedByRows(e, FirstUserOID+1)
	if len(refs) != 1 || refs[0]["conname"].S != "child_pid_fkey" {
		t.Errorf("Referenced by: %v", refs)
	}
}

func TestIndexDefinitions(t *testing.T) {
	e := shopEngine()
	got := column(t, e, "pg_indexes", "tablename", "indexname", "indexdef")
	contains(t, "pg_indexes", got,
		"child|child_at_idx|CREATE INDEX child_at_idx ON public.child USING btree (at DESC NULLS LAST)",
		"parent|parent_pkey|CREATE UNIQUE INDEX parent_pkey ON public.parent USING btree (id)",
		"parent|parent_code_key|CREATE UNIQUE INDEX parent_code_key ON public.parent USING btree (code)",
	)
	got = column(t, e, "pg_index", "indexrelid", "indrelid", "indisunique", "indisprimary", "indkey", "indoption")
	contains(t, "pg_index", got, fmt.Sprintf("%d|16386|false|false|3|1", FirstUserOID+2+PKOIDBase+1<<20))
}

// readerOf holds privileges on the relations it names.
type readerOf map[string]bool

func (r readerOf) HoldsAny(relation string, _ ...string) bool { return r[relation] }

func TestInfoSchemaColumnsFollowPrivileges(t *testing.T) {
	e := shopEngine()
	if rows := rowsOf(t, e, NoPrivileges{}, "information_schema.columns"); len(rows) != 0 {
		t.Errorf("a reader without privileges sees columns: %v", rows)
	}
	rows := rowsOf(t, e, readerOf{"parent": true}, "information_schema.columns")
	if len(rows) != 3 {
		t.Fatalf("want parent's 3 columns, got %v", rows)
	}
	contains(t, "information_schema.columns", rows,
		"streamdb|public|parent|amount|3|NULL|YES|numeric|NULL|10|2|NULL|pg_catalog|numeric|NO|NULL|NEVER|NULL")
}

func TestInfoSchemaConstraints(t *testing.T) {
	e := shopEngine()
	contains(t, "table_constraints", column(t, e, "information_schema.table_constraints", "constraint_name", "table_name", "constraint_type"),
		"parent_pkey|parent|PRIMARY KEY", "parent_code_key|parent|UNIQUE", "child_pid_fkey|child|FOREIGN KEY",
		"2200_16385_1_not_null|parent|CHECK")
	contains(t, "key_column_usage", column(t, e, "information_schema.key_column_usage", "constraint_name", "column_name", "position_in_unique_constraint"),
		"child_pid_fkey|pid|1", "parent_pkey|id|NULL")
	contains(t, "referential_constraints", column(t, e, "information_schema.referential_constraints", "constraint_name", "unique_constraint_name", "delete_rule"),
		"child_pid_fkey|parent_pkey|CASCADE")
	contains(t, "views", column(t, e, "information_schema.views", "table_name", "view_definition"), "totals| SELECT pid FROM child;")
}
