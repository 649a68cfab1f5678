package exec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// RowDecoder turns one JSON message into a row of a stream's schema. Fields
// map to columns by name; missing fields are NULL; unknown fields are
// skipped whatever their value (nested objects and arrays included); a
// repeated field takes its last value. The message must be exactly one JSON
// object (whitespace around it allowed): anything else, malformed JSON, or a
// field whose value does not fit its column's type is an error (the source
// skips and counts the message).
//
// Conversions: strings are read as the column type's text input (so
// NUMERIC, timestamps, dates, intervals and booleans accept their
// PostgreSQL spellings); numbers go to numeric columns through their text,
// so NUMERIC is exact, to timestamp columns as integer epoch milliseconds,
// and to text columns as their literal text; true/false fit boolean and
// text columns; null is NULL; objects and arrays fit no column but json
// and jsonb, which take any value as it is (null too: the JSON null; a
// missing member is NULL).
//
// The decoder walks the message once and allocates nothing but the row
// (which decodeInto carves from its chunk) and the strings and decimals the
// row holds. It keeps scratch buffers: one decoder serves one goroutine.
type RowDecoder struct {
	cols  []types.Column
	index map[string]int
	// scratch holds unescaped strings while they are converted.
	scratch []byte
	// fieldErr[i] is the conversion error of column i's latest value; a
	// later value of the same field replaces it (last one wins).
	fieldErr []error
	// skip[i]: column i is read by no operator and is plain text, so its
	// value is validated (anything but an object or array fits) and left
	// NULL instead of copied into a string. Other unread columns are
	// decoded as usual: their conversion errors must still reject the
	// message, so that every view of a stream sees the same messages.
	skip []bool
	// guess[i] is the member name found at position i of the previous
	// object and its column (-1: not a column): producers write fields in
	// the same order, so comparing with the guess saves a map lookup.
	guess []fieldGuess
	// allowNUL accepts \u0000 in strings (see NewChangelogDecoder); a
	// stream's decoder refuses it, as PostgreSQL refuses NUL in text.
	allowNUL bool
	// named: a member of the object being decoded names a column;
	// noColumn counts the decoded objects none of whose members did (rows
	// of NULLs, most often columns declared under other names).
	named    bool
	noColumn uint64
	// stats are the member statistics (decode_stats.go).
	stats keyStats
	// missing[i], when not nil, is column i's value in an object without
	// its member (SetMissing); seen[i] records whether the object being
	// decoded has it.
	missing []*types.Datum
	seen    []bool
	// gen are the stream's generated columns, computed from each decoded
	// row (SetGenerated); no message member is read into them.
	gen []plan.GeneratedColumn
	// meta are the stream's INCLUDE columns (decode_meta.go), which no
	// member fills.
	meta []metaCol
	// whole is 1 + the column that takes the whole message as jsonb
	// (whole_message = true), 0 for none.
	whole int
	// csv, when set, reads messages as CSV records (decode_csv.go).
	csv *csvFormat
	// fmtDesc, when not nil, is the stream whose messages are Protobuf
	// or Avro (decode_format.go); fmtDec decodes them.
	fmtDesc *catalog.Descriptor
	fmtDec  formatDecoder
	// canon writes jsonb members' canonical text.
	canon types.JSONBCanon
	// raw, when not nil, computes generated columns from the text of
	// jsonb members no operator reads (decode_rawpath.go); direct[i]
	// says that some operator reads column i (nil: all do).
	raw    *rawPaths
	direct []bool
}

// SetMissing gives the values of columns in objects that lack their
// members: missing[i] for column i, NULL where it is nil.
func (d *RowDecoder) SetMissing(missing []*types.Datum) {
	for _, m := range missing {
		if m != nil {
			d.missing = missing
			d.seen = make([]bool, len(d.cols))
			return
		}
	}
}

