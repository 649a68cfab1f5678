package pgcatalog

import (
	"fmt"
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/types"
)

// The user relations as PostgreSQL's catalogs describe them, shared by
// the pg_catalog and information_schema tables and by the answers to
// psql's and the drivers' describe queries.
//
// Every user object lives in schema public. Relation kinds
// (pg_class.relkind): tables are 'r', views 'v', materialized views 'm',
// and streams are 'r' too: psql's \dt lists them and \d shows their
// columns as a table's, and their description (obj_description, \dt+)
// says they are streams and on which subject.

const (
	// PKOIDBase offsets a relation's OID to its primary key index's OID
	// (and twice it to the primary key constraint's).
	PKOIDBase = 1 << 30
	// AttrdefOIDBase offsets the OIDs of pg_attrdef's rows (relation OID
	// times 1024 plus the column's index) past those of relations and
	// keys.
	AttrdefOIDBase = 3 * PKOIDBase
)

// Relation is one user relation: a stream, table, view or materialized
// view.
type Relation struct {
	OID  int64
	Name string
	// Kind is pg_class.relkind: "r" for a table or a stream, "v" for a
	// view, "m" for a materialized view.
	Kind string
	// Stream is set for a stream, which reads Subject.
	Stream  bool
	Subject string
	Comment string // COMMENT ON
	Query   string // a view's query as written
	// Unpopulated is set for a materialized view created WITH NO DATA
	// and not yet refreshed (pg_class.relispopulated false).
	Unpopulated bool
	Owner       string // the role that owns it
	// Grants are the privileges granted on it by role ("public" for
	// PUBLIC), in upper case; nil when none were.
	Grants map[string][]string
	// GrantOrder and ACLSet are how relacl lists Grants (see Sequence).
	GrantOrder []string
	ACLSet     bool
	Columns    []Column
	// PrimaryKey are the primary key's columns in key order.
	PrimaryKey  []string
	Constraints []Constraint
	Indexes     []Index // CREATE INDEX indexes
}

// Column is one column of a relation with its PostgreSQL type facts.
type Column struct {
	Name    string
	Type    types.Type
	Mod     types.Modifier
	NotNull bool   // NOT NULL or part of the primary key
	Comment string // COMMENT ON COLUMN
	// Default is the column's DEFAULT as SQL text ("" for none);
	// Identity is pg_attribute.attidentity ("a", "d" or "").
	Default, Identity string
	// Generated is a generated column's expression as SQL text ("" for
	// other columns): pg_attrdef holds it, pg_attribute.attgenerated is
	// "s".
	Generated string
}

// Constraint is a table's UNIQUE ("u"), CHECK ("c") or FOREIGN KEY ("f")
// constraint.
type Constraint struct {
	Name, Type string
	Columns    []string
	Check      string // a CHECK's expression as SQL text
	// RefTable and RefColumns are what a foreign key references;
	// OnDelete and OnUpdate its actions as pg_constraint's codes.
	RefTable             string
	RefColumns           []string
	OnDelete, OnUpdate   string
	Deferrable, Deferred bool
}

// Index is a CREATE INDEX index.
type Index struct {
	Name    string
	Columns []IndexColumn
	Unique  bool
	// Seq numbers the relation's indexes from 1; it places the index's
	// OID.
	Seq uint16
}

// IndexColumn is one key column of an index.
type IndexColumn struct {
	Name             string
	Desc, NullsFirst bool
}

// relationNamed finds the relation called name in rels.
func relationNamed(rels []Relation, name string) (Relation, bool) {
	for _, r := range rels {
		if r.Name == name {
			return r, true
		}
	}
	return Relation{}, false
}

// RelationByOID finds a user relation by OID.
func RelationByOID(e Engine, oid int64) (Relation, bool) {
	for _, r := range e.Relations() {
		if r.OID == oid {
			return r, true
		}
	}
	return Relation{}, false
}

// isTable reports whether r is a table (not a stream or a view).
func (r Relation) isTable() bool { return r.Kind == "r" && !r.Stream }

// constraint finds the constraint called name.
func (r Relation) constraint(name string) (Constraint, bool) {
	for _, c := range r.Constraints {
		if c.Name == name {
			return c, true
		}
	}
	return Constraint{}, false
}

