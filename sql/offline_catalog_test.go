package sql

import (
	"testing"

	"streamdb/catalog"
	"streamdb/sqlerr"
)

// TestCreateChecksOffline runs CREATE STREAM, TABLE and MATERIALIZED VIEW
// through NewOfflineCatalog, whose entries come from CREATE's own checks
// (sourceDescriptor, viewDescriptor): each statement is accepted, or
// refused with its SQLSTATE, without a server.
func TestCreateChecksOffline(t *testing.T) {
	cases := []struct {
		stmt string
		code string // "" when the statement is accepted
	}{
		{`CREATE STREAM s_json (k int, v text)`, ""},
		{`CREATE STREAM s_nocols () WITH (subject = 'x')`, sqlerr.SyntaxError},
		{`CREATE STREAM s_dup (k int, k text)`, sqlerr.DuplicateColumn},
		{`CREATE STREAM s_opt (k int) WITH (colour = 'red')`, sqlerr.InvalidParameterValue},
		{`CREATE TABLE t_ok (id int PRIMARY KEY, v text)`, ""},
		// Formats.
		{`CREATE STREAM s_fmt (k int) WITH (format = 'xml')`, sqlerr.FeatureNotSupported},
		{`CREATE STREAM s_schema_json (k int) WITH (schema = '{}')`, sqlerr.InvalidParameterValue},
		{`CREATE STREAM s_pb_inline (k int) WITH (format = 'protobuf', schema = 'x', message = 'm')`, sqlerr.InvalidParameterValue},
		{`CREATE STREAM s_pb_nomsg (k int) WITH (format = 'protobuf', schema_file = 'a.pb')`, sqlerr.InvalidParameterValue},
		{`CREATE STREAM s_avro_msg (k int) WITH (format = 'avro', schema = '{}', message = 'm')`, sqlerr.InvalidParameterValue},
		{`CREATE STREAM s_avro_none (k int) WITH (format = 'avro')`, sqlerr.InvalidParameterValue},
		{`CREATE TABLE t_avro (k int) WITH (format = 'avro', schema = '{}')`, sqlerr.FeatureNotSupported},
		{`CREATE STREAM s_avro_whole (d jsonb) WITH (format = 'avro', schema = '{}', whole_message = true)`, sqlerr.InvalidParameterValue},
		// CSV.
		{`CREATE STREAM s_csv (k int, v text) WITH (format = 'csv', header = true, delimiter = ';')`, ""},
		{`CREATE STREAM s_csv_json (k int) WITH (delimiter = ';')`, sqlerr.InvalidParameterValue},
		{`CREATE TABLE t_csv (k int) WITH (format = 'csv')`, sqlerr.FeatureNotSupported},
		{`CREATE STREAM s_csv_whole (d jsonb) WITH (format = 'csv', whole_message = true)`, sqlerr.FeatureNotSupported},
		{`CREATE STREAM s_csv_delim (k int) WITH (format = 'csv', delimiter = ';;')`, sqlerr.InvalidParameterValue},
		// Envelopes.
		{`CREATE STREAM s_up (id int, v text) WITH (envelope = 'upsert', key = 'id')`, ""},
		{`CREATE STREAM s_up_pk (id int PRIMARY KEY, v text) WITH (envelope = 'upsert')`, ""},
		{`CREATE STREAM s_key_only (id int) WITH (key = 'id')`, sqlerr.InvalidParameterValue},
		{`CREATE STREAM s_env_bad (id int) WITH (envelope = 'maxwell', key = 'id')`, sqlerr.InvalidParameterValue},
		{`CREATE TABLE t_env (id int) WITH (envelope = 'upsert', key = 'id')`, sqlerr.FeatureNotSupported},
		{`CREATE STREAM s_dbz_csv (id int) WITH (envelope = 'debezium', format = 'csv', key = 'id')`, sqlerr.FeatureNotSupported},
		{`CREATE STREAM s_up_nokey (id int) WITH (envelope = 'upsert')`, sqlerr.InvalidTableDefinition},
		{`CREATE STREAM s_up_emptykey (id int) WITH (envelope = 'upsert', key = ' , ')`, sqlerr.InvalidParameterValue},
		{`CREATE STREAM s_up_nocol (id int) WITH (envelope = 'upsert', key = 'nope')`, sqlerr.UndefinedColumn},
		{`CREATE STREAM s_up_twice (id int) WITH (envelope = 'upsert', key = 'id, id')`, sqlerr.DuplicateColumn},
		{`CREATE STREAM s_up_pkdiff (id int PRIMARY KEY, o int) WITH (envelope = 'upsert', key = 'o')`, sqlerr.InvalidTableDefinition},
		{`CREATE STREAM s_up_default (id int, v int DEFAULT 1) WITH (envelope = 'upsert', key = 'id')`, sqlerr.FeatureNotSupported},
		{`CREATE STREAM s_up_whole (d jsonb) WITH (envelope = 'upsert', key = 'd', whole_message = true)`, sqlerr.FeatureNotSupported},
		// INCLUDE and whole messages.
		{`CREATE STREAM s_inc (id int) INCLUDE subject AS subj INCLUDE subject_token 2 AS region INCLUDE header 'Trace-Id' AS trace INCLUDE timestamp AS ts INCLUDE sequence AS seq WITH (subject = 'md.*.created')`, ""},
		{`CREATE TABLE t_inc (id int) INCLUDE subject AS subj`, sqlerr.FeatureNotSupported},
		{`CREATE STREAM s_whole (doc jsonb) WITH (whole_message = true)`, ""},
		{`CREATE STREAM s_whole_no (k int) WITH (whole_message = false)`, ""},
		{`CREATE STREAM s_whole_bad (doc jsonb) WITH (whole_message = 'maybe')`, sqlerr.InvalidParameterValue},
		{`CREATE STREAM s_whole_two (a jsonb, b jsonb) WITH (whole_message = true)`, sqlerr.InvalidTableDefinition},
		{`CREATE TABLE t_whole (doc jsonb) WITH (whole_message = true)`, sqlerr.FeatureNotSupported},
		// Materialized views' options.
		{`CREATE MATERIALIZED VIEW v_ok WITH (on_error = 'FAIL') AS SELECT k, count(*) FROM s_json GROUP BY k`, ""},
		{`CREATE MATERIALIZED VIEW v_opt WITH (colour = 'red') AS SELECT k FROM s_json`, sqlerr.InvalidParameterValue},
		{`CREATE MATERIALIZED VIEW v_err WITH (on_error = 'retry') AS SELECT k FROM s_json`, sqlerr.InvalidParameterValue},
		{`CREATE MATERIALIZED VIEW v_uids WITH (uids = 'a-b') AS SELECT k FROM s_json`, sqlerr.InvalidParameterValue},
		{`CREATE MATERIALIZED VIEW v_cols (a, b) AS SELECT k FROM s_json`, sqlerr.SyntaxError},
		{`CREATE MATERIALIZED VIEW v_same AS SELECT k, v AS k FROM s_json`, sqlerr.DuplicateColumn},
		{`CREATE MATERIALIZED VIEW v_ok AS SELECT k FROM s_json`, sqlerr.DuplicateTable},
	}
	cat := NewOfflineCatalog()
	for _, c := range cases {
		err := cat.Exec(c.stmt)
		if got := sqlerr.Code(err); got != c.code {
			t.Errorf("%s\n  got %q (%v), want %q", c.stmt, got, err, c.code)
		}
	}
	up, ok := cat.Lookup("s_up")
	if !ok || up.Envelope() != catalog.EnvelopeUpsert || len(up.PrimaryKey) != 1 || up.PrimaryKey[0] != "id" {
		t.Errorf("s_up: %+v, want an upsert stream keyed by id", up)
	}
	if inc, ok := cat.Lookup("s_inc"); !ok || len(inc.Columns) != 6 || inc.Columns[5].Metadata != catalog.MetaSequence {
		t.Errorf("s_inc: %+v, want id and five INCLUDE columns, the last the sequence", inc)
	}
	if v, ok := cat.Lookup("v_ok"); !ok || v.Options["on_error"] != "fail" {
		t.Errorf("v_ok: %+v, want on_error = fail", v)
	}
}
