package sql

import (
	"slices"
	"strings"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/sqlerr"
)

// A stream with an envelope (CREATE STREAM ... WITH (envelope = 'upsert'
// | 'debezium', key = 'a, b')) is stored as a table: its pipeline reads
// the subject's messages as upserts, tombstones or Debezium change
// events into the current row per key (exec/envelope_*.go), SELECT reads
// those rows and views read their changes as they read a table's. Its
// messages are its only writer: INSERT, UPDATE, DELETE, TRUNCATE, COPY
// and ALTER are refused. DROP STREAM (or DROP TABLE) drops it and leaves
// the subject's JetStream stream to its producers.

func init() {
	streamOptions[catalog.OptEnvelope] = true
	streamOptions[catalog.OptKey] = true
}

// checkEnvelope checks the envelope options of CREATE STREAM n, whose
// descriptor d sourceDescriptor built, and gives d its key.
func checkEnvelope(n *front.CreateSource, isTable bool, d *catalog.Descriptor) error {
	env, ok := n.Options[catalog.OptEnvelope]
	keyOpt, hasKey := n.Options[catalog.OptKey]
	if err := checkTxnSubjectOption(n, strings.ToLower(env)); err != nil {
		return err
	}
	if !ok {
		if hasKey {
			return sqlerr.New(sqlerr.InvalidParameterValue, "option key needs an envelope").
				WithHint("key names the columns that identify a row of a stream with envelope = 'upsert' or 'debezium'.")
		}
		return nil
	}
	env = strings.ToLower(env)
	switch env {
	case catalog.EnvelopeUpsert, catalog.EnvelopeDebezium:
	default:
		return sqlerr.New(sqlerr.InvalidParameterValue, "envelope %q is not supported", env).
			WithHint("Use envelope = 'upsert' or envelope = 'debezium', or leave it out for a stream of events.")
	}
	if n.Kind == front.KindTable {
		return sqlerr.New(sqlerr.FeatureNotSupported, "CREATE TABLE does not take an envelope").
			WithHint("Use CREATE STREAM %s (...) WITH (envelope = '%s', ...): such a stream keeps the current row per key, as a table its messages write.", n.Name, env)
	}
	if env == catalog.EnvelopeDebezium && d.Format != "json" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "envelope 'debezium' reads JSON change events, not format %q", d.Format).
			WithHint("Use format = 'json' (Debezium Server's JSON serialisation).")
	}
	switch {
	case n.Options[catalog.OptWholeMessage] != "":
		return sqlerr.New(sqlerr.FeatureNotSupported, "whole_message does not go with an envelope").
			WithHint("Declare the row's columns; the envelope says how each message changes them.")
	case n.Watermark != nil:
		return sqlerr.New(sqlerr.FeatureNotSupported, "WATERMARK on a stream with an envelope is not supported").
			WithHint("Its rows are replaced and deleted by key, as a table's are; declare watermarks on streams of events.")
	case len(n.Constraints) > 0:
		return sqlerr.New(sqlerr.FeatureNotSupported, "constraints on a stream with an envelope are not supported").
			WithHint("Its rows are what its messages say; only its key identifies them.")
	}
	for _, c := range n.Columns {
		if c.Generated != nil || c.Default != nil || c.Serial || c.Identity != "" {
			return sqlerr.New(sqlerr.FeatureNotSupported, "column %q: DEFAULT, GENERATED, serial and identity columns are not supported on a stream with an envelope", c.Name).
				WithHint("Declare plain columns; each message gives the whole row.")
		}
	}
	var key []string
	if hasKey {
		for _, k := range strings.Split(keyOpt, ",") {
			if k = strings.TrimSpace(k); k != "" {
				key = append(key, strings.ToLower(strings.Trim(k, `"`)))
			}
		}
		if len(key) == 0 {
			return sqlerr.New(sqlerr.InvalidParameterValue, "option key names no column").
				WithHint("Write key = 'col' or key = 'col1, col2'.")
		}
		if n.PrimaryKey != nil && !slices.Equal(key, n.PrimaryKey) {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "option key (%s) differs from the PRIMARY KEY (%s)", strings.Join(key, ", "), strings.Join(n.PrimaryKey, ", ")).
				WithHint("Name the key once: with key = '...' or with PRIMARY KEY.")
		}
	} else {
		key = n.PrimaryKey
	}
	if len(key) == 0 {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "envelope '%s' needs a key", env).
			WithHint("Name the columns that identify a row: WITH (..., key = 'col1, col2') or PRIMARY KEY (col1, col2). A key column may come from the subject (INCLUDE subject_token 2 AS id).")
	}
	for i, k := range key {
		at := slices.IndexFunc(d.Columns, func(c catalog.Column) bool { return c.Name == k })
		if at < 0 {
			return sqlerr.New(sqlerr.UndefinedColumn, "key column %q does not exist", k).
				WithHint("Name columns of the stream (or of its INCLUDE clauses) in key.")
		}
		if slices.Contains(key[:i], k) {
			return sqlerr.New(sqlerr.DuplicateColumn, "key column %q appears twice", k)
		}
		d.Columns[at].NotNull = true
	}
	opts := make(map[string]string, len(n.Options))
	for k, v := range n.Options {
		opts[k] = v
	}
	opts[catalog.OptEnvelope] = env
	d.Options = opts
	d.PrimaryKey = key
	return nil
}

// envelopeWriteError refuses a write to a stream with an envelope.
func envelopeWriteError(d *catalog.Descriptor) error {
	return sqlerr.New(sqlerr.WrongObjectType, "cannot change stream %q: its rows are what the messages on subject %q make them (envelope '%s')", d.Name, d.Subject, d.Envelope()).
		WithHint("Publish an upsert or a tombstone (or a change event) to its subject instead.")
}
