package exec

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A stream of format = 'csv' (catalog.FormatCSV) takes one CSV record per
// message, as PostgreSQL's COPY ... (FORMAT csv) reads a line: fields
// separated by the delimiter, a field in quotes may hold the delimiter,
// newlines and the quote (doubled), and an unquoted field equal to the
// null string (by default the empty one) is NULL, while a quoted one
// never is. Without a header the fields are the stream's columns in
// order (its INCLUDE and generated columns are not in the message); with
// header = true each message is a header line naming columns, then the
// record: fields under other names are ignored and columns it does not
// name are NULL (or their ADD COLUMN default), as JSON members are. A
// trailing line break is allowed. A message with another number of fields,
// a second record, or a value that does not fit its column is malformed:
// skipped and counted like a JSON one.

// csvFormat is a stream's CSV options.
type csvFormat struct {
	header    bool
	delimiter byte
	quote     byte
	null      string
	// pos are the columns positional fields fill, made at first use
	// (metadata and generated columns are set up before).
	pos []int
	// fields is scratch for a record's fields; quoted marks the quoted.
	fields [][]byte
	quoted []bool
	buf    []byte
}

// CSVOptions reads the CSV options of stream options opts; it reports
// what is wrong in words a CREATE STREAM can act on.
func CSVOptions(opts map[string]string) (header bool, delimiter, quote byte, null string, err error) {
	delimiter, quote = ',', '"'
	if v, ok := opts[catalog.OptCSVHeader]; ok {
		if header, err = strconv.ParseBool(v); err != nil {
			return false, 0, 0, "", fmt.Errorf("header must be true or false, not %q", v)
		}
	}
	one := func(name string, def byte) (byte, error) {
		v, ok := opts[name]
		if !ok {
			return def, nil
		}
		if len(v) != 1 || v[0] == '\n' || v[0] == '\r' || v[0] >= utf8.RuneSelf {
			return 0, fmt.Errorf("%s must be a single one-byte character other than a line break, not %q", name, v)
		}
		return v[0], nil
	}
	if delimiter, err = one(catalog.OptCSVDelimiter, ','); err != nil {
		return
	}
	if quote, err = one(catalog.OptCSVQuote, '"'); err != nil {
		return
	}
	if delimiter == quote {
		return false, 0, 0, "", fmt.Errorf("delimiter and quote must differ")
	}
	null = opts[catalog.OptCSVNull]
	return header, delimiter, quote, null, nil
}

// withCSV makes d read stream desc's messages as CSV when its format is.
func (d *RowDecoder) withCSV(desc *catalog.Descriptor) {
	if desc.Format != catalog.FormatCSV {
		return
	}
	header, delim, quote, null, err := CSVOptions(desc.Options)
	if err != nil {
		header, delim, quote, null = false, ',', '"', "" // refused at CREATE
	}
	d.csv = &csvFormat{header: header, delimiter: delim, quote: quote, null: null}
}

// csvKey describes the CSV options, for readerKey.
func (f *csvFormat) key() string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf("|csv %t %q %q %q", f.header, f.delimiter, f.quote, f.null)
}

// record splits the record at data[p:] into f.fields and returns the
// offset after it and its line break.
func (f *csvFormat) record(data []byte, p int) (int, error) {
	f.fields, f.quoted = f.fields[:0], f.quoted[:0]
	f.buf = f.buf[:0]
	type span struct{ start, end int }
	var spans []span
	for {
		start := len(f.buf)
		quoted := false
		if p < len(data) && data[p] == f.quote {
			quoted = true
			p++
			for {
				if p >= len(data) {
					return 0, fmt.Errorf("unterminated CSV quoted field")
				}
				c := data[p]
				p++
				if c == f.quote {
					if p < len(data) && data[p] == f.quote {
						f.buf = append(f.buf, c)
						p++
						continue
					}
					break
				}
				f.buf = append(f.buf, c)
			}
			if p < len(data) && data[p] != f.delimiter && data[p] != '\n' && data[p] != '\r' {
				return 0, fmt.Errorf("unexpected character %q after a quoted CSV field", data[p])
			}
		} else {
			for p < len(data) && data[p] != f.delimiter && data[p] != '\n' && data[p] != '\r' {
				if data[p] == f.quote {
					return 0, fmt.Errorf("quote character %q inside an unquoted CSV field", f.quote)
				}
				f.buf = append(f.buf, data[p])
				p++
			}
		}
		spans = append(spans, span{start, len(f.buf)})
		f.quoted = append(f.quoted, quoted)
		if p < len(data) && data[p] == f.delimiter {
			p++
			continue
		}
		break
	}
	for _, s := range spans {
		f.fields = append(f.fields, f.buf[s.start:s.end])
	}
	if p < len(data) && data[p] == '\r' {
		p++
	}
	if p < len(data) && data[p] == '\n' {
		p++
	}
	return p, nil
}

