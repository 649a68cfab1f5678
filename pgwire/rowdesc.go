package pgwire

import "streamdb/types"

// ColumnOrigin is where a result column comes from, for RowDescription:
// the table (or view) OID and the column's attribute number when the
// column is that table column unchanged, zeros otherwise (as PostgreSQL
// sends them). Drivers read them for result set metadata (pgjdbc's
// ResultSetMetaData.getTableName, isAutoIncrement, updatable result sets).
type ColumnOrigin struct {
	TableOID uint32
	Attr     int16
}

// OriginPrepared is a Prepared that knows its columns' origins; a
// Prepared without it describes every column with zeros.
type OriginPrepared interface {
	// ColumnOrigins returns one origin per column of Columns, or nil.
	ColumnOrigins() []ColumnOrigin
}

// columnOrigins are p's column origins, nil when p does not know them.
func columnOrigins(p Prepared) []ColumnOrigin {
	if o, ok := p.(OriginPrepared); ok {
		return o.ColumnOrigins()
	}
	return nil
}

// typmod is the column's type modifier as PostgreSQL encodes it
// (pg_attribute.atttypmod): character(n) and character varying(n) are
// n + 4, numeric(p, s) is (p << 16 | s) + 4, time and timestamp (p) are
// p; -1 for none.
func typmod(col types.Column) int32 {
	m := col.Mod
	switch {
	case m.HasTimePrecision:
		return int32(m.TimePrecision)
	case m.Length > 0:
		return int32(m.Length) + 4
	case m.Precision > 0:
		return m.NumericTypmod()
	}
	return -1
}
