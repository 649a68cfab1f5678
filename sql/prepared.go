package sql

import (
	"context"
	"errors"

	"streamdb/binder"
	"streamdb/pgwire"
	"streamdb/types"
)

// prepared is a statement ready to run: its parameter and result types and
// the function that executes it.
type prepared struct {
	params *binder.Params
	cols   []types.Column
	run    func(ctx context.Context, params []types.Datum, w pgwire.RowWriter) (string, error)
	// origins are the columns' tables and attribute numbers
	// (column_origins.go), nil when none has one.
	origins []pgwire.ColumnOrigin
}

func (p *prepared) ParamTypes() []types.Type {
	if p.params == nil {
		return nil
	}
	out := make([]types.Type, len(p.params.Types()))
	for i, t := range p.params.Types() {
		if t == types.Unknown {
			t = types.Text
		}
		out[i] = t
	}
	return out
}

func (p *prepared) Columns() []types.Column { return p.cols }

func (p *prepared) Execute(ctx context.Context, params []types.Datum, w pgwire.RowWriter) (string, error) {
	return p.run(ctx, params, w)
}

// command is a prepared statement that returns no rows.
func command(run func(ctx context.Context) (string, error)) *prepared {
	return &prepared{run: func(ctx context.Context, _ []types.Datum, _ pgwire.RowWriter) (string, error) {
		return run(ctx)
	}}
}

// rowsResult is a prepared statement that returns a fixed set of rows
// computed at execution.
func rowsResult(cols []types.Column, rows func(ctx context.Context) ([]types.Row, error)) *prepared {
	return taggedRows("", cols, rows)
}

// showResult is rowsResult with the SHOW command tag.
func showResult(cols []types.Column, rows func(ctx context.Context) ([]types.Row, error)) *prepared {
	return taggedRows("SHOW", cols, rows)
}

func taggedRows(tag string, cols []types.Column, rows func(ctx context.Context) ([]types.Row, error)) *prepared {
	return &prepared{cols: cols, run: func(ctx context.Context, _ []types.Datum, w pgwire.RowWriter) (string, error) {
		rs, err := rows(ctx)
		if err != nil {
			return "", err
		}
		for _, r := range rs {
			if err := w.WriteRow(r); err != nil {
				return "", err
			}
		}
		if tag != "" {
			return tag, nil
		}
		return selectTag(len(rs)), nil
	}}
}

func selectTag(n int) string { return "SELECT " + itoa(n) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// asErr is errors.As for a typed pointer target.
func asErr[T error](err error, target *T) bool { return errors.As(err, target) }
