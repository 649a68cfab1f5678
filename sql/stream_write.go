package sql

import (
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// checkStreamWrite refuses an INSERT or COPY into stream d when it reads a
// subject pattern: a write goes to one subject, and the pattern does not
// say which. Producers publish to the subjects themselves; a stream
// declared on one of them (WITH (subject = 'orders.eu.created')) takes
// INSERTs, and the pattern stream reads them too.
func checkStreamWrite(d *catalog.Descriptor, verb string) error {
	if d.Kind != catalog.KindStream || !meta.IsSubjectPattern(d.Subject) {
		return nil
	}
	return sqlerr.New(sqlerr.WrongObjectType, "cannot %s stream %q: it reads the subject pattern %q", verb, d.Name, clipSubject(d.Subject)).
		WithHint("A write goes to one subject. Publish to the subjects directly, or %s a stream declared on one of them (CREATE STREAM ... WITH (subject = '...')): %s reads it too.", verb, d.Name)
}

// metadataColumn reports whether column name of d is filled from message
// metadata (INCLUDE).
func metadataColumn(d *catalog.Descriptor, name string) bool {
	for _, c := range d.Columns {
		if c.Name == name {
			return c.Metadata != ""
		}
	}
	return false
}

// writeTargets drops the INCLUDE columns of stream d from the columns a
// write fills when it names none (target lists every column), and
// refuses a write that names one (428C9): the message's metadata fills
// them when it is read.
func writeTargets(d *catalog.Descriptor, cols []types.Column, target []int, named bool) ([]int, error) {
	if d.Kind != catalog.KindStream {
		return target, nil
	}
	out := target[:0:0]
	for _, i := range target {
		if !metadataColumn(d, cols[i].Name) {
			out = append(out, i)
			continue
		}
		if named {
			return nil, sqlerr.New(sqlerr.GeneratedAlways, "cannot write to column %q of stream %q: it is filled from each message's metadata (INCLUDE)", cols[i].Name, d.Name).
				WithHint("Leave %s out of the column list; JetStream sets it when the message is published.", cols[i].Name)
		}
	}
	return out, nil
}

// encodeStreamRow renders row of stream d as the message a write
// publishes: its INCLUDE columns are not part of it.
func encodeStreamRow(d *catalog.Descriptor, cols []types.Column, row types.Row) ([]byte, error) {
	if d.Format == catalog.FormatCSV {
		return exec.EncodeCSV(d, cols, row)
	}
	if d.Options[catalog.OptWholeMessage] == "true" {
		// The message is the document itself; NULL is JSON null.
		for i, c := range cols {
			if !metadataColumn(d, c.Name) {
				if row[i].IsNull() {
					return []byte("null"), nil
				}
				return []byte(types.FormatText(row[i], c.Type)), nil
			}
		}
	}
	hasMeta := false
	for _, c := range d.Columns {
		hasMeta = hasMeta || c.Metadata != ""
	}
	if !hasMeta {
		return exec.EncodeJSON(cols, row)
	}
	var dc []types.Column
	var dr types.Row
	for i, c := range cols {
		if !metadataColumn(d, c.Name) {
			dc, dr = append(dc, c), append(dr, row[i])
		}
	}
	return exec.EncodeJSON(dc, dr)
}
