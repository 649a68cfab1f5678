package sql

import (
	"strconv"

	"streamdb/catalog"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// includeColumns returns the columns of a stream's INCLUDE clauses, after
// its declared ones: text for the subject, a subject token and a header
// (NULL when the message has no such token or header), timestamp with
// time zone for the time JetStream stored the message, bigint for its
// stream sequence.
func includeColumns(n *front.CreateSource, isTable bool) ([]types.Column, []string, error) {
	if len(n.Includes) == 0 {
		return nil, nil, nil
	}
	if isTable {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "INCLUDE on a table is not supported").
			WithHint("A table's rows are its own; INCLUDE reads a stream's message metadata (CREATE STREAM, or CREATE TABLE ... APPEND ONLY).")
	}
	cols := make([]types.Column, len(n.Includes))
	meta := make([]string, len(n.Includes))
	for i, inc := range n.Includes {
		t := types.Text
		switch inc.Kind {
		case front.IncludeSubject:
			meta[i] = catalog.MetaSubject
		case front.IncludeSubjectToken:
			meta[i] = catalog.MetaTokenPrefix + strconv.Itoa(inc.Token)
		case front.IncludeHeader:
			meta[i] = catalog.MetaHeaderPrefix + inc.Header
		case front.IncludeTimestamp:
			meta[i], t = catalog.MetaTimestamp, types.Timestamptz
		case front.IncludeSequence:
			meta[i], t = catalog.MetaSequence, types.Int8
		}
		cols[i] = types.Column{Name: inc.Column, Type: t}
	}
	return cols, meta, nil
}