// SetGenerated makes the decoder compute the generated columns gen from
// each row it decodes, after its other columns; a message whose
// expression fails is an error (skipped and counted like a field that
// does not fit its column). Members named like a generated column are
// not read.
func (d *RowDecoder) SetGenerated(gen []plan.GeneratedColumn) {
	d.gen = gen
	for _, g := range gen {
		delete(d.index, d.cols[g.Col].Name)
	}
	d.guess = nil
}

// NoColumn returns how many of the messages decoded so far were objects
// none of whose members names a column: they decode to rows of NULLs.
func (d *RowDecoder) NoColumn() uint64 { return d.noColumn }

type fieldGuess struct {
	name string
	col  int
	key  int // for no column: the index of name in stats.keys, or -1
}

// lookup returns the column of the member named raw at position field;
// for no column it sets stats.key.
func (d *RowDecoder) lookup(field int, raw []byte) (int, bool) {
	if field < len(d.guess) && d.guess[field].name == string(raw) {
		col := d.guess[field].col
		d.stats.key = d.guess[field].key
		return col, col >= 0
	}
	col, known := d.index[string(raw)]
	key := -1
	if !known {
		col = -1
		key = d.stats.keyIndex(raw)
		d.stats.key = key
	}
	if field < 64 { // bound the guesses for objects with many members
		for len(d.guess) <= field {
			d.guess = append(d.guess, fieldGuess{col: -1})
		}
		var name string
		switch {
		case known:
			name = d.cols[col].Name
		case key >= 0:
			name = d.stats.keys[key].Key
		default:
			name = string(raw) // a copy only for an untracked member that is no column
		}
		d.guess[field] = fieldGuess{name: name, col: col, key: key}
	}
	return col, known
}

// SkipUnread tells the decoder which columns the dataflow's operators
// read (need[i]; columns past need are read); see skip and rawPaths. The
// inputs of generated columns are decoded whether or not an operator
// reads them: a message a generated column's expression fails on is
// skipped by every view of the stream alike.
func (d *RowDecoder) SkipUnread(need []bool) {
	direct := make([]bool, len(d.cols))
	for i := range direct {
		direct[i] = i >= len(need) || need[i]
	}
	d.direct = direct
	d.raw = newRawPaths(d.cols, d.gen, direct)
	read := slices.Clone(direct)
	for _, g := range d.gen {
		plan.MarkRefs(read, g.Expr)
	}
	d.skip = make([]bool, len(d.cols))
	for i, c := range d.cols {
		d.skip[i] = !read[i] && (c.Type == types.Unknown || c.Type.IsString()) && c.Mod.IsZero()
	}
}

// widenDirect makes d decode whole the columns s's operators read too
// (see SkipUnread): a jsonb member that operators of either decoder read
// is no longer read through rawPaths alone.
func (d *RowDecoder) widenDirect(s *RowDecoder) {
	if d.raw == nil {
		return
	}
	for i := range d.direct {
		d.direct[i] = d.direct[i] || s.direct == nil || i >= len(s.direct) || s.direct[i]
	}
	d.raw = newRawPaths(d.cols, d.gen, d.direct)
}

// NewRowDecoder builds a decoder for the given schema.
func NewRowDecoder(cols []types.Column) *RowDecoder {
	d := &RowDecoder{cols: cols, index: make(map[string]int, len(cols)), fieldErr: make([]error, len(cols))}
	for i, c := range cols {
		d.index[c.Name] = i
	}
	return d
}

// Decode parses data into a new row.
func (d *RowDecoder) Decode(data []byte) (types.Row, error) {
	row := make(types.Row, len(d.cols))
	if err := d.decodeRow(data, row); err != nil {
		return nil, err
	}
	return row, nil
}

