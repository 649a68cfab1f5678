package meta

import (
	"streamdb/expr"
	"streamdb/types"
)

// ALTER COLUMN ... TYPE keeps the column's member key: the table's
// changelog (read from the start by every view created later, and
// replayed after the state's position) keeps the values written under
// the old type, and they are decoded under the new one. So only a change
// under which every old value's JSON reads as its cast is applied
// (TypeChangeKeepsMessages); sql refuses the others.

// ConvertColumn gives New's column i the type typeName, its stored values
// converted by cast (over the old row) as the table's rows are
// rewritten.
func (a *ColumnChange) ConvertColumn(i int, typeName string, cast expr.Expr) {
	a.New.Columns[i].Type = typeName
	if a.Convert == nil {
		a.Convert = map[int]expr.Expr{}
	}
	a.Convert[a.From[i]] = cast
	a.Rewrite = true
}

// ChangeLength gives New's character varying column i the string type
// typeName (modifier to; from was its modifier): values fit a longer
// type unchanged, and a lower or new length limit is checked on every
// row as the state is rewritten (22001 for a longer value), which needs
// the table's state to hold its whole changelog (CommitColumnChange): a
// message past it could hold a longer value that the restarted dataflow
// could not decode. The table's dataflow decodes its changelog with the
// column's type (its length limit included): it restarts with the new
// one.
func (a *ColumnChange) ChangeLength(i int, typeName string, from, to types.Modifier) {
	a.New.Columns[i].Type = typeName
	if to.Length > 0 && (from.Length == 0 || to.Length < from.Length) {
		if a.Shorten == nil {
			a.Shorten = map[int]types.Modifier{}
		}
		a.Shorten[i] = to
	}
	a.Rewrite = true
}

// TypeChangeKeepsMessages reports whether every value of type from, as a
// table's changelog holds it (JSON, exec.EncodeJSON), decodes under type
// to as its assignment cast from from to to: the values never fail and
// never change.
func TypeChangeKeepsMessages(from types.Type, fm types.Modifier, to types.Type, tm types.Modifier) bool {
	if fm.Fixed || tm.Fixed {
		return false
	}
	widerInt := func(a, b types.Type) bool {
		rank := map[types.Type]int{types.Int2: 1, types.Int4: 2, types.Int8: 3}
		return rank[a] > 0 && rank[b] >= rank[a]
	}
	switch {
	case to.IsString() && tm.IsZero():
		return from.IsString() || from.IsInteger() || from == types.Numeric || from == types.Bool || from == types.UUID
	case to == types.Varchar && from.IsString():
		return !fm.IsZero() && tm.Length >= fm.Length
	case to.IsInteger():
		return widerInt(from, to)
	case to == types.Numeric:
		if tm.IsZero() {
			return from.IsInteger() || from == types.Numeric
		}
		return from == types.Numeric && !fm.IsZero() && tm.Scale >= fm.Scale && tm.Precision-tm.Scale >= fm.Precision-fm.Scale
	case to == types.Float8:
		return from == types.Int2 || from == types.Int4
	}
	return false
}
