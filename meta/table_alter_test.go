package meta

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// TestAlterDataDriven applies bound ALTER TABLE column changes and
// renames (DDL.CommitColumnChange, DDL.CommitRename) to tables whose rows
// are written straight into a real state store, over the fakes of
// TestDDLDataDriven (testdata/alter). After every command it checks that
// ddlMu is free and that the live catalog agrees with the stored one.
// Commands:
//
//	table name=T cols=k:int8,x:text [pk=k] [index=x] [ref=P.c]
//	                         create table T (columns name:type), with a
//	                         primary key, an index on one column and a
//	                         foreign key of its first column to P(c)
//	rows name=T              write the input lines (values by column,
//	                         comma-separated, NULL; " *N": N copies)
//	                         into T's state
//	last name=T seq=N        T's changelog ends at N on JetStream
//	alter name=T             CommitColumnChange of the input lines, then
//	                         T's rows; one action a line:
//	                           add C TYPE [V]   a column, V in old rows
//	                           drop C           a column, its indexes too
//	                           type C TYPE      an assignment cast of C
//	                           shorten C N      C becomes varchar(N)
//	                           pk C             ADD PRIMARY KEY (C)
//	                           check NAME C MAX a CHECK (C <= MAX)
//	                           rename C TO      a column (no rewrite)
//	rename name=T to=U       CommitRename of table T to U
//	show name=T              T's columns, rows, index entries and
//	                         constraints
//	catalog                  the stored catalog
//
// Regenerate with `go test ./meta -run AlterDataDriven -rewrite`.
func TestAlterDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/alter", func(t *testing.T, path string) {
		env := newDDLEnv(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out := env.runAlter(t, d)
			if !env.ddlMu.TryLock() {
				t.Fatalf("%s: ddlMu is still held after the command", d.Pos)
			}
			env.ddlMu.Unlock()
			env.checkLive(t)
			return out
		})
	})
}