// decodeRow parses data into row, which must have one NULL datum per column.
// On error row holds garbage.
func (d *RowDecoder) decodeRow(data []byte, row types.Row) error {
	if d.raw != nil {
		d.raw.begin()
	}
	if d.whole > 0 {
		return d.decodeWhole(data, row)
	}
	if d.csv != nil {
		return d.decodeCSV(data, row)
	}
	if d.fmtDesc != nil {
		return d.decodeFormat(data, row)
	}
	p := skipWS(data, 0)
	if p >= len(data) || data[p] != '{' {
		return fmt.Errorf("not a JSON object: %w", jsonSyntax(data, p, "looking for beginning of object"))
	}
	d.named = false
	d.stats.begin()
	if d.seen != nil {
		clear(d.seen)
	}
	end, err := d.decodeFields(data, p+1, row)
	if err == nil {
		if end = skipWS(data, end); end < len(data) {
			err = jsonSyntax(data, end, "after top-level value")
		}
	}
	if err != nil {
		clear(d.fieldErr)
		if sqlerr.Code(err) != "" {
			return err // invalid text: not JSON either, but the error says more
		}
		return fmt.Errorf("not a JSON object: %w", err)
	}
	for i, ferr := range d.fieldErr {
		if ferr != nil {
			clear(d.fieldErr)
			return fmt.Errorf("field %q: %w", d.cols[i].Name, ferr)
		}
	}
	if !d.named {
		d.noColumn++
	}
	d.stats.done()
	d.fillMissing(row)
	return d.generate(row)
}

// decodeFields reads the members of the object whose '{' precedes data[p]
// and returns the offset after its '}'.
func (d *RowDecoder) decodeFields(data []byte, p int, row types.Row) (int, error) {
	p = skipWS(data, p)
	if p < len(data) && data[p] == '}' {
		return p + 1, nil
	}
	field := 0 // position of the member in the object
	for {
		raw, next, complex, err := memberKey(data, p)
		if err != nil {
			return 0, err
		}
		if complex {
			// memberKey checked the key's text: this cannot fail.
			d.scratch, _ = unquoteInto(d.scratch[:0], raw, false)
			raw = d.scratch
		}
		col, known := d.lookup(field, raw)
		field++
		if known {
			d.named = true
			if d.seen != nil {
				d.seen[col] = true
			}
			d.stats.noteColumn(col)
			p, err = d.decodeValue(data, next, col, row)
		} else {
			d.stats.noteKey()
			if p, err = skipValue(data, next, 0); err != nil && sqlerr.Code(err) != "" {
				err = fmt.Errorf("field %q: %w", raw, err) // invalid text in it
			}
		}
		if err != nil {
			return 0, err
		}
		var done bool
		if p, done, err = nextMember(data, p, '}', "after object key:value pair"); err != nil || done {
			return p, err
		}
	}
}

