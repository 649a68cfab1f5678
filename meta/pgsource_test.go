package meta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/pgcdc"
	"streamdb/types"
)

// TestPGSourceDataDriven runs a PostgreSQL source's apply paths over a
// fake host (testdata/pgsource): the commits of source transactions and
// of a copy, with the progress row written with them, the DDL of a
// mirrored table, the cleanup of an unfinished CREATE SOURCE and DROP
// SOURCE. The host keeps tables in memory and logs what it is asked.
// Commands:
//
//	table name=T cols=k:int8,v:text key=k [mirror=S]
//	                          a table; its rows follow, one a line,
//	                          values comma separated (NULL for null)
//	source name=S tables=public.t:T,...
//	                          source S mirroring those tables, with its
//	                          progress table S_progress
//	apply source=S end=LSN    one source transaction of the changes that
//	                          follow, applied up to LSN: insert|update|delete
//	                          SCHEMA.TABLE col=val ... [old col=val ...],
//	                          truncate SCHEMA.TABLE; val ? is unchanged
//	                          (TOAST), NULL null
//	copy source=S point=LSN [replace]
//	                          a copy's chunks: one chunk per line,
//	                          SCHEMA.TABLE col=val ... | col=val ... (rows)
//	rows name=T               the rows of table T
//	mirror-ddl name=T key=k   the CREATE TABLE of a source table whose
//	                          columns follow (name|type[|not null])
//	drop-unfinished           DropUnfinished
//	drop source=S             Drop (the host reaches no source database)
//
// Regenerate with `go test ./meta -run PGSourceDataDriven -rewrite`.
func TestPGSourceDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/pgsource", func(t *testing.T, path string) {
		env := newDDLEnv(t)
		host := &fakePGHost{live: env.live, tables: map[string]*fakeMirrorTable{}}
		s := NewPGSources(PGSourcesConfig{Host: host, DDL: env.ddl, Log: slog.New(slog.DiscardHandler)})
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			host.log = nil
			out := runPGSource(t, d, s, host, env)
			return strings.Join(host.log, "") + out
		})
	})
}