// hasConstraint reports whether r has a constraint of type typ.
func (r Relation) hasConstraint(typ string) bool {
	for _, c := range r.Constraints {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// sameColumns reports whether cols are exactly a's columns, in any order.
func sameColumns(a, cols []string) bool {
	if len(a) != len(cols) {
		return false
	}
	set := map[string]bool{}
	for _, x := range a {
		set[x] = true
	}
	for _, x := range cols {
		if !set[x] {
			return false
		}
	}
	return true
}

// columnIndex is the index of the column called name, -1 for none.
func (r Relation) columnIndex(name string) int {
	return slices.IndexFunc(r.Columns, func(c Column) bool { return c.Name == name })
}

// Description is obj_description of the relation: its COMMENT ON, or
// else what kind of streamdb object it is, for the relkinds that do not
// say it.
func (r Relation) Description() string {
	if r.Comment != "" {
		return r.Comment
	}
	if r.Stream {
		return fmt.Sprintf("stream on subject %s", r.Subject)
	}
	return ""
}

// PKName is the name of the primary key's index, as PostgreSQL names it.
func (r Relation) PKName() string { return catalog.PrimaryKeyName(r.Name) }

// RelkindName is psql's word for a relkind.
func RelkindName(k string) string {
	switch k {
	case "r":
		return "table"
	case "v":
		return "view"
	case "m":
		return "materialized view"
	case "f":
		return "foreign table"
	}
	return ""
}

// FormatType is pg_catalog.format_type of a column: "bigint",
// "character varying(20)", "numeric(10,2)", "time(3) without time zone".
func (c Column) FormatType() string {
	if c.Type.IsTimeOfDay() {
		return types.TypeName(c.Type, c.Mod)
	}
	return c.Type.String() + c.Mod.Suffix()
}

// Typname is pg_type.typname of a type.
func Typname(t types.Type) string {
	if t.IsArray() {
		return "_" + Typname(t.Elem())
	}
	switch t {
	case types.Bytea:
		return "bytea"
	case types.Bool:
		return "bool"
	case types.Int2:
		return "int2"
	case types.Int4:
		return "int4"
	case types.Int8:
		return "int8"
	case types.Float4:
		return "float4"
	case types.Float8:
		return "float8"
	case types.Numeric:
		return "numeric"
	case types.Varchar:
		return "varchar"
	case types.Date:
		return "date"
	case types.Timestamp:
		return "timestamp"
	case types.Timestamptz:
		return "timestamptz"
	case types.Interval:
		return "interval"
	case types.Time:
		return "time"
	case types.TimeTZ:
		return "timetz"
	case types.UUID:
		return "uuid"
	case types.JSON, types.JSONB:
		return t.String()
	}
	return "text"
}

// attstorage is pg_attribute.attstorage as PostgreSQL chooses it.
func attstorage(t types.Type) string {
	switch t {
	case types.Text, types.Varchar:
		return "extended"
	case types.Numeric:
		return "main"
	}
	return "plain"
}

// AttstorageCode is attstorage's one-letter code in pg_attribute.
func AttstorageCode(t types.Type) string {
	switch attstorage(t) {
	case "extended":
		return "x"
	case "main":
		return "m"
	}
	return "p"
}

// atttypmod is pg_attribute.atttypmod: -1 for none, else PostgreSQL's
// encoding (length + 4; (precision << 16 | scale) + 4; time(p)'s p).
func (c Column) atttypmod() int64 {
	switch {
	case c.Mod.HasTimePrecision:
		return int64(c.Mod.TimePrecision)
	case c.Mod.Length > 0:
		return int64(c.Mod.Length) + 4
	case c.Mod.Precision > 0:
		return int64(c.Mod.NumericTypmod())
	}
	return -1
}

// IndexDef is pg_get_indexdef of the primary key.
func (r Relation) IndexDef() string {
	return fmt.Sprintf("CREATE UNIQUE INDEX %s ON public.%s USING btree (%s)",
		QuoteIdent(r.PKName()), QuoteIdent(r.Name), QuoteIdents(r.PrimaryKey))
}

// indkey is pg_index.indkey of the primary key: its column numbers.
func (r Relation) indkey() string {
	var nums []string
	for _, k := range r.PrimaryKey {
		for i, c := range r.Columns {
			if c.Name == k {
				nums = append(nums, fmt.Sprint(i+1))
			}
		}
	}
	return strings.Join(nums, " ")
}

// ConstraintDef is pg_get_constraintdef of the primary key.
func (r Relation) ConstraintDef() string {
	return fmt.Sprintf("PRIMARY KEY (%s)", QuoteIdents(r.PrimaryKey))
}

// AttrDef is the column's pg_attrdef expression: its generation
// expression or its DEFAULT ("" for neither).
func (c Column) AttrDef() string {
	if c.Generated != "" {
		return c.Generated
	}
	return c.Default
}

// AttGenerated is pg_attribute.attgenerated: "s" for a stored generated
// column.
func (c Column) AttGenerated() string {
	if c.Generated != "" {
		return "s"
	}
	return ""
}

// ViewDef is pg_get_viewdef's text of a view's query: a leading space and
// one semicolon, as PostgreSQL prints it.
func (r Relation) ViewDef() string {
	return " " + strings.TrimRight(strings.TrimSpace(r.Query), ";") + ";"
}

func str(v string) types.Datum { return types.NewString(v) }
func intD(v int64) types.Datum { return types.NewInt(v) }

// Fields are one row of a describe query's answer, its values by item
// name (the query's output column).
type Fields map[string]types.Datum

// boolText is a Boolean as psql reads it from a text column.
func boolText(v bool) types.Datum {
	if v {
		return str("t")
	}
	return str("f")
}
