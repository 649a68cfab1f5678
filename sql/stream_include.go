package sql

import (
	"maps"
	"strconv"

	"streamdb/catalog"
	"streamdb/front"
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

// checkWholeMessage checks WITH (whole_message = ...) and records it as
// "true" or leaves it out: the stream's one declared column, json or
// jsonb, then takes each whole message (any JSON value), and its INCLUDE
// columns its metadata.
func checkWholeMessage(n *front.CreateSource, isTable bool, d *catalog.Descriptor) error {
	v, ok := n.Options[catalog.OptWholeMessage]
	if !ok {
		return nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return sqlerr.New(sqlerr.InvalidParameterValue, "whole_message must be true or false, not %q", v)
	}
	d.Options = maps.Clone(d.Options)
	delete(d.Options, catalog.OptWholeMessage)
	if !on {
		return nil
	}
	if isTable {
		return sqlerr.New(sqlerr.FeatureNotSupported, "whole_message on a table is not supported").
			WithHint("Use a stream (CREATE STREAM, or CREATE TABLE ... APPEND ONLY) with one jsonb column.")
	}
	if len(n.Columns) != 1 || (n.Columns[0].Type != types.JSONB && n.Columns[0].Type != types.JSON) {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "a stream with whole_message = true declares exactly one column, of type jsonb or json").
			WithHint("Declare CREATE STREAM s (doc jsonb) WITH (whole_message = true), with INCLUDE clauses for metadata, and read fields with doc->'key'.")
	}
	d.Options[catalog.OptWholeMessage] = "true"
	return nil
}
