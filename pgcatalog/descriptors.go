package pgcatalog

import (
	"regexp"

	"streamdb/catalog"
	"streamdb/types"
)

// The catalog's descriptors as pgcatalog describes them. The Engine's
// implementation (package sql) reads its catalog snapshot under its lock
// and hands each object through these, so that what a descriptor means
// to pg_catalog is decided here.

// OIDOf is the pg_class OID of user object d (a relation or a sequence):
// FirstUserOID plus its catalog ID.
func OIDOf(d *catalog.Descriptor) int64 { return int64(FirstUserOID + d.ID) }

// RelationKinds are the kinds of objects Engine.Relations lists.
var RelationKinds = []catalog.ObjectKind{catalog.KindStream, catalog.KindTable, catalog.KindView,
	catalog.KindUnpopulatedView, catalog.KindPlainView}

// RelationOf is stream, table or view d, owned by owner. A column whose
// type no longer parses is shown as text.
func RelationOf(d *catalog.Descriptor, owner string) Relation {
	r := Relation{OID: OIDOf(d), Name: d.Name, Kind: "r", Stream: d.Kind == catalog.KindStream,
		Subject: d.Subject, Comment: d.Comment, Query: d.Query, Owner: owner,
		PrimaryKey: d.PrimaryKey, Unpopulated: d.Kind == catalog.KindUnpopulatedView}
	switch d.Kind {
	case catalog.KindView, catalog.KindUnpopulatedView:
		r.Kind = "m"
	case catalog.KindPlainView:
		r.Kind = "v"
	}
	key := map[string]bool{}
	for _, k := range d.PrimaryKey {
		key[k] = true
	}
	for _, col := range d.Columns {
		t, mod, err := types.ParseWithModifier(col.Type)
		if err != nil {
			t = types.Text
		}
		r.Columns = append(r.Columns, Column{Name: col.Name, Type: t, Mod: mod, NotNull: key[col.Name] || col.NotNull,
			Comment: col.Comment, Default: col.Default, Identity: col.Identity, Generated: col.Generated})
	}
	for _, k := range d.Constraints {
		r.Constraints = append(r.Constraints, Constraint{Name: k.Name, Type: k.Type, Columns: k.Columns, Check: k.Check,
			RefTable: k.RefTable, RefColumns: k.RefColumns, OnDelete: k.OnDelete, OnUpdate: k.OnUpdate,
			Deferrable: k.Deferrable, Deferred: k.Deferred})
	}
	for _, ix := range d.Indexes {
		if ix.Constraint {
			continue // shown as its UNIQUE constraint's index
		}
		x := Index{Name: ix.Name, Unique: ix.Unique, Seq: ix.Seq}
		for _, ic := range ix.Columns {
			x.Columns = append(x.Columns, IndexColumn{Name: ic.Name, Desc: ic.Desc, NullsFirst: ic.NullsFirst})
		}
		r.Indexes = append(r.Indexes, x)
	}
	return r
}

// SequenceOf is sequence d, owned by owner.
func SequenceOf(d *catalog.Descriptor, owner string) Sequence {
	q := d.Sequence
	return Sequence{OID: OIDOf(d), Name: d.Name, Owner: owner, Type: q.Type, Start: q.Start,
		Increment: q.Increment, Max: q.Max, Min: q.Min, Cache: q.Cache, Cycle: q.Cycle}
}

// OwnedSequenceOf is sequence q, owned by table t: by the column it is
// owned by (serial) or by the identity column it numbers.
func OwnedSequenceOf(t, q *catalog.Descriptor) OwnedSequence {
	o := OwnedSequence{OID: OIDOf(q), TableOID: OIDOf(t)}
	for i, col := range t.Columns {
		if col.Name == q.Sequence.OwnedByColumn {
			o.Column = int64(i + 1)
		}
		if col.IdentitySequence == q.Name {
			o.Column, o.Identity = int64(i+1), true
		}
	}
	return o
}

// ViewOf is view d, reading the relations of its DependsOn that lookup
// finds.
func ViewOf(d *catalog.Descriptor, lookup func(string) (*catalog.Descriptor, bool)) View {
	v := View{OID: OIDOf(d)}
	for _, in := range d.DependsOn {
		if p, ok := lookup(in); ok {
			v.Reads = append(v.Reads, OIDOf(p))
		}
	}
	return v
}

// defaultSequence finds the sequence a DEFAULT nextval('name') names.
var defaultSequence = regexp.MustCompile(`nextval\('(?:public\.)?"?([^'"]+)"?'`)

// DefaultSequencesOf lists the column defaults of rels that call nextval
// of a sequence lookup finds.
func DefaultSequencesOf(rels []Relation, lookup func(string) (*catalog.Descriptor, bool)) []DefaultSequence {
	var out []DefaultSequence
	for _, r := range rels {
		for i, col := range r.Columns {
			m := defaultSequence.FindStringSubmatch(col.Default)
			if m == nil {
				continue
			}
			if q, ok := lookup(m[1]); ok && q.Kind == catalog.KindSequence {
				out = append(out, DefaultSequence{AttrdefOID: AttrdefOIDBase + r.OID<<10 + int64(i), SequenceOID: OIDOf(q)})
			}
		}
	}
	return out
}
