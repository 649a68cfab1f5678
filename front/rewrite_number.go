package front

import (
	"strconv"
	"strings"
)

// maxParserDigits is the longest number literal, in digits, handed to the
// TiDB parser as a number: its decimal type holds 65 digits and it panics
// on some longer literals. PostgreSQL reads any length (as numeric).
const maxParserDigits = 60

// longNumberPass rewrites number literals the TiDB parser cannot read
// into streamdb_cast('literal', 'numeric'), which is what PostgreSQL makes
// of them (a literal with a point, an exponent or past bigint is numeric):
// literals of more than maxParserDigits digits, and literals with an
// exponent beyond double precision's range (1e400). Such a column is named
// "numeric" where PostgreSQL says "?column?".
func (r *rewriter) longNumberPass() error {
	var out []token // nil until a literal is rewritten
	for i, t := range r.toks {
		if t.kind != tkNumber || !tooLongForParser(t.val) {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make([]token, 0, len(r.toks)+5), r.toks[:i]...)
		}
		out = append(out,
			synth(tkWord, CastFunc, t, t.space), synth(tkOp, "(", t, false),
			synth(tkString, t.val, t, false), synth(tkOp, ",", t, false),
			synth(tkString, "numeric", t, true), synth(tkOp, ")", t, false))
	}
	if out != nil {
		r.toks = out
	}
	return nil
}

func tooLongForParser(lit string) bool {
	digits := 0
	for _, c := range lit {
		if c >= '0' && c <= '9' {
			digits++
		}
		if c == 'e' || c == 'E' {
			break
		}
	}
	if digits > maxParserDigits {
		return true
	}
	if strings.ContainsAny(lit, "eE") {
		_, err := strconv.ParseFloat(lit, 64)
		return err != nil
	}
	return false
}
