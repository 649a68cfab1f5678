package sql

import (
	"fmt"
	"io"
	"strings"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/pgcopy"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// copyIn reads the rows of one COPY FROM.
type copyIn struct {
	f      *pgcopy.Format
	d      *catalog.Descriptor
	cols   []types.Column
	target []int
	slab   []types.Datum // the rest of emptyRow's slab
}

// read reads and converts every row of src. Each error names the line and,
// for a value, the column, as PostgreSQL's COPY context does.
func (c *copyIn) read(src io.Reader) ([]types.Row, error) {
	var rows []types.Row
	err := c.each(src, func(row types.Row) error {
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// each reads and converts the rows of src one at a time, in order, and
// hands each to fn; it stops at the first error, fn's included.
func (c *copyIn) each(src io.Reader, fn func(types.Row) error) error {
	if c.f.Kind == pgcopy.Binary {
		r := pgcopy.NewBinaryReader(src)
		for {
			fields, ok, err := r.Next(len(c.target))
			if err != nil {
				return c.at(err, r.Line(), "", nil)
			}
			if !ok {
				return drain(src)
			}
			row := c.emptyRow()
			for i, b := range fields {
				if b == nil {
					continue
				}
				col := c.cols[c.target[i]]
				v, err := pgwire.DecodeBinary(b, col.Type)
				if err == nil && !col.Mod.IsZero() {
					v, err = expr.ApplyModifier(v, col.Mod, false)
				}
				if err != nil {
					return c.at(err, r.Line(), col.Name, nil)
				}
				row[c.target[i]] = v
			}
			if err := fn(row); err != nil {
				return err
			}
		}
	}
	r := pgcopy.NewTextReader(c.f, src)
	header := c.f.Header
	for {
		fields, ok, err := r.Next()
		if err != nil {
			return c.at(err, r.Line(), "", nil)
		}
		if !ok {
			return drain(src)
		}
		if header {
			header = false
			if err := c.matchHeader(fields); err != nil {
				return c.at(err, r.Line(), "", nil)
			}
			continue
		}
		if len(fields) < len(c.target) {
			name := c.cols[c.target[len(fields)]].Name
			return c.at(sqlerr.New(sqlerr.BadCopyFileFormat, "missing data for column \"%s\"", name), r.Line(), "", nil)
		}
		if len(fields) > len(c.target) {
			return c.at(sqlerr.New(sqlerr.BadCopyFileFormat, "extra data after last expected column"), r.Line(), "", nil)
		}
		row := c.emptyRow()
		for i, fv := range fields {
			col := c.cols[c.target[i]]
			quoted := r.Quoted(i)
			null := fv.Null
			switch {
			case null && c.f.ForceNotNull[col.Name]:
				null = false
			case !null && quoted && c.f.ForceNull[col.Name] && fv.S == c.f.Null:
				null = true
			}
			if null {
				continue
			}
			v, err := expr.CastDatum(types.NewString(fv.S), col.Type)
			if err == nil && !col.Mod.IsZero() {
				v, err = expr.ApplyModifier(v, col.Mod, false)
			}
			if err != nil {
				return c.at(err, r.Line(), col.Name, &fv.S)
			}
			row[c.target[i]] = v
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}

// drain reads what follows the end marker (\. or the binary trailer), as
// PostgreSQL does, up to CopyDone.
func drain(src io.Reader) error {
	_, err := io.Copy(io.Discard, src)
	return err
}

// emptyRow returns a new row of NULLs. Rows are cut from a slab of
// copyRowSlab rows at a time: one allocation for many rows, each of which
// stays valid as long as the caller keeps it.
func (c *copyIn) emptyRow() types.Row {
	n := len(c.cols)
	if len(c.slab) < n {
		c.slab = make([]types.Datum, n*copyRowSlab)
	}
	row := c.slab[:n:n]
	c.slab = c.slab[n:]
	return row
}

// copyRowSlab is the number of rows emptyRow allocates at a time.
const copyRowSlab = 256

// matchHeader checks the header line of HEADER MATCH against the columns.
func (c *copyIn) matchHeader(fields []pgcopy.Field) error {
	if !c.f.HeaderMatch {
		return nil
	}
	if len(fields) != len(c.target) {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "wrong number of fields in header line: got %d, expected %d", len(fields), len(c.target))
	}
	for i, fv := range fields {
		want := c.cols[c.target[i]].Name
		if fv.Null || fv.S != want {
			got := fv.S
			if fv.Null {
				got = "NULL"
			}
			return sqlerr.New(sqlerr.BadCopyFileFormat, "column name mismatch in header line field %d: got \"%s\", expected \"%s\"", i+1, got, want)
		}
	}
	return nil
}

// at adds COPY's context to err: the relation, the line and, for a value,
// the column and the value.
func (c *copyIn) at(err error, line int, column string, value *string) error {
	e := sqlerr.From(err)
	if e.Code == sqlerr.InternalError || e.Code == "" || e.Code == sqlerr.QueryCanceled || strings.HasPrefix(e.Code, "08") {
		return err
	}
	where := fmt.Sprintf("COPY %s, line %d", c.d.Name, line)
	if column != "" {
		where += ", column " + column
		if value != nil {
			v := *value
			if len(v) > 60 {
				v = v[:60] + "..."
			}
			where += fmt.Sprintf(": \"%s\"", v)
		}
	}
	out := *e
	out.Message = e.Message + " (" + where + ")"
	return &out
}
