package front

import "streamdb/sqlerr"

// PointKind says what a point in the system's history is named by.
type PointKind string

// Point kinds for AS OF and ROLLBACK TO.
const (
	PointSavepoint  PointKind = "savepoint"
	PointCheckpoint PointKind = "checkpoint"
	PointTimestamp  PointKind = "timestamp"
)

// AsOf is a SELECT's AS OF clause: read state as it was at a savepoint, a
// checkpoint or the newest retained point at or before a time.
type AsOf struct {
	Kind PointKind
	Name string // savepoint name
	ID   string // checkpoint id (digits)
	Time string // timestamp text, unquoted
}

// asOfPass removes "AS OF SAVEPOINT name | CHECKPOINT n | TIMESTAMP '...'"
// and records it. A query may name one point (repeating the same one is
// allowed).
func (r *rewriter) asOfPass() error {
	out := make([]token, 0, len(r.toks))
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if !(t.isWord("as") && i+2 < len(r.toks) && r.toks[i+1].isWord("of") &&
			r.toks[i+2].isWord("savepoint", "checkpoint", "timestamp", "timestamptz")) {
			out = append(out, t)
			continue
		}
		p, next, err := readPoint(r.src, r.toks, i+2)
		if err != nil {
			return err
		}
		if r.asOf != nil && *r.asOf != p {
			return errorAt(r.src, t, sqlerr.FeatureNotSupported, "a query can read only one AS OF point")
		}
		r.asOf = &p
		i = next - 1
	}
	r.toks = out
	return nil
}

// readPoint reads SAVEPOINT name, CHECKPOINT n or TIMESTAMP 'text' at
// toks[i] and returns the index after it.
func readPoint(src string, toks []token, i int) (AsOf, int, error) {
	at := func(k int) token {
		if k < len(toks) {
			return toks[k]
		}
		return eofToken(src)
	}
	kw, arg := at(i), at(i+1)
	switch {
	case kw.isWord("savepoint"):
		if !arg.isName() {
			return AsOf{}, i, syntaxError(src, arg)
		}
		return AsOf{Kind: PointSavepoint, Name: arg.val}, i + 2, nil
	case kw.isWord("checkpoint"):
		if arg.kind == tkString && isDigits(arg.val) {
			return AsOf{Kind: PointCheckpoint, ID: arg.val}, i + 2, nil
		}
		if arg.kind != tkNumber || !isDigits(arg.val) {
			return AsOf{}, i, syntaxError(src, arg)
		}
		return AsOf{Kind: PointCheckpoint, ID: arg.val}, i + 2, nil
	case kw.isWord("timestamp", "timestamptz"):
		if matchWords(toks, i+1, []string{"with", "time", "zone"}) {
			i += 3
			arg = at(i + 1)
		}
		if arg.kind != tkString {
			return AsOf{}, i, syntaxError(src, arg)
		}
		return AsOf{Kind: PointTimestamp, Time: arg.val}, i + 2, nil
	}
	return AsOf{}, i, syntaxError(src, kw)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