// decodeValue reads the value at data[p] into row[col]. A syntax error is
// returned; a conversion error is recorded in fieldErr.
func (d *RowDecoder) decodeValue(data []byte, p, col int, row types.Row) (int, error) {
	if p >= len(data) {
		return 0, errJSONEnd
	}
	c := d.cols[col]
	if d.skip != nil && d.skip[col] && data[p] != '{' && data[p] != '[' {
		if data[p] == '"' {
			// Not copied, but it must be text all the same.
			raw, next, complex, err := scanString(data, p)
			if err != nil {
				return 0, err
			}
			var terr error
			if complex {
				d.scratch, terr = unquoteInto(d.scratch[:0], raw, d.allowNUL)
			}
			row[col], d.fieldErr[col] = types.Null, terr
			return next, nil
		}
		next, err := skipValue(data, p, 0)
		if err != nil {
			return 0, err
		}
		row[col], d.fieldErr[col] = types.Null, nil
		return next, nil
	}
	var v types.Datum
	var cerr error
	next := 0
	if c.Type == types.JSON || c.Type == types.JSONB {
		if d.raw != nil && d.raw.roots[col] != nil {
			if next, ok := d.raw.scan(data, p, col); ok {
				// row[col] is left for rawPaths.generate to make NULL.
				if d.fieldErr[col] != nil {
					d.fieldErr[col] = nil // an earlier member's
				}
				return next, nil
			}
		}
		return d.decodeJSONValue(data, p, col, row)
	}
	switch b := data[p]; {
	case b == '"':
		raw, n, complex, err := scanString(data, p)
		if err != nil {
			return 0, err
		}
		next = n
		if complex {
			d.scratch, cerr = unquoteInto(d.scratch[:0], raw, d.allowNUL)
			raw = d.scratch
		}
		if cerr == nil {
			v, cerr = textToDatum(raw, c.Type)
		}
	case b == '-' || (b >= '0' && b <= '9'):
		n, integer, err := scanNumber(data, p)
		if err != nil {
			return 0, err
		}
		next = n
		v, cerr = numberToDatum(data[p:n], integer, c.Type)
	case b == 't' || b == 'f':
		lit := "true"
		if b == 'f' {
			lit = "false"
		}
		n, err := scanLiteral(data, p, lit)
		if err != nil {
			return 0, err
		}
		next = n
		switch {
		case c.Type == types.Bool:
			v = types.NewBool(b == 't')
		case c.Type.IsString():
			v = types.NewString(lit)
		default:
			cerr = fmt.Errorf("JSON bool does not fit type %s", c.Type)
		}
	case b == 'n':
		n, err := scanLiteral(data, p, "null")
		if err != nil {
			return 0, err
		}
		next = n
	default:
		n, err := skipValue(data, p, 0)
		if err != nil {
			return 0, err
		}
		next = n
		kind := "object"
		if b == '[' {
			kind = "array"
		}
		if b == '[' && c.Type.IsArray() {
			v, cerr = jsonArrayToDatum(data[p:n], c.Type)
		} else {
			cerr = fmt.Errorf("JSON %s does not fit type %s", kind, c.Type)
		}
	}
	if cerr == nil && !c.Mod.IsZero() {
		v, cerr = expr.ApplyModifier(v, c.Mod, false)
	}
	if cerr != nil {
		v = types.Null
	}
	row[col], d.fieldErr[col] = v, cerr
	return next, nil
}

// decodeJSONValue reads the value at data[p] into the json or jsonb
// column col as it is: an object or array with all it nests, a string,
// number, boolean or null as that JSON scalar. (A missing member is NULL.)
func (d *RowDecoder) decodeJSONValue(data []byte, p, col int, row types.Row) (int, error) {
	next, err := skipValue(data, p, 0)
	if err != nil {
		return 0, err
	}
	var v types.Datum
	var cerr error
	raw := data[p:next]
	switch cerr = checkUTF8(raw); {
	case cerr != nil:
	case d.cols[col].Type == types.JSONB:
		if text, ok := d.canon.CanonicalBytes(raw); ok {
			v = types.Datum{K: types.KindJSONB, S: text}
		} else {
			v, cerr = types.ParseJSONBSlow(string(raw))
		}
	default:
		v, cerr = types.ParseJSON(string(raw))
	}
	if cerr != nil {
		v = types.Null
	}
	row[col], d.fieldErr[col] = v, cerr
	return next, nil
}

