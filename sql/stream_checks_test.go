package sql

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
)

// TestReadSchemaFile: a schema_file is read only from under the schema
// directory; every way out of it is 42501, a missing file or directory
// 58P01.
func TestReadSchemaFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "order.avsc"), []byte(`{"type":"record"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.pb")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape.pb")); err != nil {
		t.Fatal(err)
	}
	data, err := readSchemaFile(dir, "order.avsc")
	if err != nil || string(data) != `{"type":"record"}` {
		t.Fatalf("order.avsc: %q, %v", data, err)
	}
	for name, code := range map[string]string{
		"":               sqlerr.InsufficientPrivilege,
		"/etc/passwd":    sqlerr.InsufficientPrivilege,
		`\x.pb`:          sqlerr.InsufficientPrivilege,
		"../secret.pb":   sqlerr.InsufficientPrivilege,
		"sub/../../x.pb": sqlerr.InsufficientPrivilege,
		"escape.pb":      sqlerr.InsufficientPrivilege,
		"missing.pb":     sqlerr.UndefinedFile,
		"sub":            sqlerr.InvalidParameterValue,
	} {
		if _, err := readSchemaFile(dir, name); sqlerr.Code(err) != code {
			t.Errorf("readSchemaFile(%q): %v, want SQLSTATE %s", name, err, code)
		}
	}
	if _, err := readSchemaFile(filepath.Join(dir, "nodir"), "order.avsc"); sqlerr.Code(err) != sqlerr.UndefinedFile || !strings.Contains(err.Error(), "schema directory") {
		t.Errorf("a missing schema directory: %v, want 58P01 naming the directory", err)
	}
}

// TestMemberReport: what streamdb_streams says of a stream's message
// members, from its readers' counts: the most any reader counted, keys
// no column has (not those a column added since matches), and columns
// no message had.
func TestMemberReport(t *testing.T) {
	d := &catalog.Descriptor{Name: "s", Kind: catalog.KindStream, Columns: []catalog.Column{
		{Name: "id"}, {Name: "v"}, {Name: "g", Generated: "id + 1"}, {Name: "subj", Metadata: catalog.MetaSubject},
	}}
	if got := messageMemberColumns(d); !reflect.DeepEqual(got, map[string]string{"id": "id", "v": "v"}) {
		t.Errorf("messageMemberColumns: %v, want id and v only", got)
	}
	readers := []exec.KeyStats{
		{Decoded: 10, Unmatched: 4, Columns: []string{"id", "v"}, Seen: []bool{true, false},
			Keys: []exec.KeyCount{{Key: "extra", Messages: 4}, {Key: "zero", Messages: 0}}},
		{Decoded: 7, Unmatched: 2, Columns: []string{"id"}, Seen: []bool{true},
			Keys: []exec.KeyCount{{Key: "v", Messages: 2}, {Key: "extra", Messages: 1}}},
	}
	got := memberReport(d, readers)
	want := streamMembers{decoded: 10, unmatchedMessages: 4,
		unmatched: []exec.KeyCount{{Key: "extra", Messages: 4}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("memberReport: %+v, want %+v", got, want)
	}
	none := memberReport(d, []exec.KeyStats{{Decoded: 1, Columns: []string{"id", "v"}, Seen: []bool{true, false}}})
	if !reflect.DeepEqual(none.neverSeen, []string{"v"}) {
		t.Errorf("neverSeen: %v, want [v]", none.neverSeen)
	}
	whole := &catalog.Descriptor{Options: map[string]string{catalog.OptWholeMessage: "true"}, Columns: []catalog.Column{{Name: "doc"}}}
	if r := memberReport(whole, readers); r.decoded != 0 || messageMemberColumns(whole) != nil {
		t.Errorf("a whole-message stream has no member report: %+v", r)
	}
}
