package sql

import (
	"strings"

	"streamdb/sql/front"
	"streamdb/sqlerr"
)

// copyFormat is a COPY's data format with its options, checked as
// PostgreSQL 15 checks them.
type copyFormat struct {
	kind      string // "text", "csv" or "binary"
	delimiter byte
	null      string
	header    bool
	// headerMatch: HEADER MATCH, the header line must name the columns.
	headerMatch bool
	quote       byte
	escape      byte
	// forceQuoteAll and forceQuote (column names): CSV output quotes these
	// non-NULL values even when it need not.
	forceQuoteAll bool
	forceQuote    map[string]bool
	// forceNotNull: CSV input reads an unquoted null string in these
	// columns as itself, not NULL. forceNull: a quoted one as NULL too.
	forceNotNull, forceNull map[string]bool
}

// newCopyFormat reads and checks the options of n.
func newCopyFormat(n *front.Copy) (*copyFormat, error) {
	f := &copyFormat{kind: "text", delimiter: '\t', null: `\N`}
	opts := n.Options
	if v, ok := opts["format"]; ok {
		switch v = strings.ToLower(v); v {
		case "text", "csv", "binary":
			f.kind = v
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY format \"%s\" not recognized", v).
				WithHint("The formats are text, csv and binary.")
		}
	}
	csv := f.kind == "csv"
	if csv {
		f.delimiter, f.null, f.quote, f.escape = ',', "", '"', '"'
	}
	for key, v := range opts {
		switch key {
		case "format", "encoding", "freeze":
			// ENCODING: streamdb speaks UTF8 only, which is what
			// clients send; FREEZE has no meaning here.
			if key == "encoding" && !strings.EqualFold(strings.ReplaceAll(v, "-", ""), "utf8") {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY encoding %q is not supported", v).
					WithHint("streamdb reads and writes UTF8.")
			}
		case "delimiter", "quote", "escape":
			if f.kind == "binary" {
				return nil, sqlerr.New(sqlerr.SyntaxError, "cannot specify %s in BINARY mode", strings.ToUpper(key))
			}
			if key != "delimiter" && !csv {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY %s available only in CSV mode", key)
			}
			if len(v) != 1 || v[0] >= 0x80 {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY %s must be a single one-byte character", key)
			}
			switch key {
			case "delimiter":
				if v == "\r" || v == "\n" || !csv && strings.ContainsAny(v, `\.abcdefghijklmnopqrstuvwxyz0123456789`) {
					return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter cannot be %q", v)
				}
				f.delimiter = v[0]
			case "quote":
				f.quote = v[0]
			case "escape":
				f.escape = v[0]
			}
		case "null":
			if f.kind == "binary" {
				return nil, sqlerr.New(sqlerr.SyntaxError, "cannot specify NULL in BINARY mode")
			}
			if strings.ContainsAny(v, "\r\n") {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY null representation cannot use newline or carriage return")
			}
			f.null = v
		case "header":
			if f.kind == "binary" {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cannot specify HEADER in BINARY mode")
			}
			switch strings.ToLower(v) {
			case "true", "on", "1", "yes":
				f.header = true
			case "false", "off", "0", "no":
			case "match":
				if !n.From {
					return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cannot use \"match\" with HEADER in COPY TO")
				}
				f.header, f.headerMatch = true, true
			default:
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "header requires a Boolean value or \"match\"")
			}
		default:
			return nil, sqlerr.New(sqlerr.SyntaxError, "option \"%s\" not recognized", key)
		}
	}
	if csv && f.quote == f.delimiter {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter and quote must be different")
	}
	if strings.IndexByte(f.null, f.delimiter) >= 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter must not appear in the NULL specification")
	}
	if csv && strings.IndexByte(f.null, f.quote) >= 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "CSV quote character must not appear in the NULL specification")
	}
	force := func(names []string, what string, from bool) (map[string]bool, error) {
		if len(names) == 0 {
			return nil, nil
		}
		if !csv {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY %s available only in CSV mode", what)
		}
		if from != n.From {
			dir := "COPY TO"
			if !from {
				dir = "COPY FROM"
			}
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY %s cannot be used with %s", what, dir)
		}
		m := map[string]bool{}
		for _, c := range names {
			m[c] = true
		}
		return m, nil
	}
	var err error
	if len(n.ForceQuote) == 1 && n.ForceQuote[0] == "*" {
		if _, err = force(n.ForceQuote, "force quote", false); err != nil {
			return nil, err
		}
		f.forceQuoteAll = true
	} else if f.forceQuote, err = force(n.ForceQuote, "force quote", false); err != nil {
		return nil, err
	}
	if f.forceNotNull, err = force(n.ForceNotNull, "force not null", true); err != nil {
		return nil, err
	}
	if f.forceNull, err = force(n.ForceNull, "force null", true); err != nil {
		return nil, err
	}
	return f, nil
}
