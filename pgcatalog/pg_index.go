package pgcatalog

import (
	"fmt"
	"strings"

	"streamdb/types"
)

// The secondary indexes (CREATE INDEX) in the catalogs: pg_class rows of
// relkind 'i', pg_index, pg_indexes, pg_get_indexdef, psql's \d and \di,
// and the JDBC and Django index queries. An index's OID is its relation's
// primary key index OID plus its sequence number (Index.Seq)
// times indexSeqOIDStep, below the constraint OIDs (2 * PKOIDBase).
const indexSeqOIDStep = 1 << 20

// RelIndex is one index of a user relation besides its primary key's.
type RelIndex struct {
	Index
	r Relation
}

// SecondaryIndexes returns r's CREATE INDEX indexes, by name.
func (r Relation) SecondaryIndexes() []RelIndex {
	var out []RelIndex
	for _, ix := range r.Indexes {
		out = append(out, RelIndex{r: r, Index: ix})
	}
	return out
}

// constraintIndexes returns the indexes of r's UNIQUE constraints, as
// PostgreSQL lists the index each one owns under the constraint's name
// (SQLAlchemy's get_indexes and Alembic's autogenerate read them from
// pg_index). They are numbered down from maxIndexSeq, clear of the
// CREATE INDEX indexes' numbers, which count up from 1.
func (r Relation) constraintIndexes() []RelIndex {
	var out []RelIndex
	n := 0
	for _, c := range r.Constraints {
		if c.Type != "u" {
			continue
		}
		ix := Index{Name: c.Name, Unique: true, Seq: uint16(maxIndexSeq - n)}
		for _, col := range c.Columns {
			ix.Columns = append(ix.Columns, IndexColumn{Name: col})
		}
		out = append(out, RelIndex{r: r, Index: ix})
		n++
	}
	return out
}

// maxIndexSeq is the highest index number below the constraint OIDs.
const maxIndexSeq = PKOIDBase/indexSeqOIDStep - 1

// CatalogIndexes returns r's CREATE INDEX indexes and its UNIQUE
// constraints' indexes: the pg_class and pg_index rows besides the
// primary key's.
func (r Relation) CatalogIndexes() []RelIndex {
	return append(r.SecondaryIndexes(), r.constraintIndexes()...)
}

// constraintIndexOID is the OID of the index of r's UNIQUE constraint
// name, or 0.
func (r Relation) constraintIndexOID(name string) int64 {
	for _, x := range r.constraintIndexes() {
		if x.Name == name {
			return x.OID()
		}
	}
	return 0
}

func (x RelIndex) OID() int64 {
	return int64(x.r.OID) + PKOIDBase + int64(x.Seq)*indexSeqOIDStep
}

// cols are the index's columns as pg_attribute lists an index's.
func (x RelIndex) cols() []Column {
	var out []Column
	for _, ic := range x.Columns {
		for _, c := range x.r.Columns {
			if c.Name == ic.Name {
				c.NotNull, c.Default, c.Identity, c.Comment = false, "", "", ""
				out = append(out, c)
			}
		}
	}
	return out
}

// ColumnNames are the index's column names in key order.
func (x RelIndex) ColumnNames() []string {
	out := make([]string, len(x.Columns))
	for i, c := range x.Columns {
		out[i] = c.Name
	}
	return out
}

// columnDef is one column of pg_get_indexdef: the name, then DESC and
// NULLS FIRST/LAST where they differ from the defaults of the order.
func columnDef(c IndexColumn) string {
	s := QuoteIdent(c.Name)
	switch {
	case c.Desc && !c.NullsFirst:
		s += " DESC NULLS LAST"
	case c.Desc:
		s += " DESC"
	case c.NullsFirst:
		s += " NULLS FIRST"
	}
	return s
}

// Def is pg_get_indexdef of the index.
func (x RelIndex) Def() string {
	parts := make([]string, len(x.Columns))
	for i, c := range x.Columns {
		parts[i] = columnDef(c)
	}
	unique := ""
	if x.Unique {
		unique = "UNIQUE "
	}
	return fmt.Sprintf("CREATE %sINDEX %s ON public.%s USING btree (%s)", unique, QuoteIdent(x.Name),
		QuoteIdent(x.r.Name), strings.Join(parts, ", "))
}

// indkey is pg_index.indkey: the column numbers.
func (x RelIndex) indkey() string {
	var nums []string
	for _, ic := range x.Columns {
		for i, c := range x.r.Columns {
			if c.Name == ic.Name {
				nums = append(nums, fmt.Sprint(i+1))
			}
		}
	}
	return strings.Join(nums, " ")
}

// indoption is pg_index.indoption: per column, 1 for DESC plus 2 for
// NULLS FIRST.
func (x RelIndex) indoption() string {
	opts := make([]string, len(x.Columns))
	for i, c := range x.Columns {
		n := 0
		if c.Desc {
			n |= 1
		}
		if c.NullsFirst {
			n |= 2
		}
		opts[i] = fmt.Sprint(n)
	}
	return strings.Join(opts, " ")
}

// secondaryIndexClassRows are the pg_class rows of r's indexes.
func (r Relation) secondaryIndexClassRows() []ClassRow {
	var out []ClassRow
	for _, x := range r.CatalogIndexes() {
		rel := r
		out = append(out, ClassRow{OID: x.OID(), Name: x.Name, Namespace: NamespacePublic, Kind: "i", cols: x.cols(), index: &rel})
	}
	return out
}

// secondaryPgIndexRows are the pg_index rows of the secondary indexes.
func secondaryPgIndexRows(e Engine) []types.Row {
	var rows []types.Row
	for _, r := range e.Relations() {
		for _, x := range r.CatalogIndexes() {
			n := int64(len(x.Columns))
			zeros := strings.TrimSpace(strings.Repeat("0 ", int(n)))
			rows = append(rows, types.Row{intD(x.OID()), intD(r.OID), intD(n), intD(n), b(x.Unique),
				b(false), b(false), b(false), b(true), b(false), b(true), b(false), b(true), b(true), b(false),
				str(x.indkey()), str(zeros), str(zeros), str(x.indoption()), types.Null, types.Null})
		}
	}
	return rows
}

func init() {
	register("pg_catalog.pg_indexes", cols("schemaname", types.Text, "tablename", types.Text, "indexname", types.Text,
		"tablespace", types.Text, "indexdef", types.Text),
		func(e Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.Relations() {
				if len(r.PrimaryKey) > 0 {
					rows = append(rows, types.Row{str("public"), str(r.Name), str(r.PKName()), types.Null, str(r.IndexDef())})
				}
				for _, x := range r.CatalogIndexes() {
					rows = append(rows, types.Row{str("public"), str(r.Name), str(x.Name), types.Null, str(x.Def())})
				}
			}
			return rows
		})
}
