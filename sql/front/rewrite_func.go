package front

// funcPass rewrites function-call syntax the TiDB parser reads differently:
//
//	EXTRACT(field FROM x)              ->  date_part('field', x)
//	agg(args) FILTER (WHERE cond)      ->  agg(CASE WHEN cond THEN arg1 END, ...)
//	concat(args)                       ->  streamdb_concat(args)
//
// The TiDB parser turns a || b into concat(a, b), so a call the user wrote
// as concat( must keep another name: PostgreSQL's concat() skips NULLs
// while || yields NULL.
//
// EXTRACT becomes PostgreSQL's date_part so that every field (epoch, dow,
// ...) reads the same way and has PostgreSQL's meaning (seconds with their
// fraction, for one). A FILTER keeps the aggregate's first argument only
// where cond holds (count(*) counts 1s), which is what FILTER means for
// aggregates that skip NULLs.
// ConcatFunc is the name the front layer gives PostgreSQL's concat().
const ConcatFunc = "streamdb_concat"

func (r *rewriter) funcPass() error {
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		switch {
		case t.isWord("extract") && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			if err := r.extract(i); err != nil {
				return err
			}
		case t.isWord("concat") && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			r.toks[i].val = ConcatFunc
		case t.isWord("filter") && i+2 < len(r.toks) && r.toks[i+1].isOp("(") && r.toks[i+2].isWord("where"):
			if err := r.filter(i); err != nil {
				return err
			}
			i--
		}
	}
	return nil
}

// extract rewrites the EXTRACT call at toks[i].
func (r *rewriter) extract(i int) error {
	t := r.toks[i]
	end := matchParen(r.toks, i+1)
	if end < 0 {
		return syntaxError(r.src, eofToken(r.src))
	}
	if i+3 >= end || !r.toks[i+3].isWord("from") {
		return syntaxError(r.src, r.toks[min(i+3, end)])
	}
	field := r.toks[i+2]
	if field.kind != tkWord && field.kind != tkString && field.kind != tkIdent {
		return syntaxError(r.src, field)
	}
	call := concat(
		[]token{synth(tkWord, "date_part", t, t.space), r.toks[i+1], synth(tkString, field.val, field, false), synth(tkOp, ",", field, false)},
		withSpace(r.toks[i+4:end], true),
	)
	r.toks = concat(r.toks[:i], call, r.toks[end:])
	return nil
}

// filter rewrites the FILTER clause at toks[i] into the aggregate before it.
func (r *rewriter) filter(i int) error {
	t := r.toks[i]
	closeArgs := i - 1
	if closeArgs < 0 || !r.toks[closeArgs].isOp(")") {
		return syntaxError(r.src, t)
	}
	openArgs := matchParenBack(r.toks, closeArgs)
	end := matchParen(r.toks, i+1)
	if openArgs < 0 || end < 0 {
		return syntaxError(r.src, t)
	}
	cond := withSpace(r.toks[i+3:end], true)
	if len(cond) == 0 {
		return syntaxError(r.src, r.toks[end])
	}
	args := r.toks[openArgs+1 : closeArgs]
	var prefix []token
	if len(args) > 0 && args[0].isWord("distinct", "all") {
		prefix, args = args[:1], args[1:]
	}
	parts := splitTopLevel(args)
	first := parts[0]
	if len(first) == 0 {
		return syntaxError(r.src, r.toks[closeArgs])
	}
	if len(first) == 1 && first[0].isOp("*") {
		first = []token{synth(tkNumber, "1", first[0], true)}
	}
	wrapped := concat(
		[]token{synth(tkWord, "case", t, len(prefix) > 0), synth(tkWord, "when", t, true)},
		cond,
		[]token{synth(tkWord, "then", t, true)},
		withSpace(first, true),
		[]token{synth(tkWord, "end", t, true)},
	)
	rest := args[len(parts[0]):] // the comma and the other arguments
	r.toks = concat(r.toks[:openArgs+1], prefix, wrapped, rest, r.toks[closeArgs:i], r.toks[end+1:])
	return nil
}