func (env *ddlEnv) runAlter(t *testing.T, d *datadriven.TestData) string {
	name := ""
	if d.HasArg("name") {
		d.ScanArgs(t, "name", &name)
	}
	switch d.Cmd {
	case "table":
		return env.createTable(t, d, name)
	case "rows":
		tab := env.lookup(t, name)
		b := env.store.DB().NewIndexedBatch()
		defer b.Close()
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			row, count := parseRow(t, tab, line)
			if err := b.Set(stateKey(tab, row), exec.EncodeViewValue(row, count), nil); err != nil {
				t.Fatal(err)
			}
		}
		for i := range tab.Indexes {
			if _, err := exec.BuildIndex(b, b, tab, &tab.Indexes[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := env.store.Commit(b, true); err != nil {
			t.Fatal(err)
		}
		return env.showTable(t, name)
	case "last":
		var seq uint64
		d.ScanArgs(t, "seq", &seq)
		env.ends.last[name] = seq
		return ""
	case "alter":
		c := env.columnChange(t, d, name)
		reloads := env.rt.reloads
		env.ddlMu.Lock()
		err := env.ddl.CommitColumnChange(c)
		env.ddlMu.Unlock()
		var out strings.Builder
		if err != nil {
			out.WriteString(errLine(err))
		} else {
			out.WriteString("altered, ")
		}
		fmt.Fprintf(&out, "reloads %d\n", env.rt.reloads-reloads)
		for i := range c.DroppedIndexes {
			ix := &c.DroppedIndexes[i]
			fmt.Fprintf(&out, "dropped index %s: %d entries\n", ix.Name, env.countPrefix(t, exec.IndexPrefix(c.Old.ID, ix)))
		}
		return out.String() + env.showTable(t, name)
	case "rename":
		var to string
		d.ScanArgs(t, "to", &to)
		old := env.lookup(t, name)
		next := *old
		next.Name = to
		var others []*catalog.Descriptor
		for _, x := range env.live.all() {
			if x.ID == old.ID {
				continue
			}
			x2 := *x
			x2.Constraints = slices.Clone(x.Constraints)
			changed := false
			for j := range x2.Constraints {
				if c := &x2.Constraints[j]; c.Type == "f" && c.RefTable == old.Name {
					c.RefTable, changed = to, true
				}
			}
			if changed {
				others = append(others, &x2)
			}
		}
		env.ddlMu.Lock()
		err := env.ddl.CommitRename(old, &next, others...)
		env.ddlMu.Unlock()
		if err != nil {
			return errLine(err)
		}
		out := env.listCatalog(t) + env.showTable(t, to)
		for _, o := range others {
			out += env.showTable(t, o.Name)
		}
		return out
	case "show":
		return env.showTable(t, name)
	case "catalog":
		return env.listCatalog(t)
	}
	t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
	return ""
}

// createTable stores table name with the columns, key and index d names.
func (env *ddlEnv) createTable(t *testing.T, d *datadriven.TestData, name string) string {
	var spec string
	d.ScanArgs(t, "cols", &spec)
	tab := &catalog.Descriptor{Name: name, Kind: catalog.KindTable, Subject: name, JSStream: strings.ToUpper(name)}
	for _, c := range strings.Split(spec, ",") {
		n, typ, _ := strings.Cut(c, ":")
		tab.Columns = append(tab.Columns, catalog.Column{Name: n, Type: typ})
	}
	if d.HasArg("pk") {
		var pk string
		d.ScanArgs(t, "pk", &pk)
		tab.PrimaryKey = []string{pk}
	}
	if d.HasArg("index") {
		var col string
		d.ScanArgs(t, "index", &col)
		tab.Indexes = []catalog.Index{{Name: name + "_" + col + "_idx", Columns: []catalog.IndexColumn{{Name: col}}, Table: 1000, Seq: 1}}
	}
	if d.HasArg("ref") {
		var ref string
		d.ScanArgs(t, "ref", &ref)
		parent, col, _ := strings.Cut(ref, ".")
		first := tab.Columns[0].Name
		tab.Constraints = []catalog.Constraint{{Name: name + "_" + first + "_fkey", Type: "f", Columns: []string{first}, RefTable: parent, RefColumns: []string{col}}}
	}
	if err := env.ddl.Create(tab); err != nil {
		return errLine(err)
	}
	return fmt.Sprintf("%s: table id=%d\n", name, tab.ID)
}

// columnChange binds d's actions onto a copy of table name, as
// sql/alter_table.go would, through ColumnChange's descriptor edits
// (the conversions, key and checks by hand).
func (env *ddlEnv) columnChange(t *testing.T, d *datadriven.TestData, name string) *ColumnChange {
	c := NewColumnChange(env.lookup(t, name))
	next := c.New
	col := func(n string) int {
		i := slices.IndexFunc(next.Columns, func(c catalog.Column) bool { return c.Name == n })
		if i < 0 {
			t.Fatalf("%s: no column %s", d.Pos, n)
		}
		return i
	}
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		f := strings.Fields(line)
		switch f[0] {
		case "add":
			typ, mod := parseType(t, f[2])
			fill := types.Null
			if len(f) > 3 {
				fill = parseValue(t, f[3], typ)
			}
			if err := c.AddColumn(catalog.Column{Name: f[1], Type: types.TypeName(typ, mod)}, fill); err != nil {
				t.Fatal(err)
			}
		case "drop":
			c.DropColumn(col(f[1]))
		case "type":
			i := col(f[1])
			ot, _ := parseType(t, next.Columns[i].Type)
			nt, nm := parseType(t, f[2])
			cast, err := expr.CastWithModifier(&expr.ColRef{Idx: c.From[i], Name: f[1], T: ot}, nt, nm, false)
			if err != nil {
				t.Fatal(err)
			}
			c.ConvertColumn(i, types.TypeName(nt, nm), cast)
		case "shorten":
			i := col(f[1])
			n, err := strconv.Atoi(f[2])
			if err != nil {
				t.Fatal(err)
			}
			_, from := parseType(t, next.Columns[i].Type)
			to := types.Modifier{Length: n}
			c.ChangeLength(i, types.TypeName(types.Varchar, to), from, to)
		case "pk":
			col(f[1])
			next.PrimaryKey = []string{f[1]}
			c.Rewrite = true
		case "check":
			i := col(f[2])
			limit, err := strconv.Atoi(f[3])
			if err != nil {
				t.Fatal(err)
			}
			typ, _ := parseType(t, next.Columns[i].Type)
			c.Checks = append(c.Checks, &expr.Func{Name: "check", T: types.Bool, Args: []expr.Expr{&expr.ColRef{Idx: i, T: typ}},
				Fn: func(args []types.Datum) (types.Datum, error) {
					if args[0].IsNull() {
						return types.Null, nil
					}
					v, err := strconv.ParseFloat(types.FormatText(args[0], typ), 64)
					return types.NewBool(v <= float64(limit)), err
				}})
			c.CheckNames = append(c.CheckNames, f[1])
		case "rename":
			renameRefs := func(text, from, to string) (string, error) { return strings.ReplaceAll(text, from, to), nil }
			if err := c.RenameColumn(col(f[1]), f[2], renameRefs, nil, env.live.all()); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: unknown action %s", d.Pos, line)
		}
	}
	return &c
}

// showTable prints table name's columns, its rows in key order and the
// number of entries of each of its indexes.
func (env *ddlEnv) showTable(t *testing.T, name string) string {
	tab := env.lookup(t, name)
	var sb strings.Builder
	cols := make([]string, len(tab.Columns))
	for i, c := range tab.Columns {
		cols[i] = c.Name + " " + c.Type
		if c.Key != "" {
			cols[i] += " (member " + c.Key + ")"
		}
	}
	fmt.Fprintf(&sb, "columns: %s; primary key %v\n", strings.Join(cols, ", "), tab.PrimaryKey)
	schema, err := tab.Schema()
	if err != nil {
		t.Fatal(err)
	}
	err = storage.ScanPrefix(env.store.DB(), exec.ViewTablePrefix(tab.ID), func(_, v []byte) error {
		row, count, err := exec.DecodeViewValue(v, len(tab.Columns))
		if err != nil {
			return err
		}
		vals := make([]string, len(row))
		for i, x := range row {
			vals[i] = "NULL"
			if !x.IsNull() {
				vals[i] = types.FormatText(x, schema[i].Type)
			}
		}
		fmt.Fprintf(&sb, "  %s *%d\n", strings.Join(vals, ","), count)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range tab.Indexes {
		ix := &tab.Indexes[i]
		fmt.Fprintf(&sb, "index %s on %s: %d entries\n", ix.Name, ix.Columns[0].Name, env.countPrefix(t, exec.IndexPrefix(tab.ID, ix)))
	}
	for _, c := range tab.Constraints {
		fmt.Fprintf(&sb, "constraint %s %s %v -> %s %v\n", c.Name, c.Type, c.Columns, c.RefTable, c.RefColumns)
	}
	return sb.String()
}

// countPrefix is the number of keys the store holds under prefix.
func (env *ddlEnv) countPrefix(t *testing.T, prefix []byte) int {
	n := 0
	if err := storage.ScanPrefix(env.store.DB(), prefix, func(_, _ []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// stateKey is a row's key in tab's state table: its primary key, or the
// whole row without one (as the table write path keys them).
func stateKey(tab *catalog.Descriptor, row types.Row) []byte {
	key := exec.ViewTablePrefix(tab.ID)
	if len(tab.PrimaryKey) == 0 {
		return keyenc.AppendRowValue(key, row)
	}
	for _, k := range tab.PrimaryKey {
		i := slices.IndexFunc(tab.Columns, func(c catalog.Column) bool { return c.Name == k })
		key = keyenc.Append(key, row[i])
	}
	return key
}

func parseRow(t *testing.T, tab *catalog.Descriptor, line string) (types.Row, uint64) {
	count := uint64(1)
	if vals, n, ok := strings.Cut(line, " *"); ok {
		c, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		line, count = vals, c
	}
	var row types.Row
	for i, v := range strings.Split(line, ",") {
		typ, _ := parseType(t, tab.Columns[i].Type)
		row = append(row, parseValue(t, v, typ))
	}
	return row, count
}

func parseType(t *testing.T, name string) (types.Type, types.Modifier) {
	typ, mod, err := types.ParseWithModifier(name)
	if err != nil {
		t.Fatal(err)
	}
	return typ, mod
}

func parseValue(t *testing.T, v string, typ types.Type) types.Datum {
	if v == "NULL" {
		return types.Null
	}
	x, err := types.ParseText(v, typ)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestTypeChangeKeepsMessages: the type changes a table's changelog
// decodes as their casts are taken, the others not.
func TestTypeChangeKeepsMessages(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"int4", "int8", true}, {"int8", "int4", false}, {"int4", "numeric", true},
		{"numeric(5,2)", "numeric(7,2)", true}, {"numeric(5,2)", "numeric(5,1)", false},
		{"varchar(3)", "varchar(5)", true}, {"varchar(5)", "varchar(3)", false},
		{"int8", "text", true}, {"text", "int8", false}, {"int4", "float8", true},
		{"int8", "float8", false}, {"character(3)", "text", false}, {"bool", "text", true},
	} {
		ft, fm := parseType(t, tc.from)
		tt, tm := parseType(t, tc.to)
		if got := TypeChangeKeepsMessages(ft, fm, tt, tm); got != tc.want {
			t.Errorf("%s -> %s: got %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}
