package sql

import (
	"context"
	"strings"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// sinkOptions are the WITH options of CREATE SINK and their values.
var sinkOptions = map[string][]string{
	"format":      {"json", exec.FormatProtobuf, exec.FormatAvro},
	"envelope":    {string(exec.EnvelopeChangelog), string(exec.EnvelopeUpsert), string(exec.EnvelopeDebezium)},
	optSchema:     nil,
	optSchemaFile: nil,
	optMessage:    nil,
}

// checkSinkOptions returns the format and envelope of opts (json and
// changelog by default).
func checkSinkOptions(opts map[string]string) (format, envelope string, err error) {
	format, envelope = "json", string(exec.EnvelopeChangelog)
	for k, v := range opts {
		allowed, ok := sinkOptions[k]
		if !ok {
			return "", "", sqlerr.New(sqlerr.InvalidParameterValue, "unknown sink option %q", k).
				WithHint("CREATE SINK takes WITH (format = 'json' | 'protobuf' | 'avro', envelope = 'changelog' | 'upsert' | 'debezium', schema_file, schema, message).")
		}
		if allowed == nil {
			continue // a schema option, checked by checkSinkSchemaOptions
		}
		v = strings.ToLower(v)
		found := false
		for _, a := range allowed {
			found = found || a == v
		}
		if !found {
			return "", "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for sink option %s: %q", k, v).
				WithHint("Use one of: %s.", strings.Join(allowed, ", "))
		}
		if k == "format" {
			format = v
		} else {
			envelope = v
		}
	}
	return format, envelope, checkSinkSchemaOptions(opts, format, envelope)
}

// checkSinkSchemaOptions checks the schema options of a sink in format
// (json, protobuf or avro) and envelope.
func checkSinkSchemaOptions(opts map[string]string, format, envelope string) error {
	_, hasFile := opts[optSchemaFile]
	_, hasInline := opts[optSchema]
	_, hasMessage := opts[optMessage]
	switch {
	case format == "json" && (hasFile || hasInline || hasMessage):
		return sqlerr.New(sqlerr.InvalidParameterValue, "the options schema_file, schema and message are for format 'protobuf' or 'avro', not 'json'").
			WithHint("Give format = 'protobuf' (with schema_file and message) or format = 'avro' (with schema or schema_file).")
	case format == "json":
		return nil
	case envelope != string(exec.EnvelopeChangelog):
		return sqlerr.New(sqlerr.FeatureNotSupported, "envelope %q with format %q is not supported", envelope, format).
			WithHint("A %s sink publishes one message per change, the row, with its op (+ or -) in the header %s: use envelope = 'changelog', or format = 'json' for %s.", format, meta.SinkOpHeader, envelope)
	case format == exec.FormatProtobuf && hasInline:
		return sqlerr.New(sqlerr.InvalidParameterValue, "format 'protobuf' takes its schema from schema_file, not schema").
			WithHint("Compile the .proto files with protoc --include_imports --descriptor_set_out=FILE, put FILE in the server's schema directory (--schema-dir) and give schema_file = 'FILE'.")
	case format == exec.FormatProtobuf && (!hasFile || !hasMessage):
		return sqlerr.New(sqlerr.InvalidParameterValue, "format 'protobuf' needs the options schema_file and message").
			WithHint("Give WITH (format = 'protobuf', schema_file = 'orders.pb', message = 'shop.Order'): a compiled FileDescriptorSet in the server's schema directory (--schema-dir) and the full name of the message type.")
	case format == exec.FormatAvro && hasMessage:
		return sqlerr.New(sqlerr.InvalidParameterValue, "option message is for format 'protobuf'").
			WithHint("An Avro sink's record is the schema itself: give schema or schema_file only.")
	case format == exec.FormatAvro && hasFile == hasInline:
		return sqlerr.New(sqlerr.InvalidParameterValue, "format 'avro' needs one of the options schema (the schema's JSON) and schema_file").
			WithHint("Give WITH (format = 'avro', schema = '{\"type\": \"record\", ...}') or schema_file = 'order.avsc' (a file in the server's schema directory, --schema-dir).")
	}
	return nil
}

// sinks returns every sink, ordered by name.
func (e *Engine) sinks() ([]*meta.SinkDescriptor, error) { return e.sinkStore.List() }

// sinkNamed returns the sink called name, or nil.
func (e *Engine) sinkNamed(name string) (*meta.SinkDescriptor, error) {
	return e.sinkStore.Named(name)
}

