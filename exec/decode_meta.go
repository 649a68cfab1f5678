package exec

import (
	"fmt"
	"strconv"
	"strings"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/types"
)

// metaCol is a column of a stream's INCLUDE clause: filled from the
// message's metadata, never from its data (a JSON member of its name is
// ignored).
type metaCol struct {
	col    int
	kind   string // catalog.MetaSubject, MetaTimestamp, MetaSequence, or "token" / "header"
	token  int    // subject token position: 1 the first, -1 the last
	header string
}

// WithMetadata makes the columns of stream desc's INCLUDE clauses (by
// name among the decoder's columns) metadata columns, which
// FillMetadata fills, makes d read desc's format (CSV), and returns d.
func (d *RowDecoder) WithMetadata(desc *catalog.Descriptor) *RowDecoder {
	byName := map[string]string{}
	for _, c := range desc.Columns {
		if c.Metadata != "" {
			byName[c.MemberKey()] = c.Metadata
		}
	}
	for i, c := range d.cols {
		m, ok := byName[c.Name]
		if !ok {
			continue
		}
		mc := metaCol{col: i, kind: m}
		switch {
		case strings.HasPrefix(m, catalog.MetaTokenPrefix):
			mc.kind = "token"
			mc.token, _ = strconv.Atoi(strings.TrimPrefix(m, catalog.MetaTokenPrefix))
		case strings.HasPrefix(m, catalog.MetaHeaderPrefix):
			mc.kind, mc.header = "header", strings.TrimPrefix(m, catalog.MetaHeaderPrefix)
		}
		d.meta = append(d.meta, mc)
		delete(d.index, c.Name)
	}
	d.withCSV(desc)
	if desc.Options[catalog.OptWholeMessage] == "true" {
		for i, c := range d.cols {
			if _, isMeta := byName[c.Name]; !isMeta {
				d.whole = i + 1
				break
			}
		}
	}
	d.setFormat(desc)
	return d
}

// decodeWhole reads the whole message, any JSON value, into the
// whole-message column, as jsonb or json.
func (d *RowDecoder) decodeWhole(data []byte, row types.Row) error {
	col := d.whole - 1
	if err := checkUTF8(data); err != nil {
		return err
	}
	var v types.Datum
	var err error
	switch {
	case d.cols[col].Type == types.JSON:
		v, err = types.ParseJSON(string(data))
	default:
		if text, ok := d.canon.CanonicalBytes(data); ok {
			v = types.Datum{K: types.KindJSONB, S: text}
		} else {
			v, err = types.ParseJSONBSlow(string(data))
		}
	}
	if err != nil {
		return fmt.Errorf("not a JSON value: %w", err)
	}
	row[col] = v
	return nil
}

// HasMetadata reports whether the decoder has metadata columns.
func (d *RowDecoder) HasMetadata() bool { return len(d.meta) > 0 }

// FillMetadata sets the metadata columns of row, decoded from a message
// with metadata m.
func (d *RowDecoder) FillMetadata(row types.Row, m *broker.MsgInfo) {
	for _, mc := range d.meta {
		v := types.Null
		switch mc.kind {
		case catalog.MetaSubject:
			v = types.NewString(m.Subject)
		case "token":
			if tok, ok := subjectToken(m.Subject, mc.token); ok {
				v = types.NewString(tok)
			}
		case "header":
			// The first value of a repeated header; NULL when absent (an
			// empty value is the empty string).
			if vals := m.Header.Values(mc.header); len(vals) > 0 {
				v = types.NewString(vals[0])
			}
		case catalog.MetaTimestamp:
			if !m.Time.IsZero() {
				v = types.NewTime(m.Time)
			}
		case catalog.MetaSequence:
			v = types.NewInt(int64(m.Seq))
		}
		row[mc.col] = v
	}
}

// subjectToken returns token pos of subject (1 the first, -1 the last).
func subjectToken(subject string, pos int) (string, bool) {
	toks := strings.Split(subject, ".")
	if pos < 0 {
		pos += len(toks) + 1
	}
	if pos < 1 || pos > len(toks) {
		return "", false
	}
	return toks[pos-1], true
}

// metaKey describes the metadata columns, for readerKey.
func (d *RowDecoder) metaKey() string {
	var sb strings.Builder
	sb.WriteString(d.csv.key())
	if d.whole > 0 {
		fmt.Fprintf(&sb, "|whole %d", d.whole-1)
	}
	if d.fmtDesc != nil {
		// A schema is its stream's: only its own scans share a reader.
		fmt.Fprintf(&sb, "|format %s %d", d.fmtDesc.Format, d.fmtDesc.ID)
	}
	for _, mc := range d.meta {
		sb.WriteString("|meta ")
		sb.WriteString(strconv.Itoa(mc.col))
		sb.WriteString(":")
		sb.WriteString(mc.kind)
		sb.WriteString(":")
		sb.WriteString(strconv.Itoa(mc.token))
		sb.WriteString(":")
		sb.WriteString(strconv.Quote(mc.header))
	}
	return sb.String()
}
