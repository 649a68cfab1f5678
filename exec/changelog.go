package exec

import (
	"bytes"
	"fmt"
	"math"

	json "github.com/goccy/go-json"

	"streamdb/types"
)

// A table's JetStream subject carries its changelog: each message is a JSON
// array of changes, [{"op":"-","row":{...}}, {"op":"+","row":{...}}], with
// rows in the form EncodeJSON writes. One message holds (up to a size
// limit) one statement's changes, deletions before insertions, so that a
// keyed reader applying them in order never deletes a row it just wrote
// under the same key, and so that views see a statement's changes in one
// epoch.

// Change is one row of a table's changelog.
type Change struct {
	Row  types.Row
	Sign int8
}

// messageDecoder turns one JetStream message into changes appended to c. On
// error it appends nothing.
type messageDecoder interface {
	decodeInto(data []byte, c *Chunk) error
}

// decodeInto makes RowDecoder a messageDecoder: a stream message is one
// inserted row, carved from the chunk's slab.
func (d *RowDecoder) decodeInto(data []byte, c *Chunk) error {
	row := c.newRow(len(d.cols))
	if err := d.decodeRow(data, row); err != nil {
		return err
	}
	c.keepRow(row, Insert)
	return nil
}

// ChangelogDecoder reads a table's changelog messages.
type ChangelogDecoder struct {
	rows *RowDecoder
}

// NewChangelogDecoder builds a decoder for a table with the given columns.
//
// It reads \u0000 in text as NUL: servers before text was checked wrote it
// into changelogs, and a changelog must stay readable. (EncodeJSON refuses
// NUL now, so no new message holds one.)
func NewChangelogDecoder(cols []types.Column) *ChangelogDecoder {
	d := NewRowDecoder(cols)
	d.allowNUL = true
	return &ChangelogDecoder{rows: d}
}

type changeJSON struct {
	Op  string          `json:"op"`
	Row json.RawMessage `json:"row"`
}

// Decode parses one changelog message.
func (d *ChangelogDecoder) Decode(data []byte) ([]Change, error) {
	var raw []changeJSON
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a table changelog message (a JSON array of changes): %w", err)
	}
	out := make([]Change, len(raw))
	for i, ch := range raw {
		switch ch.Op {
		case "+":
			out[i].Sign = Insert
		case "-":
			out[i].Sign = Delete
		default:
			return nil, fmt.Errorf("change %d: op %q is neither \"+\" nor \"-\"", i, ch.Op)
		}
		row, err := d.rows.Decode(ch.Row)
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", i, err)
		}
		out[i].Row = row
	}
	return out, nil
}

func (d *ChangelogDecoder) decodeInto(data []byte, c *Chunk) error {
	var raw []changeJSON
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&raw); err != nil {
		return fmt.Errorf("not a table changelog message (a JSON array of changes): %w", err)
	}
	n := c.Len()
	for i, ch := range raw {
		sign := Insert
		switch ch.Op {
		case "+":
		case "-":
			sign = Delete
		default:
			c.Rows, c.Signs = c.Rows[:n], c.Signs[:n]
			return fmt.Errorf("change %d: op %q is neither \"+\" nor \"-\"", i, ch.Op)
		}
		row := c.newRow(len(d.rows.cols))
		if err := d.rows.decodeRow(ch.Row, row); err != nil {
			c.Rows, c.Signs = c.Rows[:n], c.Signs[:n]
			return fmt.Errorf("change %d: %w", i, err)
		}
		c.keepRow(row, sign)
	}
	return nil
}

// ChangelogOrder flattens statements' changes into the order of a
// changelog message: statement by statement, each statement's deletions
// first (see the top of this file).
func ChangelogOrder(stmts [][]Change) []Change {
	var out []Change
	for _, changes := range stmts {
		for _, sign := range []int8{Delete, Insert} {
			for _, ch := range changes {
				if ch.Sign == sign {
					out = append(out, ch)
				}
			}
		}
	}
	return out
}

// ErrChangelogTooLarge is returned by EncodeChangelog when one commit's
// changes to a table do not fit in one message.
type ErrChangelogTooLarge struct {
	Size, Limit int
}

func (e *ErrChangelogTooLarge) Error() string {
	return fmt.Sprintf("changes of %d bytes exceed the changelog message limit of %d bytes", e.Size, e.Limit)
}