// decodeCSV reads one CSV message into row (see the top of this file).
func (d *RowDecoder) decodeCSV(data []byte, row types.Row) error {
	f := d.csv
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return sqlerr.New(sqlerr.CharacterNotInRepertoire, "a CSV message must be UTF-8 text without NUL")
	}
	if f.pos == nil {
		f.pos = []int{}
		for i, c := range d.cols {
			if j, ok := d.index[c.Name]; ok && j == i {
				f.pos = append(f.pos, i)
			}
		}
	}
	cols := f.pos
	p := 0
	if f.header {
		end, err := f.record(data, 0)
		if err != nil {
			return fmt.Errorf("CSV header: %w", err)
		}
		if end == len(data) {
			return fmt.Errorf("a CSV message with header = true needs a header line, then the record")
		}
		cols = make([]int, len(f.fields))
		for i, name := range f.fields {
			cols[i] = -1
			if j, ok := d.index[string(name)]; ok {
				cols[i] = j
			}
		}
		p = end
	}
	end, err := f.record(data, p)
	if err != nil {
		return err
	}
	if end < len(data) {
		return fmt.Errorf("a message holds one CSV record; this one has more after offset %d", end)
	}
	if len(f.fields) != len(cols) {
		return fmt.Errorf("a CSV record of %d fields; the stream reads %d", len(f.fields), len(cols))
	}
	if d.seen != nil {
		clear(d.seen)
	}
	for i, field := range f.fields {
		col := cols[i]
		if col < 0 {
			continue
		}
		if d.seen != nil {
			d.seen[col] = true
		}
		if !f.quoted[i] && string(field) == f.null {
			row[col] = types.Null
			continue
		}
		c := d.cols[col]
		v, err := types.ParseText(string(field), c.Type)
		if err == nil && !c.Mod.IsZero() {
			v, err = expr.ApplyModifier(v, c.Mod, false)
		}
		if err != nil {
			return fmt.Errorf("field %q: %w", c.Name, err)
		}
		row[col] = v
	}
	d.fillMissing(row)
	return d.generate(row)
}

// EncodeCSV renders row (of columns cols, stream d's) as the CSV message
// d's decoder reads back: its INCLUDE and generated columns left out, a
// header line first when d has header = true, a field quoted when it
// holds the delimiter, the quote or a line break, is empty, or equals the
// null string, and NULL as the null string.
func EncodeCSV(d *catalog.Descriptor, cols []types.Column, row types.Row) ([]byte, error) {
	header, delim, quote, null, err := CSVOptions(d.Options)
	if err != nil {
		return nil, err
	}
	skip := map[string]bool{}
	member := map[string]string{}
	for _, c := range d.Columns {
		skip[c.Name] = c.Metadata != "" || c.Generated != ""
		member[c.Name] = c.MemberKey()
	}
	field := func(buf []byte, s string, isNull bool) []byte {
		if isNull {
			return append(buf, null...)
		}
		if s != "" && s != null && !strings.ContainsAny(s, string([]byte{delim, quote, '\n', '\r'})) {
			return append(buf, s...)
		}
		buf = append(buf, quote)
		for i := 0; i < len(s); i++ {
			if s[i] == quote {
				buf = append(buf, quote)
			}
			buf = append(buf, s[i])
		}
		return append(buf, quote)
	}
	var buf []byte
	if header {
		n := 0
		for _, c := range cols {
			if skip[c.Name] {
				continue
			}
			if n > 0 {
				buf = append(buf, delim)
			}
			buf = field(buf, member[c.Name], false)
			n++
		}
		buf = append(buf, '\n')
	}
	n := 0
	for i, c := range cols {
		if skip[c.Name] {
			continue
		}
		if n > 0 {
			buf = append(buf, delim)
		}
		n++
		if row[i].IsNull() {
			buf = field(buf, "", true)
			continue
		}
		s := types.FormatText(row[i], c.Type)
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return nil, sqlerr.New(sqlerr.CharacterNotInRepertoire, "column %q: invalid byte sequence for encoding \"UTF8\"", c.Name)
		}
		buf = field(buf, s, false)
	}
	return buf, nil
}
