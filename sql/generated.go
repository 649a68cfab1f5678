package sql

import (
	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Generated columns (GENERATED ALWAYS AS (expr) STORED), kept in the
// catalog as the expression's SQL text and bound again wherever it is
// used. A stream computes them as its reader decodes each message
// (plan.Scan.Generated), once for every view that reads the stream; a
// table computes them as each row is written (INSERT, UPDATE, COPY) and
// stores the values. As in PostgreSQL, a generated column takes no value
// but DEFAULT, its expression must be immutable and may not read another
// generated column.

// checkGeneratedColumns checks the generated columns of a new stream or
// table d (columns cols) as CREATE declares them.
func checkGeneratedColumns(n *front.CreateSource, d *catalog.Descriptor, cols []types.Column) error {
	for i, c := range n.Columns {
		if c.Generated == nil {
			continue
		}
		switch {
		case c.Default != nil || c.Serial:
			return sqlerr.New(sqlerr.SyntaxError, "both default and generation expression specified for column \"%s\" of %s \"%s\"", c.Name, n.Kind, n.Name)
		case c.Identity != "":
			return sqlerr.New(sqlerr.SyntaxError, "both identity and generation expression specified for column \"%s\" of %s \"%s\"", c.Name, n.Kind, n.Name)
		}
		d.Columns[i].Generated = c.GeneratedText
	}
	_, err := binder.BindGenerated(d, cols)
	return err
}

// refuseGeneratedValue refuses a value other than DEFAULT for generated
// column col in an INSERT.
func refuseGeneratedValue(desc *catalog.Descriptor, col int) error {
	c := desc.Columns[col]
	if c.Generated == "" {
		return nil
	}
	return &sqlerr.Error{Code: sqlerr.GeneratedAlways,
		Message: "cannot insert a non-DEFAULT value into column \"" + c.Name + "\"",
		Detail:  "Column \"" + c.Name + "\" is a generated column."}
}

// refuseGeneratedUpdate refuses an UPDATE that sets generated column col
// to anything but DEFAULT.
func refuseGeneratedUpdate(desc *catalog.Descriptor, col int) error {
	c := desc.Columns[col]
	if c.Generated == "" {
		return nil
	}
	return &sqlerr.Error{Code: sqlerr.GeneratedAlways,
		Message: "column \"" + c.Name + "\" can only be updated to DEFAULT",
		Detail:  "Column \"" + c.Name + "\" is a generated column."}
}

// computeGenerated sets the generated columns gen of the rows a statement
// inserts into a table.
func computeGenerated(gen []plan.GeneratedColumn, changes []exec.Change) error {
	for _, ch := range changes {
		if ch.Sign < 0 {
			continue
		}
		for _, g := range gen {
			v, err := g.Expr.Eval(ch.Row)
			if err != nil {
				return err
			}
			ch.Row[g.Col] = v
		}
	}
	return nil
}
