package front

import (
	"strconv"

	"streamdb/sqlerr"
)

// fetchWithTies returns the index of WITH when toks[i] starts FETCH
// {FIRST|NEXT} [n] {ROW|ROWS} WITH TIES, else -1.
func fetchWithTies(toks []token, i int) int {
	if i+1 >= len(toks) || !toks[i].isWord("fetch") || !toks[i+1].isWord("first", "next") {
		return -1
	}
	j := limitValueEnd(toks, i+2)
	if j+2 < len(toks) && toks[j].isWord("row", "rows") && toks[j+1].isWord("with") && toks[j+2].isWord("ties") {
		return j + 1
	}
	return -1
}

// beyondBigint reports whether t is an integer literal past bigint's
// range.
func beyondBigint(t token) bool {
	if t.kind != tkNumber || t.val == "" {
		return false
	}
	for _, c := range t.val {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(t.val, 10, 64)
	return err != nil
}

// maxLimit is the LIMIT that stands for "no limit" in the TiDB dialect.
const maxLimit = "18446744073709551615"

// limitPass makes PostgreSQL's LIMIT / OFFSET forms readable by the TiDB
// parser, which wants LIMIT [offset,] count or LIMIT count OFFSET offset:
//
//	LIMIT ALL                ->  removed
//	OFFSET n [ROW|ROWS]      ->  LIMIT 18446744073709551615 OFFSET n
//	OFFSET n LIMIT m         ->  LIMIT m OFFSET n
//	OFFSET n ROWS FETCH FIRST m ROWS ONLY  ->  LIMIT m OFFSET n
//	FETCH FIRST [m] ROWS ONLY  ->  LIMIT m (1 without m): the TiDB
//	                              parser takes no expression after FIRST
//
// It makes one pass; each rewrite copies only the clauses it moves.
func (r *rewriter) limitPass() error {
	if !hasWord(r.toks, "limit") && !hasWord(r.toks, "offset") && !hasWord(r.toks, "fetch") {
		return nil
	}
	if err := r.withTiesPass(); err != nil {
		return err
	}
	out := make([]token, 0, len(r.toks)+2)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if t.isWord("limit", "offset") && i+1 < len(r.toks) && beyondBigint(r.toks[i+1]) {
			// PostgreSQL reads the count as bigint.
			return errorAt(r.src, r.toks[i+1], sqlerr.NumericValueOutOfRange, "bigint out of range")
		}
		switch {
		case t.isWord("fetch") && i+1 < len(r.toks) && r.toks[i+1].isWord("first", "next"):
			limit, rest, err := r.fetchAsLimit(i)
			if err != nil {
				return err
			}
			limit[0].space = t.space
			out = append(out, limit...)
			i = rest - 1
			continue
		case t.isWord("limit") && i+1 < len(r.toks) && r.toks[i+1].isWord("all"):
			i++
			continue
		case t.isWord("limit"):
			// MySQL's LIMIT offset, count is not PostgreSQL.
			if end := limitValueEnd(r.toks, i+1); end < len(r.toks) && r.toks[end].isOp(",") {
				return errorAt(r.src, r.toks[end], sqlerr.SyntaxError, "LIMIT #,# syntax is not supported").
					WithHint("Use separate LIMIT and OFFSET clauses.")
			}
		case t.isWord("offset"):
			end := limitValueEnd(r.toks, i+1)
			if end == i+1 {
				return syntaxError(r.src, tokenOrEOF(r.src, r.toks, end))
			}
			offset := r.toks[i:end]
			rest := end
			if rest < len(r.toks) && r.toks[rest].isWord("row", "rows") {
				rest++
			}
			if hasLimitBefore(out, len(out)) {
				out = append(out, offset...)
				i = rest - 1
				continue
			}
			var limit []token
			if rest < len(r.toks) && r.toks[rest].isWord("limit") {
				lend := limitValueEnd(r.toks, rest+1)
				if lend == rest+1 {
					return syntaxError(r.src, tokenOrEOF(r.src, r.toks, lend))
				}
				if r.toks[rest+1].isWord("all") {
					lend = rest + 2
				} else {
					limit = withSpace(r.toks[rest:lend], true)
				}
				rest = lend
			} else if rest+1 < len(r.toks) && r.toks[rest].isWord("fetch") && r.toks[rest+1].isWord("first", "next") {
				var err error
				if limit, rest, err = r.fetchAsLimit(rest); err != nil {
					return err
				}
			}
			if limit == nil {
				limit = []token{synth(tkWord, "limit", t, true), synth(tkNumber, maxLimit, t, true)}
			}
			limit[0].space = t.space
			out = append(out, limit...)
			out = append(out, withSpace(offset, true)...)
			i = rest - 1
			continue
		}
		out = append(out, t)
	}
	r.toks = out
	return nil
}

// fetchAsLimit reads FETCH {FIRST|NEXT} [m] {ROW|ROWS} ONLY at toks[i]
// (withTiesPass made WITH TIES ONLY) as LIMIT m, and returns where the
// clause ends.
func (r *rewriter) fetchAsLimit(i int) ([]token, int, error) {
	cend := limitValueEnd(r.toks, i+2)
	count := r.toks[i+2 : cend]
	if len(count) == 0 {
		count = []token{synth(tkNumber, "1", r.toks[i], true)}
	}
	if cend+1 >= len(r.toks) || !r.toks[cend].isWord("row", "rows") || !r.toks[cend+1].isWord("only") {
		return nil, 0, syntaxError(r.src, tokenOrEOF(r.src, r.toks, cend))
	}
	limit := append([]token{synth(tkWord, "limit", r.toks[i], true)}, withSpace(count, true)...)
	return limit, cend + 2, nil
}

// limitValueEnd returns the end of a LIMIT, OFFSET or FETCH count
// starting at toks[i]: ALL, or an expression, which ends at a clause that
// may follow it (OFFSET, LIMIT, FETCH, ROW[S], FOR, a set operator) or at
// the end of its query block.
func limitValueEnd(toks []token, i int) int {
	if i < len(toks) && toks[i].isWord("all") {
		return i + 1
	}
	j := i
	for j < len(toks) {
		t := toks[j]
		switch {
		case t.isOp("(", "["):
			k := matchParen(toks, j)
			if k < 0 {
				return len(toks)
			}
			j = k + 1
			continue
		case t.isWord("case"):
			k := matchCase(toks, j)
			if k < 0 {
				return len(toks)
			}
			j = k + 1
			continue
		case t.isOp(")", "]", ",", ";"), t.kind == tkWord && limitValueStop[t.val]:
			return j
		}
		j++
	}
	return j
}

// limitValueStop are the words that end a LIMIT or OFFSET expression.
var limitValueStop = setOf("limit", "offset", "fetch", "row", "rows", "for", "union", "intersect",
	"except", "only", "with", "into", "returning", "on")

// hasLimitBefore reports whether a LIMIT precedes the OFFSET at toks[i] in
// the same query block.
func hasLimitBefore(toks []token, i int) bool {
	for j := i - 1; j >= 0; j-- {
		t := toks[j]
		switch {
		case t.isOp(")"):
			if j = matchParenBack(toks, j); j < 0 {
				return false
			}
		case t.isOp("("), t.isWord("select", "union", "intersect", "except"):
			return false
		case t.isWord("limit"):
			return true
		}
	}
	return false
}
