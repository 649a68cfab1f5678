package exec

import (
	"fmt"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/types"
)

// Columns map to the members of JSON messages by their member keys
// (catalog.Column.MemberKey), not their names, so that a renamed column
// reads the messages written before the rename; a column added with a
// default reads it from messages that lack its member.

// MessageColumns returns the columns a decoder of s's messages reads
// (s.Cols under their member keys) and what each reads in a message
// without its member (nil for NULL).
func MessageColumns(s *plan.Scan) ([]types.Column, []*types.Datum, error) {
	cols := make([]types.Column, len(s.Cols))
	copy(cols, s.Cols)
	if s.Keys != nil {
		for i := range cols {
			cols[i].Name = s.Keys[i]
		}
	}
	missing, err := missingValues(s.Object, cols)
	return cols, missing, err
}

// DescriptorMessageColumns is MessageColumns of a scan of all of d's
// columns as they are now.
func DescriptorMessageColumns(d *catalog.Descriptor) ([]types.Column, []*types.Datum, error) {
	cols, err := d.Schema()
	if err != nil {
		return nil, nil, err
	}
	for i, c := range d.Columns {
		cols[i].Name = c.MemberKey()
	}
	missing, err := missingValues(d, cols)
	return cols, missing, err
}

// missingValues returns the values of d's columns with member keys
// cols[i].Name in messages without them (nil: NULL, or not a column of
// d any more).
func missingValues(d *catalog.Descriptor, cols []types.Column) ([]*types.Datum, error) {
	if d == nil {
		return nil, nil
	}
	var out []*types.Datum
	for i, c := range cols {
		for _, dc := range d.Columns {
			if dc.Missing == nil || dc.MemberKey() != c.Name {
				continue
			}
			v, err := types.ParseText(*dc.Missing, c.Type)
			if err != nil {
				return nil, fmt.Errorf("the default of column %s of %s: %w", dc.Name, d.Name, err)
			}
			if out == nil {
				out = make([]*types.Datum, len(cols))
			}
			out[i] = &v
		}
	}
	return out, nil
}

// NewMessageDecoder is NewRowDecoder for the columns and missing values
// of MessageColumns.
func NewMessageDecoder(cols []types.Column, missing []*types.Datum) *RowDecoder {
	d := NewRowDecoder(cols)
	d.SetMissing(missing)
	return d
}

// NewChangelogMessageDecoder is NewChangelogDecoder for the columns and
// missing values of MessageColumns.
func NewChangelogMessageDecoder(cols []types.Column, missing []*types.Datum) *ChangelogDecoder {
	d := NewChangelogDecoder(cols)
	d.rows.SetMissing(missing)
	return d
}
