package front

// trimPass rewrites PostgreSQL's TRIM forms into the functions PostgreSQL
// itself reads them as, which also name the output column as it does:
//
//	TRIM([BOTH] [chars] FROM s)   ->  btrim(s[, chars])
//	TRIM(LEADING [chars] FROM s)  ->  ltrim(s[, chars])
//	TRIM(TRAILING [chars] FROM s) ->  rtrim(s[, chars])
//	TRIM([BOTH|LEADING|TRAILING] list)  ->  btrim(list), ltrim(list), rtrim(list)
//
// The arguments keep their tokens, so later passes rewrite them as usual.
func (r *rewriter) trimPass() error {
	if !hasWord(r.toks, "trim") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+4)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if !t.isWord("trim") || i+1 >= len(r.toks) || !r.toks[i+1].isOp("(") || (i > 0 && r.toks[i-1].isOp(".")) {
			out = append(out, t)
			continue
		}
		end := matchParen(r.toks, i+1)
		if end < 0 {
			return syntaxError(r.src, eofToken(r.src))
		}
		if err := r.spend(end-i, t); err != nil {
			return err
		}
		fn, args := "btrim", i+2
		switch {
		case r.toks[args].isWord("leading"):
			fn, args = "ltrim", args+1
		case r.toks[args].isWord("trailing"):
			fn, args = "rtrim", args+1
		case r.toks[args].isWord("both"):
			args++
		}
		from := -1
		for j := args; j < end; j++ {
			switch {
			case r.toks[j].isOp("(", "["):
				j = matchParen(r.toks, j)
			case r.toks[j].isWord("case"):
				j = matchCase(r.toks, j)
			case r.toks[j].isWord("from"):
				from = j
			}
			if j < 0 {
				return syntaxError(r.src, t)
			}
			if from >= 0 {
				break
			}
		}
		name := t
		name.val = fn
		out = append(out, name, r.toks[i+1])
		var list []token
		switch {
		case from < 0:
			list = r.toks[args:end]
		case from == args: // TRIM([direction] FROM s)
			list = r.toks[from+1 : end]
		default: // TRIM([direction] chars FROM s): the source comes first
			list = concat(withSpace(r.toks[from+1:end], false), []token{synth(tkOp, ",", r.toks[from], false)},
				withSpace(r.toks[args:from], true))
		}
		if len(list) == 0 {
			return syntaxError(r.src, r.toks[end])
		}
		out = append(out, withSpace(list, false)...)
		out = append(out, r.toks[end])
		i = end
	}
	r.toks = out
	return nil
}

// builtinCallWords are the function names the TiDB parser reads as calls
// only when '(' follows with no space (its built-in function tokens);
// PostgreSQL allows a space there (COUNT (*)).
var builtinCallWords = setOf("bit_and", "bit_or", "bit_xor", "cast", "count", "approx_count_distinct",
	"approx_percentile", "curdate", "curtime", "date_add", "date_sub", "extract", "group_concat", "max",
	"mid", "min", "now", "position", "std", "stddev", "stddev_pop", "stddev_samp", "substr", "substring",
	"sum", "sysdate", "translate", "trim", "variance", "var_pop", "var_samp")

// callSpacePass drops the space between such a name and its '(' where the
// name is a call: not after INTO, FROM, JOIN, UPDATE, TABLE or AS (a table
// named count with a column list) or a '.'.
func (r *rewriter) callSpacePass() error {
	for i := 1; i < len(r.toks); i++ {
		t, prev := r.toks[i], r.toks[i-1]
		if !t.isOp("(") || !t.space || prev.kind != tkWord || !builtinCallWords[prev.val] {
			continue
		}
		if i >= 2 && (r.toks[i-2].isOp(".") || r.toks[i-2].isWord("into", "from", "join", "update", "table", "as")) {
			continue
		}
		r.toks[i].space = false
	}
	return nil
}
