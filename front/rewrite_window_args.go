package front

// windowArgsPass lets the arguments of the window functions whose
// grammar the TiDB parser narrows be any expression, as in PostgreSQL:
//
//	lag(v, -1) OVER w           ->  lag(streamdb_window_args(v, -1)) OVER w
//	lead(v, n + 1, d) OVER w    ->  lead(streamdb_window_args(v, n + 1, d)) OVER w
//	nth_value(v, n + 1) OVER w  ->  nth_value(v, (n + 1)) OVER w
//	ntile(n + 1) OVER w         ->  ntile((n + 1)) OVER w
//
// The TiDB parser takes only an unsigned number or a parameter for the
// offset of lag and lead and a simple expression for the others; the
// binder unpacks WindowArgsFunc (sql/bind_window_func.go).
func (r *rewriter) windowArgsPass() error {
	if !hasWord(r.toks, "lag") && !hasWord(r.toks, "lead") && !hasWord(r.toks, "nth_value") && !hasWord(r.toks, "ntile") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+4)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		out = append(out, t)
		if !t.isWord("lag", "lead", "nth_value", "ntile") || i+1 >= len(r.toks) || !r.toks[i+1].isOp("(") || i > 0 && r.toks[i-1].isOp(".") {
			continue
		}
		end := matchParen(r.toks, i+1)
		if end < 0 || end+1 >= len(r.toks) || !r.toks[end+1].isWord("over") {
			continue
		}
		args := r.toks[i+2 : end]
		parts := splitTopLevel(args)
		open, closing := r.toks[i+1], r.toks[end]
		switch {
		case t.isWord("lag", "lead") && len(parts) > 1:
			out = append(out, open, synth(tkWord, WindowArgsFunc, open, false), synth(tkOp, "(", open, false))
			out = append(out, withSpace(args, false)...)
			out = append(out, synth(tkOp, ")", closing, false), closing)
		case t.isWord("nth_value") && len(parts) == 2 && len(parts[1]) > 1:
			out = append(out, open)
			out = append(out, parts[0]...)
			out = append(out, r.toks[i+2+len(parts[0])], synth(tkOp, "(", parts[1][0], true))
			out = append(out, withSpace(parts[1], false)...)
			out = append(out, synth(tkOp, ")", closing, false), closing)
		case t.isWord("ntile") && len(parts) == 1 && len(parts[0]) > 1:
			out = append(out, open, synth(tkOp, "(", open, false))
			out = append(out, withSpace(args, false)...)
			out = append(out, synth(tkOp, ")", closing, false), closing)
		default:
			continue
		}
		i = end
	}
	r.toks = out
	return nil
}
