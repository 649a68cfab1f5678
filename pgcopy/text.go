package pgcopy

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"

	"streamdb/sqlerr"
)

// The text and CSV formats of COPY, as PostgreSQL 15 reads and writes
// them. A record is one line in text format; in CSV a quoted field may
// span lines, and the record counts as the line it starts on. A line
// holding only \. ends the data in both formats.

// Field is one field of a record: its text, or NULL. A NULL read from CSV
// keeps its text (the null string as written), which FORCE_NOT_NULL reads
// as a value.
type Field struct {
	S    string
	Null bool
}

// TextReader splits COPY FROM data in text or CSV format into records.
type TextReader struct {
	f  *Format
	br *bufio.Reader
	// line is the number of the line the last record started on (1-based).
	line, nextLine int
	fields         []Field
	// quoted says, for each CSV field of the record, whether it was
	// quoted.
	quoted []bool
	// eol is the line ending readLine took off the last line: "\n",
	// "\r\n" or "" at the end of the data.
	eol string
}

// NewTextReader reads records of format f (text or CSV) from r.
func NewTextReader(f *Format, r io.Reader) *TextReader {
	return &TextReader{f: f, br: bufio.NewReaderSize(r, 64<<10), nextLine: 1}
}

// Line is the number of the line the last record read started on
// (1-based), for error messages.
func (r *TextReader) Line() int { return r.line }

// Quoted says whether field i of the last CSV record read was quoted
// (FORCE_NULL and FORCE_NOT_NULL depend on it); text fields never are.
func (r *TextReader) Quoted(i int) bool { return i < len(r.quoted) && r.quoted[i] }

// readLine reads one line without its line ending; ok is false at the end
// of the data.
func (r *TextReader) readLine() (line string, ok bool, err error) {
	s, err := r.br.ReadString('\n')
	if err != nil && err != io.EOF {
		return "", false, err
	}
	if s == "" && err == io.EOF {
		return "", false, nil
	}
	r.nextLine++
	if !utf8.ValidString(s) {
		return "", false, sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	body := strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
	r.eol = s[len(body):]
	return body, true, nil
}

// Next reads the next record. ok is false at the end of the data. The
// fields are valid until the next call.
func (r *TextReader) Next() (fields []Field, ok bool, err error) {
	r.line = r.nextLine
	line, ok, err := r.readLine()
	if !ok || err != nil || line == `\.` {
		return nil, false, err
	}
	r.fields, r.quoted = r.fields[:0], r.quoted[:0]
	if r.f.Kind == CSV {
		err = r.splitCSV(line)
	} else {
		err = r.splitText(line)
	}
	return r.fields, err == nil, err
}

// splitText splits a text-format line at unescaped delimiters and undoes
// the backslash escapes; a field written exactly as the null string is
// NULL.
func (r *TextReader) splitText(line string) error {
	delim := r.f.Delimiter
	start := 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) && line[i] == '\\' {
			i++
			continue
		}
		if i < len(line) && line[i] != delim {
			continue
		}
		raw := line[start:min(i, len(line))]
		start = i + 1
		if raw == r.f.Null {
			r.fields = append(r.fields, Field{Null: true})
			continue
		}
		s, err := unescapeText(raw)
		if err != nil {
			return err
		}
		r.fields = append(r.fields, Field{S: s})
	}
	return nil
}

// unescapeText undoes the text format's backslash escapes: \b \f \n
// \r \t \v, \ooo in octal, \xhh in hex, and a backslash before any other
// character stands for that character.
func unescapeText(s string) (string, error) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for k := 0; k < 2 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; k++ {
				i++
				v = v*8 + int(s[i]-'0')
			}
			b.WriteByte(byte(v))
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(s) && hexDigit(s[i+1]) >= 0 {
				i++
				v = v*16 + hexDigit(s[i])
				n++
			}
			if n == 0 {
				b.WriteByte('x')
			} else {
				b.WriteByte(byte(v))
			}
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	if !utf8.ValidString(out) {
		return "", sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	return out, nil
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// splitCSV splits a CSV record that starts with line, reading more lines
// while a quoted field is open. An unquoted field equal to the null string
// is NULL (unless FORCE_NOT_NULL names its column, which the caller
// handles through quoted); a quoted one is a string.
func (r *TextReader) splitCSV(line string) error {
	f := r.f
	var b strings.Builder
	quoted, inQuotes := false, false
	flush := func() {
		s := b.String()
		r.fields = append(r.fields, Field{S: s, Null: !quoted && s == f.Null})
		r.quoted = append(r.quoted, quoted)
		b.Reset()
		quoted = false
	}
	for i := 0; ; i++ {
		if i >= len(line) {
			if !inQuotes {
				break
			}
			// The line break is the field's: as written, CR LF included.
			eol := r.eol
			more, ok, err := r.readLine()
			if err != nil {
				return err
			}
			if !ok {
				return sqlerr.New(sqlerr.BadCopyFileFormat, "unterminated CSV quoted field")
			}
			b.WriteString(eol)
			line, i = more, -1
			continue
		}
		c := line[i]
		switch {
		case inQuotes && c == f.Escape && i+1 < len(line) && line[i+1] == f.Quote:
			b.WriteByte(f.Quote)
			i++
		case inQuotes && c == f.Escape && f.Escape != f.Quote && i+1 < len(line) && line[i+1] == f.Escape:
			b.WriteByte(f.Escape)
			i++
		case inQuotes && c == f.Quote:
			inQuotes = false
		case inQuotes:
			b.WriteByte(c)
		case c == f.Quote:
			inQuotes, quoted = true, true
		case c == f.Delimiter:
			flush()
		default:
			b.WriteByte(c)
		}
	}
	flush()
	return nil
}

// AppendValue appends one non-NULL value as f writes it: escaped in text
// format, quoted when it must be (or forceQuote says so) in CSV.
func (f *Format) AppendValue(dst []byte, s string, forceQuote bool) []byte {
	if f.Kind == CSV {
		return AppendCSV(dst, s, f, forceQuote)
	}
	return AppendText(dst, s, f.Delimiter)
}

// AppendRecord appends one text or CSV record: the fields separated by the
// delimiter, NULL as the null string, and a newline.
func (f *Format) AppendRecord(dst []byte, fields []Field) []byte {
	for i, v := range fields {
		if i > 0 {
			dst = append(dst, f.Delimiter)
		}
		if v.Null {
			dst = append(dst, f.Null...)
		} else {
			dst = f.AppendValue(dst, v.S, false)
		}
	}
	return append(dst, '\n')
}

// AppendText appends one value in text format: backslash, the
// delimiter and control characters escaped.
func AppendText(dst []byte, s string, delim byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\v':
			dst = append(dst, '\\', 'v')
		default:
			if c == delim {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		}
	}
	return dst
}

// AppendCSV appends one value in CSV format, quoted when it must be
// (it holds the delimiter, the quote, a line break, is the null string or
// \.) or when force says so.
func AppendCSV(dst []byte, s string, f *Format, force bool) []byte {
	need := force || s == f.Null || s == `\.` || strings.ContainsAny(s, "\r\n") ||
		strings.IndexByte(s, f.Delimiter) >= 0 || strings.IndexByte(s, f.Quote) >= 0
	if !need {
		return append(dst, s...)
	}
	dst = append(dst, f.Quote)
	for i := 0; i < len(s); i++ {
		if s[i] == f.Quote || s[i] == f.Escape {
			dst = append(dst, f.Escape)
		}
		dst = append(dst, s[i])
	}
	return append(dst, f.Quote)
}