// EncodeChangelog renders the changes of one commit to a table as ONE
// changelog message: a message is the unit JetStream stores atomically, so
// a commit lands whole or not at all. changes are in ChangelogOrder, so
// that a statement that re-inserts a key an earlier one deleted (or the
// reverse) replays as it ran. A message over limit bytes is refused before
// anything is published.
func EncodeChangelog(cols []types.Column, changes []Change, limit int) ([]byte, error) {
	buf := []byte{'['}
	enc := newRowEncoder(cols)
	for i, ch := range changes {
		row, err := enc.encode(ch.Row, ch.Sign < 0)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		op := `{"op":"+","row":`
		if ch.Sign < 0 {
			op = `{"op":"-","row":`
		}
		buf = append(append(append(buf, op...), row...), '}')
	}
	buf = append(buf, ']')
	if len(buf) > limit {
		return nil, &ErrChangelogTooLarge{Size: len(buf), Limit: limit}
	}
	return buf, nil
}

// EncodeChangelogChunks renders the changes of one commit to a table as
// changelog messages of at most limit bytes each, in order: read one after
// another they replay the commit as one message would. A change that does
// not fit in a message of its own fails with ErrChangelogTooLarge.
func EncodeChangelogChunks(cols []types.Column, changes []Change, limit int) ([][]byte, error) {
	return encodeChangelogChunks(cols, changes, limit, false)
}

// EncodeChangelogChunksNamesChecked is EncodeChangelogChunks for columns
// an earlier commit encoded with them has already read back: what the
// first row's check covers for exact columns (their names) holds, so
// every row of the kinds exactJSONRow takes skips it, the first too.
func EncodeChangelogChunksNamesChecked(cols []types.Column, changes []Change, limit int) ([][]byte, error) {
	return encodeChangelogChunks(cols, changes, limit, true)
}

func encodeChangelogChunks(cols []types.Column, changes []Change, limit int, namesChecked bool) ([][]byte, error) {
	var out [][]byte
	buf := []byte{'['}
	var enc *rowEncoder // made for the first row that needs the check
	exact := exactJSONColumns(cols)
	var one, rowBuf []byte
	for i, ch := range changes {
		var row []byte
		var err error
		if (i > 0 || namesChecked) && exact && exactJSONRow(cols, ch.Row) {
			rowBuf, err = appendRowJSON(rowBuf[:0], cols, ch.Row, ch.Sign < 0)
			row = rowBuf
		} else {
			if enc == nil {
				enc = newRowEncoder(cols)
			}
			row, err = enc.encode(ch.Row, ch.Sign < 0)
		}
		if err != nil {
			return nil, err
		}
		op := `{"op":"+","row":`
		if ch.Sign < 0 {
			op = `{"op":"-","row":`
		}
		one = append(append(append(one[:0], op...), row...), '}')
		if len(one)+2 > limit {
			return nil, &ErrChangelogTooLarge{Size: len(one) + 2, Limit: limit}
		}
		if len(buf)+1+len(one)+1 > limit {
			out = append(out, append(buf, ']'))
			buf = []byte{'['}
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, one...)
	}
	return append(out, append(buf, ']')), nil
}

// exactJSONColumns reports whether every column is of a type whose JSON
// form (appendRowJSON) always reads back as written: booleans, integers
// and unbounded text. A commit of such rows checks the read-back
// (rowEncoder.encode) on its first row only, which covers what does not
// depend on the values (the column names); the other rows skip it, when
// each value is of its column's kind (exactJSONRow).
func exactJSONColumns(cols []types.Column) bool {
	for _, c := range cols {
		switch c.Type {
		case types.Bool, types.Int2, types.Int4, types.Int8, types.Text:
		default:
			return false
		}
		if c.Mod != (types.Modifier{}) {
			return false
		}
	}
	return true
}

// exactJSONRow reports whether each value of row is NULL or of the kind
// its column's type holds (see exactJSONColumns).
func exactJSONRow(cols []types.Column, row types.Row) bool {
	if len(row) != len(cols) {
		return false
	}
	for i, c := range cols {
		d := row[i]
		if d.IsNull() {
			continue
		}
		want := types.KindString
		switch c.Type {
		case types.Bool:
			want = types.KindBool
		case types.Int2:
			want = types.KindInt
			if d.I < math.MinInt16 || d.I > math.MaxInt16 {
				return false
			}
		case types.Int4:
			want = types.KindInt
			if d.I < math.MinInt32 || d.I > math.MaxInt32 {
				return false
			}
		case types.Int8:
			want = types.KindInt
		}
		if d.K != want {
			return false
		}
	}
	return true
}