// sinkOwner is the role that owns a sink created by this session.
func (s *session) sinkOwner() string {
	if s.e.roles.Role(s.user) != nil {
		return s.user
	}
	return BootstrapUser
}

func (e *Engine) createSink(ctx context.Context, n *front.CreateSink, owner string) (string, error) {
	const tag = "CREATE SINK"
	for _, sc := range []string{n.Schema, n.ViewSchema} {
		if sc != "" && sc != "public" {
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "schema %q does not exist; streamdb has only the public schema", sc)
		}
	}
	format, envelope, err := checkSinkOptions(n.Options)
	if err != nil {
		return "", err
	}
	if err := checkSubject(n.Subject, map[string]string{"subject": n.Subject}, false); err != nil {
		return "", err
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if d, err := e.sinkStore.CheckFree(n.Name, n.Subject); err != nil {
		return "", err
	} else if d != nil {
		if n.IfNotExists {
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.DuplicateObject, "sink %q already exists", n.Name)
	}
	v, ok := e.lookup(n.View)
	if !ok {
		return "", sqlerr.New(sqlerr.UndefinedTable, "materialized view %q does not exist", n.View)
	}
	if v.Kind == catalog.KindUnpopulatedView {
		return "", binder.NotPopulated(v.Name)
	}
	if v.Kind != catalog.KindView && v.Kind != catalog.KindTable {
		return "", sqlerr.New(sqlerr.WrongObjectType, "%q is a %s: a sink publishes the rows of a materialized view or table", n.View, v.Kind).
			WithHint("CREATE MATERIALIZED VIEW over the stream and CREATE SINK FROM that view.")
	}
	if err := meta.CheckSinkSubject(n.Subject, e.catalogNow()); err != nil {
		return "", err
	}
	var root plan.Node
	if v.Kind == catalog.KindTable {
		root, err = tableScan(v)
	} else {
		root, err = e.viewPlan(v)
	}
	if err != nil {
		return "", err
	}
	keyCols := exec.UniqueKey(root)
	if envelope == string(exec.EnvelopeUpsert) && keyCols == nil {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "the upsert envelope needs a view with a unique key, and %s has none", v.Name).
			WithHint("Use envelope = 'changelog' or 'debezium', or sink a view that groups by its key (or a table with a primary key).")
	}
	var schema []byte
	if format != "json" {
		if text, ok := n.Options[optSchema]; ok {
			schema = []byte(text)
		} else if schema, err = readSchemaFile(e.node.SchemaDir(), n.Options[optSchemaFile]); err != nil {
			return "", err
		}
		cols, err := v.Schema()
		if err != nil {
			return "", err
		}
		if err := meta.CheckSinkSchema(format, schema, n.Options[optMessage], cols); err != nil {
			return "", err
		}
	}
	_, err = e.sinkStore.Create(ctx, meta.NewSink{Name: n.Name, Owner: owner, View: v, KeyCols: keyCols,
		Subject: n.Subject, Format: format, Envelope: envelope, Schema: schema, Message: n.Options[optMessage]})
	if err != nil {
		return "", err
	}
	return tag, e.ddlCheckpoint(ctx)
}

func (e *Engine) dropSink(ctx context.Context, n *front.DropSink) (string, error) {
	const tag = "DROP SINK"
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	for _, name := range n.Names {
		d, err := e.sinkNamed(name)
		if err != nil {
			return "", err
		}
		if d == nil {
			if n.IfExists {
				continue
			}
			return "", sqlerr.New(sqlerr.UndefinedObject, "sink %q does not exist", name)
		}
		if err := e.deleteSink(d); err != nil {
			return "", err
		}
	}
	return tag, e.ddlCheckpoint(ctx)
}

// deleteSink removes sink d and its outbox; its subject and what it
// published stay in JetStream. The caller holds ddlMu.
func (e *Engine) deleteSink(d *meta.SinkDescriptor) error { return e.sinkStore.Delete(d) }

// sinksOn returns the sinks that read any of the views named.
func (e *Engine) sinksOn(views []*catalog.Descriptor) ([]*meta.SinkDescriptor, error) {
	return e.sinkStore.On(views)
}

// showSinks lists the sinks with their lag and publishing status
// (meta.Sinks.Rows).
func (e *Engine) showSinks(context.Context) ([]types.Row, error) {
	return e.sinkStore.Rows(e.node.SinkStatus)
}