// checkUTF8 returns the error of the first byte sequence of raw that is
// not UTF-8, nil if it all is. (jsonb and json input take any bytes
// inside strings: text is checked before it reaches them.)
func checkUTF8(raw []byte) error {
	if utf8.Valid(raw) {
		return nil
	}
	i := 0
	for i < len(raw) {
		r, n := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	return errInvalidUTF8(raw[i:])
}

// timestampOfEpochMillis returns milliseconds since 1970 as a timestamp
// datum's microseconds; ok is false outside the timestamp range.
func timestampOfEpochMillis(ms int64) (int64, bool) {
	const epoch = types.UnixEpochMicros / 1000
	if ms < types.MinTimestampMicros/1000-epoch || ms >= types.EndTimestampMicros/1000-epoch {
		return 0, false
	}
	return (ms + epoch) * 1000, true
}

// textToDatum converts a JSON string's content to a datum of type t.
func textToDatum(s []byte, t types.Type) (types.Datum, error) {
	if t == types.Unknown || t.IsString() {
		return types.NewString(string(s)), nil
	}
	return types.ParseText(string(s), t)
}

// numberToDatum converts a JSON number's text (validated by scanNumber) to a
// datum of type t.
func numberToDatum(num []byte, integer bool, t types.Type) (types.Datum, error) {
	switch {
	case t.IsTime():
		ms, ok := parseInt(num, integer)
		if !ok {
			return types.Null, fmt.Errorf("%s is not epoch milliseconds", num)
		}
		us, ok := timestampOfEpochMillis(ms)
		if !ok {
			return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: %s epoch milliseconds", num)
		}
		return types.NewTimestamp2000(us), nil
	case t.IsString():
		return types.NewString(string(num)), nil
	case t.IsInteger():
		if i, ok := parseInt(num, integer); ok {
			return types.CheckIntRange(i, t)
		}
	case t == types.Float8 || t == types.Float4:
		if f, err := strconv.ParseFloat(string(num), 64); err == nil {
			if t == types.Float4 {
				f = float64(float32(f))
			}
			return types.NewFloat(f), nil
		}
	case !t.IsNumeric():
		return types.Null, fmt.Errorf("JSON number does not fit type %s", t)
	}
	// NUMERIC, and the error cases of the others, as text input.
	return types.ParseText(string(num), t)
}

// parseInt parses a JSON integer's text as an int64 without allocating.
func parseInt(num []byte, integer bool) (int64, bool) {
	if !integer || len(num) == 0 {
		return 0, false
	}
	neg := num[0] == '-'
	digits := num
	if neg {
		digits = num[1:]
	}
	if len(digits) > 18 {
		// Might overflow: let strconv decide.
		i, err := strconv.ParseInt(string(num), 10, 64)
		return i, err == nil
	}
	var u int64
	for _, c := range digits {
		u = u*10 + int64(c-'0')
	}
	if neg {
		u = -u
	}
	return u, true
}

// EncodeJSON renders a row as the JSON object that Decode reads back
// exactly: numbers as JSON numbers (NUMERIC exact), NaN and the
// infinities of REAL, DOUBLE PRECISION and NUMERIC as strings ("NaN",
// "Infinity", "-Infinity"), everything else as its PostgreSQL text. Text
// that is not valid UTF-8 or holds NUL is refused (22021), as PostgreSQL
// refuses it. As a last line of defence it decodes what it wrote and
// refuses (with the decoder's SQLSTATE, or 22000) a row that would not
// read back as written: a message the server's own readers reject would
// be acknowledged and then lost.
func EncodeJSON(cols []types.Column, row types.Row) ([]byte, error) {
	return newRowEncoder(cols).encode(row, false)
}

// rowEncoder encodes rows of one schema and checks each against a decoder
// of the same schema (see EncodeJSON).
type rowEncoder struct {
	cols []types.Column
	dec  *RowDecoder
	row  types.Row
}

func newRowEncoder(cols []types.Column) *rowEncoder {
	return &rowEncoder{cols: cols, dec: NewRowDecoder(cols), row: make(types.Row, len(cols))}
}

// encode renders row. stored says the row is already stored (a table
// row being deleted): its text may then hold NUL, which servers before
// text was checked accepted, so that such rows can still be deleted.
func (e *rowEncoder) encode(row types.Row, stored bool) ([]byte, error) {
	buf, err := appendRowJSON(make([]byte, 0, 128), e.cols, row, stored)
	if err != nil {
		return nil, err
	}
	clear(e.row)
	e.dec.allowNUL = stored
	if err := e.dec.decodeRow(buf, e.row); err != nil {
		if sqlerr.Code(err) != "" {
			return nil, err
		}
		return nil, sqlerr.New(sqlerr.DataException, "row cannot be stored: it would not read back: %v", err)
	}
	again, err := appendRowJSON(make([]byte, 0, len(buf)), e.cols, e.row, stored)
	if err != nil || string(again) != string(buf) {
		for i, c := range e.cols {
			if types.FormatText(row[i], c.Type) != types.FormatText(e.row[i], c.Type) || row[i].IsNull() != e.row[i].IsNull() {
				return nil, sqlerr.New(sqlerr.DataException, "value %q of column %q cannot be stored exactly (it would read back as %q)",
					types.FormatText(row[i], c.Type), c.Name, types.FormatText(e.row[i], c.Type))
			}
		}
		return nil, sqlerr.New(sqlerr.DataException, "row cannot be stored exactly: it would not read back as written")
	}
	return buf, nil
}

// appendRowJSON appends the JSON object of row (see EncodeJSON); allowNUL
// lets NUL in text through (see rowEncoder.encode).
func appendRowJSON(buf []byte, cols []types.Column, row types.Row, allowNUL bool) ([]byte, error) {
	buf = append(buf, '{')
	first := true
	for i, c := range cols {
		if (c.Type == types.JSON || c.Type == types.JSONB) && row[i].IsNull() {
			// A missing member is NULL; the member null is the JSON
			// value null (see decodeJSONValue).
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		var err error
		if buf, err = appendJSONString(buf, c.Name, false); err != nil {
			return nil, sqlerr.New(sqlerr.CharacterNotInRepertoire, "column name %q: %v", c.Name, err)
		}
		buf = append(buf, ':')
		d := row[i]
		switch {
		case d.IsNull():
			buf = append(buf, "null"...)
		case d.K == types.KindBool:
			buf = strconv.AppendBool(buf, d.Bool())
		case d.K == types.KindJSON || d.K == types.KindJSONB:
			buf = append(buf, d.S...) // the value itself, nested
		case d.K == types.KindInt:
			buf = append(buf, types.FormatText(d, c.Type)...)
		case d.K == types.KindDecimal:
			if d.D.Form != apd.Finite {
				buf = strconv.AppendQuote(buf, types.FormatText(d, c.Type)) // NaN, Infinity, -Infinity
			} else {
				buf = append(buf, types.FormatText(d, c.Type)...)
			}
		case d.K == types.KindFloat:
			s := types.FormatText(d, c.Type)
			if math.IsNaN(d.F) || math.IsInf(d.F, 0) || !isJSONNumber(s) {
				buf = strconv.AppendQuote(buf, s)
			} else {
				buf = append(buf, s...)
			}
		default:
			if buf, err = appendJSONString(buf, types.FormatText(d, c.Type), allowNUL); err != nil {
				return nil, sqlerr.New(sqlerr.CharacterNotInRepertoire, "column %q: %v", c.Name, err)
			}
		}
	}
	return append(buf, '}'), nil
}

// isJSONNumber reports whether s is a JSON number as a whole.
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	n, _, err := scanNumber([]byte(s), 0)
	return err == nil && n == len(s)
}

// appendJSONString appends s as a JSON string (RFC 8259 escapes; control
// characters as \u00XX). Invalid UTF-8 has no JSON form, and NUL is no
// PostgreSQL text (unless allowNUL): either is an error, never silently
// replaced.
func appendJSONString(buf []byte, s string, allowNUL bool) ([]byte, error) {
	const hexDigits = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c == 0 && !allowNUL:
				return nil, errNULText()
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return nil, errInvalidUTF8([]byte(s[i:min(i+4, len(s))]))
		}
		buf = append(buf, s[i:i+n]...)
		i += n
	}
	return append(buf, '"'), nil
}

// fillMissing gives the columns no member of the message named their
// missing values (a column added after the message was written).
func (d *RowDecoder) fillMissing(row types.Row) {
	for i, seen := range d.seen {
		if !seen && i < len(d.missing) && d.missing[i] != nil {
			row[i] = *d.missing[i]
		}
	}
}

// generate computes the stream's generated columns from the row's
// other columns.
func (d *RowDecoder) generate(row types.Row) error {
	if d.raw != nil {
		return d.raw.generate(d, row)
	}
	for _, g := range d.gen {
		v, err := g.Expr.Eval(row)
		if err != nil {
			return d.generatedError(g, err)
		}
		row[g.Col] = v
	}
	return nil
}

func (d *RowDecoder) generatedError(g plan.GeneratedColumn, err error) error {
	return fmt.Errorf("generated column %q: %w", d.cols[g.Col].Name, err)
}