func runPGSource(t *testing.T, d *datadriven.TestData, s *PGSources, host *fakePGHost, env *ddlEnv) string {
	ctx := context.Background()
	arg := func(key string) string {
		if !d.HasArg(key) {
			return ""
		}
		var v string
		d.ScanArgs(t, key, &v)
		return v
	}
	switch d.Cmd {
	case "table":
		var cols []types.Column
		for _, c := range strings.Split(arg("cols"), ",") {
			name, typ, _ := strings.Cut(c, ":")
			tt, err := types.Parse(typ)
			if err != nil {
				t.Fatalf("%s: %v", d.Pos, err)
			}
			cols = append(cols, types.Column{Name: name, Type: tt})
		}
		desc := &catalog.Descriptor{Name: arg("name"), Kind: catalog.KindTable, Columns: catalog.ColumnsFrom(cols),
			PrimaryKey: strings.Split(arg("key"), ","), Mirror: arg("mirror")}
		if err := env.ddl.Create(desc); err != nil {
			return errLine(err)
		}
		tab := host.addTable(desc, cols)
		for _, line := range lines(d.Input) {
			row := make(types.Row, len(cols))
			for i, v := range strings.Split(line, ",") {
				row[i] = parseDatum(t, v, cols[i])
			}
			tab.put(row)
		}
		return ""
	case "source":
		src := &catalog.PGSource{Publication: "pub", Slot: "slot_" + arg("name"), Progress: arg("name") + "_progress"}
		for _, spec := range strings.Split(arg("tables"), ",") {
			qual, table, _ := strings.Cut(spec, ":")
			schema, name, _ := strings.Cut(qual, ".")
			src.Tables = append(src.Tables, catalog.PGSourceTable{Schema: schema, Name: name, Table: table})
		}
		progCols := []types.Column{{Name: "source", Type: types.Text}, {Name: "lsn", Type: types.Text}, {Name: "applied_at", Type: types.Timestamptz}}
		prog := &catalog.Descriptor{Name: src.Progress, Kind: catalog.KindTable, Columns: catalog.ColumnsFrom(progCols), PrimaryKey: []string{"source"}, Mirror: arg("name")}
		if err := env.ddl.Create(prog); err != nil {
			return errLine(err)
		}
		host.addTable(prog, progCols)
		desc := &catalog.Descriptor{Name: arg("name"), Kind: catalog.KindSource, Source: src}
		if err := env.ddl.Create(desc); err != nil {
			return errLine(err)
		}
		return ""
	case "apply":
		a := host.applier(t, s, arg("source"))
		end, err := pgcdc.ParseLSN(arg("end"))
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		txn := &pgcdc.Txn{End: end}
		for _, line := range lines(d.Input) {
			txn.Changes = append(txn.Changes, parseChange(t, line, host))
		}
		if err := a.apply(ctx, []*pgcdc.Txn{txn}, end); err != nil {
			return errLine(err)
		}
		return ""
	case "copy":
		a := host.applier(t, s, arg("source"))
		point, err := pgcdc.ParseLSN(arg("point"))
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		var tables []*pgcdc.Table
		for _, st := range a.src.Tables {
			tables = append(tables, &pgcdc.Table{Schema: st.Schema, Name: st.Name})
		}
		chunks := make(chan *copyChunk, 64)
		for _, line := range lines(d.Input) {
			qual, rest, _ := strings.Cut(line, " ")
			c := &copyChunk{}
			for _, tt := range tables {
				if tt.Schema+"."+tt.Name == qual {
					c.t = tt
				}
			}
			for _, r := range strings.Split(rest, "|") {
				cols, vals := parseValues(strings.Fields(r))
				c.ops = append(c.ops, rowOp{op: pgcdc.OpInsert, cols: cols, new: vals})
			}
			chunks <- c
		}
		chunks <- &copyChunk{last: true}
		close(chunks)
		if err := a.commitCopy(ctx, chunks, tables, point, d.HasArg("replace")); err != nil {
			return errLine(err)
		}
		return ""
	case "rows":
		return host.tables[arg("name")].String()
	case "mirror-ddl":
		tab := &pgcdc.Table{Schema: "public", Name: arg("name")}
		for _, line := range lines(d.Input) {
			f := strings.Split(line, "|")
			c := pgcdc.Column{Name: f[0], Type: f[1], NotNull: len(f) > 2 && f[2] == "not null"}
			if c.Name == arg("key") {
				tab.Key = append(tab.Key, len(tab.Columns))
			}
			tab.Columns = append(tab.Columns, c)
		}
		stmt, asText := mirrorTableDDL(arg("name"), tab)
		out := stmt + "\n"
		for _, a := range asText {
			out += "as text: " + a + "\n"
		}
		return out
	case "drop-unfinished":
		s.DropUnfinished(ctx)
		return ""
	case "drop":
		src, ok := host.Lookup(arg("source"))
		if !ok {
			t.Fatalf("%s: no source %s", d.Pos, arg("source"))
		}
		if err := s.Drop(ctx, src); err != nil {
			return errLine(err)
		}
		var left []string
		for name := range env.live.objs {
			left = append(left, name)
		}
		sort.Strings(left)
		return "catalog: " + orNone(strings.Join(left, ", ")) + "\n"
	}
	t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
	return ""
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func parseDatum(t *testing.T, v string, col types.Column) types.Datum {
	if v == "NULL" {
		return types.Null
	}
	d, err := types.ParseText(v, col.Type)
	if err != nil {
		t.Fatalf("value %q of %s: %v", v, col.Name, err)
	}
	return d
}

// parseValues reads col=val fields as a source sends them.
func parseValues(fields []string) ([]string, []pgcdc.Value) {
	var cols []string
	var vals []pgcdc.Value
	for _, f := range fields {
		name, v, _ := strings.Cut(f, "=")
		cols = append(cols, name)
		switch v {
		case "?":
			vals = append(vals, pgcdc.Value{Unchanged: true})
		case "NULL":
			vals = append(vals, pgcdc.Value{Null: true})
		default:
			vals = append(vals, pgcdc.Value{Text: []byte(v)})
		}
	}
	return cols, vals
}

// parseChange reads "op schema.table col=val ... [old col=val ...]".
func parseChange(t *testing.T, line string, host *fakePGHost) pgcdc.Change {
	f := strings.Fields(line)
	schema, name, _ := strings.Cut(f[1], ".")
	if f[0] == "truncate" {
		return pgcdc.Change{Op: pgcdc.OpTruncate, Truncated: []*pgcdc.Relation{host.relation(schema, name, nil)}}
	}
	newF, oldF := f[2:], []string(nil)
	for i, x := range newF {
		if x == "old" {
			newF, oldF = f[2:2+i], f[3+i:]
			break
		}
	}
	cols, vals := parseValues(newF)
	ch := pgcdc.Change{Rel: host.relation(schema, name, cols)}
	switch f[0] {
	case "insert":
		ch.Op, ch.New = pgcdc.OpInsert, vals
	case "update":
		ch.Op, ch.New = pgcdc.OpUpdate, vals
	case "delete":
		ch.Op, ch.Old = pgcdc.OpDelete, vals
	default:
		t.Fatalf("unknown change %q", line)
	}
	if oldF != nil {
		_, ch.Old = parseValues(oldF)
	}
	return ch
}

// fakePGHost is a host whose tables are in memory; it logs the DDL and
// commits it is asked for.
type fakePGHost struct {
	live   *fakeLive
	tables map[string]*fakeMirrorTable
	rels   map[string]*pgcdc.Relation
	log    []string
}

func (h *fakePGHost) addTable(d *catalog.Descriptor, cols []types.Column) *fakeMirrorTable {
	tab := &fakeMirrorTable{name: d.Name, cols: cols, rows: map[string]types.Row{}}
	for _, k := range d.PrimaryKey {
		for i, c := range cols {
			if c.Name == k {
				tab.key = append(tab.key, i)
			}
		}
	}
	h.tables[d.Name] = tab
	return tab
}

// relation returns one Relation per table, as a stream keeps it.
func (h *fakePGHost) relation(schema, name string, cols []string) *pgcdc.Relation {
	if h.rels == nil {
		h.rels = map[string]*pgcdc.Relation{}
	}
	r := h.rels[schema+"."+name]
	if r == nil {
		r = &pgcdc.Relation{Schema: schema, Name: name}
		h.rels[schema+"."+name] = r
	}
	for _, c := range cols {
		if !containsString(r.Columns, c) {
			r.Columns = append(r.Columns, c)
		}
	}
	return r
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// applier is an applier of source name that is not running.
func (h *fakePGHost) applier(t *testing.T, s *PGSources, name string) *pgApplier {
	d, ok := h.Lookup(name)
	if !ok || d.Kind != catalog.KindSource {
		t.Fatalf("no source %s", name)
	}
	return &pgApplier{s: s, name: name, src: d.Source}
}

func (h *fakePGHost) logf(format string, args ...any) {
	h.log = append(h.log, fmt.Sprintf(format, args...)+"\n")
}

func (h *fakePGHost) Lookup(name string) (*catalog.Descriptor, bool) { return h.live.Lookup(name) }

func (h *fakePGHost) Objects(kind catalog.ObjectKind) []*catalog.Descriptor {
	var out []*catalog.Descriptor
	for _, d := range h.live.objs {
		if d.Kind == kind {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (h *fakePGHost) Endpoint(*catalog.PGSource) (pgcdc.Endpoint, error) {
	return pgcdc.Endpoint{}, errors.New("no source database in this test")
}

func (h *fakePGHost) ShownConnection(*catalog.PGSource) string { return "" }

func (h *fakePGHost) CreateMirror(_ context.Context, stmt, source string) (string, error) {
	h.logf("create (mirror of %s): %s", source, stmt)
	return "", errors.New("no CREATE TABLE in this test")
}

func (h *fakePGHost) AlterMirror(_ context.Context, stmt string) error {
	h.logf("alter: %s", stmt)
	return nil
}

func (h *fakePGHost) DropMirror(_ context.Context, name string) error {
	if _, ok := h.live.Lookup(name); !ok {
		h.logf("drop %s: not there", name)
		return nil
	}
	h.logf("drop %s", name)
	h.live.Delete(name)
	delete(h.tables, name)
	return nil
}

func (h *fakePGHost) CommitMirror(ctx context.Context, writes []*MirrorWrite) error {
	type computed struct {
		t       *fakeMirrorTable
		changes []exec.Change
	}
	var all []computed
	for _, w := range writes {
		tab := h.tables[w.Table.Name]
		changes, err := w.Compute(ctx, tab)
		if err != nil {
			return err
		}
		all = append(all, computed{tab, changes})
	}
	// All of a commit or none of it: the changes apply once all are
	// computed.
	h.logf("commit")
	for _, c := range all {
		for _, ch := range c.changes {
			sign := "+"
			if ch.Sign == exec.Delete {
				sign = "-"
				delete(c.t.rows, string(c.t.RowKey(ch.Row)))
			} else {
				c.t.put(ch.Row)
			}
			h.logf("  %s %s%s", c.t.name, sign, c.t.format(ch.Row))
		}
	}
	return nil
}

func (h *fakePGHost) Query(context.Context, string) ([][]string, error) {
	return nil, errors.New("no queries in this test")
}

func (h *fakePGHost) WaitTableCurrent(_ context.Context, d *catalog.Descriptor, _ string) error {
	h.logf("wait for %s", d.Name)
	return nil
}

func (h *fakePGHost) ChangelogLimit() int { return 1 << 20 }

func (h *fakePGHost) Notice(_ context.Context, msg, hint string) {
	h.logf("notice: %s (hint: %s)", msg, hint)
}

// fakeMirrorTable is a keyed table in memory.
type fakeMirrorTable struct {
	name string
	cols []types.Column
	key  []int
	rows map[string]types.Row
}

func (m *fakeMirrorTable) put(row types.Row) { m.rows[string(m.RowKey(row))] = row }

func (m *fakeMirrorTable) Name() string            { return m.name }
func (m *fakeMirrorTable) Columns() []types.Column { return m.cols }

func (m *fakeMirrorTable) RowKey(row types.Row) []byte {
	parts := make([]string, len(m.key))
	for i, k := range m.key {
		parts[i] = types.FormatText(row[k], m.cols[k].Type)
	}
	return []byte(strings.Join(parts, "\x00"))
}

func (m *fakeMirrorTable) Lookup(key []byte) (types.Row, error) { return m.rows[string(key)], nil }

func (m *fakeMirrorTable) Rows(context.Context) ([]types.Row, error) {
	var out []types.Row
	for _, k := range m.sortedKeys() {
		out = append(out, m.rows[k])
	}
	return out, nil
}

func (m *fakeMirrorTable) sortedKeys() []string {
	keys := make([]string, 0, len(m.rows))
	for k := range m.rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// format shows a row; a progress table's applied_at (the time of the
// commit) is left out.
func (m *fakeMirrorTable) format(row types.Row) string {
	var parts []string
	for i, d := range row {
		if m.cols[i].Name == "applied_at" {
			continue
		}
		if d.IsNull() {
			parts = append(parts, "NULL")
			continue
		}
		parts = append(parts, types.FormatText(d, m.cols[i].Type))
	}
	return "(" + strings.Join(parts, ",") + ")"
}

func (m *fakeMirrorTable) String() string {
	var sb strings.Builder
	for _, k := range m.sortedKeys() {
		sb.WriteString(m.format(m.rows[k]) + "\n")
	}
	if sb.Len() == 0 {
		return "(empty)\n"
	}
	return sb.String()
}
