package pgcatalog

import (
	"reflect"
	"testing"

	"streamdb/catalog"
	"streamdb/types"
)

// descriptorsCatalog is a table t (primary key id, a serial column n
// whose default calls nextval, an identity column k, a column whose type
// no longer parses), its two sequences, and a view v reading t and a
// relation that is gone.
func descriptorsCatalog() (t, serial, ident, v *catalog.Descriptor, lookup func(string) (*catalog.Descriptor, bool)) {
	t = &catalog.Descriptor{ID: 1, Name: "t", Kind: catalog.KindTable, PrimaryKey: []string{"id"},
		Columns: []catalog.Column{
			{Name: "id", Type: "integer"},
			{Name: "n", Type: "bigint", Default: "nextval('t_n_seq'::regclass)"},
			{Name: "k", Type: "bigint", Identity: "a", IdentitySequence: "t_k_seq"},
			{Name: "odd", Type: "no such type"},
		},
		Indexes: []catalog.Index{{Name: "t_n_idx", Columns: []catalog.IndexColumn{{Name: "n", Desc: true}}}}}
	serial = &catalog.Descriptor{ID: 2, Name: "t_n_seq", Kind: catalog.KindSequence,
		Sequence: &catalog.Sequence{Type: "bigint", Start: 1, Increment: 1, Min: 1, Max: 1 << 62, Cache: 1, OwnedByTable: 1, OwnedByColumn: "n"}}
	ident = &catalog.Descriptor{ID: 3, Name: "t_k_seq", Kind: catalog.KindSequence,
		Sequence: &catalog.Sequence{Type: "bigint", Start: 1, Increment: 1, OwnedByTable: 1}}
	v = &catalog.Descriptor{ID: 4, Name: "v", Kind: catalog.KindPlainView, Query: "SELECT id FROM t", DependsOn: []string{"t", "gone"}}
	byName := map[string]*catalog.Descriptor{"t": t, "t_n_seq": serial, "t_k_seq": ident, "v": v}
	lookup = func(name string) (*catalog.Descriptor, bool) { d, ok := byName[name]; return d, ok }
	return t, serial, ident, v, lookup
}

func TestRelationOf(t *testing.T) {
	table, _, _, view, _ := descriptorsCatalog()
	r := RelationOf(table, "alice")
	if r.OID != FirstUserOID+1 || r.Kind != "r" || r.Owner != "alice" || r.Stream {
		t.Errorf("table: %+v", r)
	}
	if !r.Columns[0].NotNull || r.Columns[1].NotNull {
		t.Errorf("a primary key column is NOT NULL, another is not: %+v", r.Columns[:2])
	}
	if r.Columns[3].Type != types.Text {
		t.Errorf("a column whose type does not parse shows as text, got %v", r.Columns[3].Type)
	}
	if len(r.Indexes) != 1 || !r.Indexes[0].Columns[0].Desc {
		t.Errorf("indexes: %+v", r.Indexes)
	}
	if v := RelationOf(view, "alice"); v.Kind != "v" || v.Query != "SELECT id FROM t" {
		t.Errorf("plain view: %+v", v)
	}
	mv := &catalog.Descriptor{ID: 5, Name: "mv", Kind: catalog.KindUnpopulatedView}
	if r := RelationOf(mv, ""); r.Kind != "m" || !r.Unpopulated {
		t.Errorf("unpopulated materialized view: %+v", r)
	}
}

func TestSequencesOf(t *testing.T) {
	table, serial, ident, _, lookup := descriptorsCatalog()
	if s := SequenceOf(serial, "alice"); s.OID != FirstUserOID+2 || s.Type != "bigint" || s.Owner != "alice" || s.Max != 1<<62 {
		t.Errorf("sequence: %+v", s)
	}
	if got, want := OwnedSequenceOf(table, serial), (OwnedSequence{OID: FirstUserOID + 2, TableOID: FirstUserOID + 1, Column: 2}); got != want {
		t.Errorf("serial: %+v, want %+v", got, want)
	}
	if got, want := OwnedSequenceOf(table, ident), (OwnedSequence{OID: FirstUserOID + 3, TableOID: FirstUserOID + 1, Column: 3, Identity: true}); got != want {
		t.Errorf("identity: %+v, want %+v", got, want)
	}
	rels := []Relation{RelationOf(table, "")}
	want := []DefaultSequence{{AttrdefOID: AttrdefOIDBase + (FirstUserOID+1)<<10 + 1, SequenceOID: FirstUserOID + 2}}
	if got := DefaultSequencesOf(rels, lookup); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
}

func TestViewOf(t *testing.T) {
	_, _, _, view, lookup := descriptorsCatalog()
	if got := ViewOf(view, lookup); !reflect.DeepEqual(got.Reads, []int64{FirstUserOID + 1}) || got.OID != FirstUserOID+4 {
		t.Errorf("view: %+v, want it to read t alone (the relation gone is left out)", got)
	}
}
