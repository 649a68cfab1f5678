package sql

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/sqlerr"
)

// Stream formats besides JSON: protobuf (a compiled FileDescriptorSet
// and a message name) and avro (a record schema, inline or from a file).
// The schema is read once, at CREATE, and stored with the stream
// (catalog.Descriptor.FormatSchema): the stream does not change when the
// file does, and survives its removal.

// Options of the stream formats.
const (
	optSchemaFile = "schema_file"
	optSchema     = "schema"
	optMessage    = "message"
)

// maxSchemaFile bounds a schema file's size.
const maxSchemaFile = 16 << 20

// checkStreamFormat checks the format options of a CREATE STREAM whose
// descriptor is d (format already lower-cased and known).
func checkFormatOptions(n *front.CreateSource, isTable bool, d *catalog.Descriptor) error {
	switch d.Format {
	case exec.FormatJSON, catalog.FormatCSV:
		for _, k := range []string{optSchemaFile, optSchema, optMessage} {
			if _, ok := n.Options[k]; ok {
				return sqlerr.New(sqlerr.InvalidParameterValue, "option %s is for format 'protobuf' or 'avro', not %q", k, d.Format).
					WithHint("Give format = 'protobuf' (with schema_file and message) or format = 'avro' (with schema or schema_file).")
			}
		}
		return nil
	case exec.FormatProtobuf, exec.FormatAvro:
	default:
		return sqlerr.New(sqlerr.FeatureNotSupported, "format %q is not supported", d.Format).
			WithHint("Use format = 'json', 'csv', 'protobuf' or 'avro'.")
	}
	if d.Envelope() != "" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "envelope %q with format %q is not supported", d.Envelope(), d.Format).
			WithHint("Envelopes read JSON messages: use format = 'json'.")
	}
	if isTable {
		return sqlerr.New(sqlerr.FeatureNotSupported, "format %q on a table is not supported", d.Format).
			WithHint("A table's changelog is written by streamdb as JSON; read %s messages with CREATE STREAM (or CREATE TABLE ... APPEND ONLY).", d.Format)
	}
	if d.Options[catalog.OptWholeMessage] == "true" {
		return sqlerr.New(sqlerr.InvalidParameterValue, "whole_message is for format 'json' only").
			WithHint("A %s stream's columns read the message's fields by name; declare a jsonb column for a nested message.", d.Format)
	}
	_, hasFile := n.Options[optSchemaFile]
	_, hasInline := n.Options[optSchema]
	_, hasMessage := n.Options[optMessage]
	switch {
	case d.Format == exec.FormatProtobuf && hasInline:
		return sqlerr.New(sqlerr.InvalidParameterValue, "format 'protobuf' takes its schema from schema_file, not schema").
			WithHint("Compile the .proto files with protoc --include_imports --descriptor_set_out=FILE, put FILE in the server's schema directory (--schema-dir) and give schema_file = 'FILE'.")
	case d.Format == exec.FormatProtobuf && (!hasFile || !hasMessage):
		return sqlerr.New(sqlerr.InvalidParameterValue, "format 'protobuf' needs the options schema_file and message").
			WithHint("Give WITH (format = 'protobuf', schema_file = 'orders.pb', message = 'shop.Order'): a compiled FileDescriptorSet in the server's schema directory (--schema-dir) and the full name of the message type.")
	case d.Format == exec.FormatAvro && hasMessage:
		return sqlerr.New(sqlerr.InvalidParameterValue, "option message is for format 'protobuf'").
			WithHint("An Avro stream's record is the schema itself: give schema or schema_file only.")
	case d.Format == exec.FormatAvro && hasFile == hasInline:
		return sqlerr.New(sqlerr.InvalidParameterValue, "format 'avro' needs one of the options schema (the schema's JSON) and schema_file").
			WithHint("Give WITH (format = 'avro', schema = '{\"type\": \"record\", ...}') or schema_file = 'order.avsc' (a file in the server's schema directory, --schema-dir).")
	}
	return nil
}

// loadFormatSchema reads the schema of a protobuf or avro stream into
// d.FormatSchema and checks the stream's columns against it.
func (e *Engine) loadFormatSchema(d *catalog.Descriptor) error {
	if d.Format != exec.FormatProtobuf && d.Format != exec.FormatAvro {
		return nil
	}
	if text, ok := d.Options[optSchema]; ok {
		d.FormatSchema = []byte(text)
	} else {
		data, err := readSchemaFile(e.node.SchemaDir(), d.Options[optSchemaFile])
		if err != nil {
			return err
		}
		d.FormatSchema = data
	}
	return exec.CheckStreamFormat(d)
}

// readSchemaFile reads the file name under dir. A client names files
// under the schema directory only: no absolute path, no "..", and no
// symbolic link that leads outside it.
func readSchemaFile(dir, name string) ([]byte, error) {
	outside := func() error {
		return sqlerr.New(sqlerr.InsufficientPrivilege, "schema_file %q is not a file under the schema directory", name).
			WithHint("Name a file by its path relative to the server's schema directory (--schema-dir, setting format.schema-dir), without \"..\"; the directory is %s.", dir)
	}
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.VolumeName(name) != "" {
		return nil, outside()
	}
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return nil, outside()
		}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, sqlerr.New(sqlerr.UndefinedFile, "schema_file %q: the schema directory %s does not exist", name, dir).
				WithHint("Create the directory (or start the server with --schema-dir naming another) and put the schema file there.")
		}
		return nil, sqlerr.New(sqlerr.IOError, "schema directory %s: %v", dir, err)
	}
	path, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, sqlerr.New(sqlerr.UndefinedFile, "schema_file %q does not exist in the schema directory %s", name, dir).
				WithHint("Put the file there (the server's --schema-dir), or correct its name.")
		}
		return nil, sqlerr.New(sqlerr.IOError, "schema_file %q: %v", name, err)
	}
	if rel, err := filepath.Rel(root, path); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, outside()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, sqlerr.New(sqlerr.IOError, "schema_file %q: %v", name, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "schema_file %q is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSchemaFile+1))
	if err != nil {
		return nil, sqlerr.New(sqlerr.IOError, "schema_file %q: %v", name, err)
	}
	if len(data) > maxSchemaFile {
		return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "schema_file %q is larger than %d bytes", name, maxSchemaFile)
	}
	return data, nil
}
