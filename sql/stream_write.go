package sql

import (
	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/sqlerr"
)

// checkStreamWrite refuses an INSERT or COPY into stream d when it reads a
// subject pattern: a write goes to one subject, and the pattern does not
// say which. Producers publish to the subjects themselves; a stream
// declared on one of them (WITH (subject = 'orders.eu.created')) takes
// INSERTs, and the pattern stream reads them too.
func checkStreamWrite(d *catalog.Descriptor, verb string) error {
	if d.Kind != catalog.KindStream || !broker.IsPattern(d.Subject) {
		return nil
	}
	return sqlerr.New(sqlerr.WrongObjectType, "cannot %s stream %q: it reads the subject pattern %q", verb, d.Name, clipSubject(d.Subject)).
		WithHint("A write goes to one subject. Publish to the subjects directly, or %s a stream declared on one of them (CREATE STREAM ... WITH (subject = '...')): %s reads it too.", verb, d.Name)
}
