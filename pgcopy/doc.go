// Package pgcopy holds the codecs of PostgreSQL's COPY data: the text,
// CSV and binary formats with their options, read and written as
// PostgreSQL 15 does. It knows nothing of sessions, relations or SQL
// types: fields are text (or a binary value's bytes) and NULL.
package pgcopy
