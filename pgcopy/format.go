package pgcopy

import (
	"strings"

	"streamdb/sqlerr"
)

// Kind is a COPY data format.
type Kind uint8

const (
	Text Kind = iota
	CSV
	Binary
)

// String returns the format's name as COPY's FORMAT option spells it.
func (k Kind) String() string {
	switch k {
	case CSV:
		return "csv"
	case Binary:
		return "binary"
	}
	return "text"
}

// Format is a COPY's data format with its options, checked as
// PostgreSQL 15 checks them.
type Format struct {
	Kind      Kind
	Delimiter byte
	Null      string
	Header    bool
	// HeaderMatch: HEADER MATCH, the header line must name the columns.
	HeaderMatch bool
	Quote       byte
	Escape      byte
	// ForceQuoteAll and ForceQuote (column names): CSV output quotes these
	// non-NULL values even when it need not.
	ForceQuoteAll bool
	ForceQuote    map[string]bool
	// ForceNotNull: CSV input reads an unquoted null string in these
	// columns as itself, not NULL. ForceNull: a quoted one as NULL too.
	ForceNotNull, ForceNull map[string]bool
}

// Options are a COPY statement's options as written: the direction, the
// WITH options by lower-case name, and the FORCE_* column lists.
type Options struct {
	From                                bool
	Options                             map[string]string
	ForceQuote, ForceNotNull, ForceNull []string
}

// NewFormat reads and checks the options of n.
func NewFormat(n *Options) (*Format, error) {
	f := &Format{Kind: Text, Delimiter: '\t', Null: `\N`}
	opts := n.Options
	if v, ok := opts["format"]; ok {
		switch v = strings.ToLower(v); v {
		case "text":
		case "csv":
			f.Kind = CSV
		case "binary":
			f.Kind = Binary
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY format \"%s\" not recognized", v).
				WithHint("The formats are text, csv and binary.")
		}
	}
	csv := f.Kind == CSV
	if csv {
		f.Delimiter, f.Null, f.Quote, f.Escape = ',', "", '"', '"'
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
			if f.Kind == Binary {
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
				f.Delimiter = v[0]
			case "quote":
				f.Quote = v[0]
			case "escape":
				f.Escape = v[0]
			}
		case "null":
			if f.Kind == Binary {
				return nil, sqlerr.New(sqlerr.SyntaxError, "cannot specify NULL in BINARY mode")
			}
			if strings.ContainsAny(v, "\r\n") {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY null representation cannot use newline or carriage return")
			}
			f.Null = v
		case "header":
			if f.Kind == Binary {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cannot specify HEADER in BINARY mode")
			}
			switch strings.ToLower(v) {
			case "true", "on", "1", "yes":
				f.Header = true
			case "false", "off", "0", "no":
			case "match":
				if !n.From {
					return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cannot use \"match\" with HEADER in COPY TO")
				}
				f.Header, f.HeaderMatch = true, true
			default:
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "header requires a Boolean value or \"match\"")
			}
		default:
			return nil, sqlerr.New(sqlerr.SyntaxError, "option \"%s\" not recognized", key)
		}
	}
	if csv && f.Quote == f.Delimiter {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter and quote must be different")
	}
	if strings.IndexByte(f.Null, f.Delimiter) >= 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter must not appear in the NULL specification")
	}
	if csv && strings.IndexByte(f.Null, f.Quote) >= 0 {
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
		f.ForceQuoteAll = true
	} else if f.ForceQuote, err = force(n.ForceQuote, "force quote", false); err != nil {
		return nil, err
	}
	if f.ForceNotNull, err = force(n.ForceNotNull, "force not null", true); err != nil {
		return nil, err
	}
	if f.ForceNull, err = force(n.ForceNull, "force null", true); err != nil {
		return nil, err
	}
	return f, nil
}
