package exec

import (
	"bytes"
	"math"
	"slices"
	"unicode/utf8"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// rawPaths computes generated columns from the raw text of jsonb members
// that no operator reads themselves, only through -> ->> #> #>> chains
// with constant keys in generated columns' expressions (user_id bigint
// GENERATED ALWAYS AS ((doc->'user'->>'id')::bigint)). Building the
// member's canonical jsonb text, to then look keys up in it, was most of
// the cost of such a stream: instead one pass over the member's text both
// validates it (what jsonb input would refuse sends the message down the
// usual path) and records where each chain's value stands, the last of
// duplicate keys as jsonb keeps it. The chains' values are then the
// canonical text of those spans only, and each generated expression is
// evaluated with its chains replaced by references to them.
//
// The pass does little per message besides reading it: spans found are
// told from the previous message's by a pass number rather than cleared;
// an object's keys are compared first with the keys at the same positions
// of the last object at that node (producers write fields in one order);
// the value of an integer member that a chain casts to an integer type is
// computed as the pass reads its digits.
//
// Anything the pass does not cover (an escape in a key, a \u escape, a
// number numeric would have to check, an index into a jsonb scalar, a #>
// step into an array, invalid JSON) is no error here: that member is
// decoded as usual and its chains evaluated over the decoded value, so
// results and errors are the usual path's by construction.
type rawPaths struct {
	ncols int
	// roots[c] is the trie of the chains over column c, nil for columns
	// read the usual way.
	roots  []*pathNode
	chains []rawChain
	// gen are the generated columns with each chain replaced by a
	// rawRef to it.
	gen []plan.GeneratedColumn
	// scanned[c]: the pass covered column c's member in this message.
	scanned []bool
	data    []byte // the message during a pass
	depth   int
	// pass numbers the passes: a node holds a span of the current pass
	// of its column when its pass equals its root's.
	pass uint64
	// wide: a string of the pass held a byte past ASCII. Bytes outside
	// strings are ASCII by the grammar the pass checks, so a pass
	// without wide strings needs no UTF-8 check.
	wide    bool
	canon   types.JSONBCanon
	scratch []byte
}

// pathNode is a step of one or more chains: the value under a key (or
// at an array index) of its parent's value.
type pathNode struct {
	key   string
	index int // -> with an integer: the array element; -1 for a key
	// path: a #> step, which would index an array with its key
	path     bool
	children []*pathNode
	// pass is the pass that found the value (see rawPaths.pass); a
	// root's is the latest pass over its column.
	pass       uint64
	start, end int // the value's span in the message, when found
	// integer: the value is an integer of at most 18 digits, ival.
	integer bool
	ival    int64
	// guess[k] is the key of the member at position k of the object
	// last found here, when it was plain ASCII without escapes, and its
	// child (see object).
	guess []keyGuess
}

type keyGuess struct {
	key   []byte
	child *pathNode
}

// rawChain is one maximal chain: the value of its last node, as text for
// ->> and #>>; orig is the chain's expression, evaluated over the decoded
// row when the pass did not cover the member.
type rawChain struct {
	col    int
	node   *pathNode
	root   *pathNode
	asText bool
	orig   expr.Expr
	// cast, when not nil, is a cast of the ->> or #>> chain to an integer
	// type, which orig is: an integer member in [lo, hi], the type's
	// range, is then read as one, without the text in between.
	cast   *expr.Func
	lo, hi int64
}

// newRawPaths returns the fast path for the generated columns gen over
// cols, for the jsonb columns that need does not mark (read by no
// operator) and that gen reads only through chains; nil if there is no
// such column.
func newRawPaths(cols []types.Column, gen []plan.GeneratedColumn, need []bool) *rawPaths {
	r := &rawPaths{ncols: len(cols), roots: make([]*pathNode, len(cols))}
	for c, col := range cols {
		if col.Type == types.JSONB && c < len(need) && !need[c] && col.Mod.IsZero() {
			r.roots[c] = &pathNode{index: -1}
		}
	}
	// A column some generated expression reads other than through a
	// chain is read the usual way.
	for _, g := range gen {
		r.markDirect(g.Expr)
	}
	if !slices.ContainsFunc(r.roots, func(n *pathNode) bool { return n != nil }) {
		return nil
	}
	r.gen = make([]plan.GeneratedColumn, len(gen))
	for i, g := range gen {
		r.gen[i] = plan.GeneratedColumn{Col: g.Col, Expr: r.rewrite(g.Expr)}
	}
	r.scanned = make([]bool, len(cols))
	return r
}

// markDirect drops the roots of the columns e reads outside a chain.
func (r *rawPaths) markDirect(e expr.Expr) {
	if _, _, _, ok := r.chainOf(e); ok {
		return
	}
	switch e := e.(type) {
	case *expr.ColRef:
		if e.Idx >= 0 && e.Idx < len(r.roots) {
			r.roots[e.Idx] = nil
		}
	case *expr.Func:
		for _, a := range e.Args {
			r.markDirect(a)
		}
	case *expr.Const:
	default:
		// An expression of another kind: whatever it reads is read as
		// decoded.
		read := make([]bool, len(r.roots))
		plan.MarkRefs(read, e)
		for c, ok := range read {
			if ok {
				r.roots[c] = nil
			}
		}
	}
}

// rewrite returns e with its chains replaced by references to their
// values (after markDirect, so every chain's column has a root).
func (r *rawPaths) rewrite(e expr.Expr) expr.Expr {
	add := func(col int, steps []pathNode, ch rawChain) expr.Expr {
		node := r.roots[col]
		for _, s := range steps {
			node = node.child(s)
		}
		ch.col, ch.node, ch.root, ch.orig = col, node, r.roots[col], e
		r.chains = append(r.chains, ch)
		return &rawRef{r: r, i: len(r.chains) - 1, name: e.String(), t: e.Type()}
	}
	if col, steps, asText, ok := r.chainOf(e); ok {
		return add(col, steps, rawChain{asText: asText})
	}
	f, ok := e.(*expr.Func)
	if !ok {
		return e
	}
	if f.Name == "CAST" && len(f.Args) == 1 && f.Fn1 != nil && f.T.IsInteger() && f.Mod.IsZero() {
		if col, steps, asText, ok := r.chainOf(f.Args[0]); ok && asText {
			lo, hi := intRange(f.T)
			return add(col, steps, rawChain{asText: true, cast: f, lo: lo, hi: hi})
		}
	}
	nf := *f
	nf.Args = make([]expr.Expr, len(f.Args))
	for i, a := range f.Args {
		nf.Args[i] = r.rewrite(a)
	}
	return &nf
}

// chainOf reports whether e is a chain of -> ->> #> #>> with constant
// keys over a jsonb column with a root, and returns its column, steps and
// whether it ends in ->> or #>>.
func (r *rawPaths) chainOf(e expr.Expr) (col int, steps []pathNode, asText, ok bool) {
	f, isFunc := e.(*expr.Func)
	if !isFunc || !f.Infix || len(f.Args) != 2 || f.Args[0].Type() != types.JSONB {
		return 0, nil, false, false
	}
	switch f.Name {
	case "->", "->>", "#>", "#>>":
	default:
		return 0, nil, false, false
	}
	k, isConst := f.Args[1].(*expr.Const)
	if !isConst || k.D.IsNull() {
		return 0, nil, false, false
	}
	switch l := f.Args[0].(type) {
	case *expr.ColRef:
		if l.Idx < 0 || l.Idx >= len(r.roots) || r.roots[l.Idx] == nil {
			return 0, nil, false, false
		}
		col = l.Idx
	default:
		var text bool
		if col, steps, text, ok = r.chainOf(l); !ok || text {
			return 0, nil, false, false
		}
	}
	steps = append([]pathNode(nil), steps...)
	switch f.Name {
	case "->", "->>":
		switch {
		case k.T.IsString():
			steps = append(steps, pathNode{key: k.D.S, index: -1})
		case k.T.IsInteger() && k.D.K == types.KindInt && k.D.I >= 0 && k.D.I < 1<<31:
			steps = append(steps, pathNode{index: int(k.D.I)})
		default:
			return 0, nil, false, false
		}
	default:
		if k.T != types.ArrayOf(types.Text) {
			return 0, nil, false, false
		}
		elems, err := types.SplitArray(k.D.S)
		if err != nil || len(elems) == 0 {
			return 0, nil, false, false
		}
		for _, el := range elems {
			if el.IsNull() {
				return 0, nil, false, false
			}
			steps = append(steps, pathNode{key: el.S, index: -1, path: true})
		}
	}
	return col, steps, f.Name == "->>" || f.Name == "#>>", true
}

// keyChild returns n's child under key, nil for none.
func (n *pathNode) keyChild(key []byte) *pathNode {
	for _, c := range n.children {
		if c.index < 0 && c.key == string(key) {
			return c
		}
	}
	return nil
}

// maxGuesses bounds the guesses of a node, for objects with many members.
const maxGuesses = 32

// remember records key, plain ASCII without escapes, and its child c
// (nil for none) as the guess for the member at position field of n's
// object.
func (n *pathNode) remember(field int, key []byte, c *pathNode) {
	if field >= maxGuesses {
		return
	}
	for len(n.guess) <= field {
		n.guess = append(n.guess, keyGuess{})
	}
	g := &n.guess[field]
	g.key, g.child = append(g.key[:0], key...), c
}

// child returns n's child for the step s, added if new.
func (n *pathNode) child(s pathNode) *pathNode {
	for _, c := range n.children {
		if c.index == s.index && c.key == s.key {
			c.path = c.path || s.path
			return c
		}
	}
	c := &pathNode{key: s.key, index: s.index, path: s.path}
	n.children = append(n.children, c)
	return c
}

// intRange is the range of the integer type t.
func intRange(t types.Type) (lo, hi int64) {
	switch t {
	case types.Int2:
		return math.MinInt16, math.MaxInt16
	case types.Int4:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// found reports whether the latest pass over n's column, root's, found
// n's value.
func (n *pathNode) found(root *pathNode) bool { return n.pass == root.pass }

// forget marks n's descendants not found: a later member of the same
// key replaces all that the earlier one held.
func (n *pathNode) forget() {
	for _, c := range n.children {
		c.pass = 0
		c.forget()
	}
}

// begin starts a message: no member covered yet.
func (r *rawPaths) begin() {
	clear(r.scanned)
	r.data = nil
}

// scan passes over the value of column col's member at data[p]; ok is
// false where the pass does not apply (the caller then decodes the
// member as usual), and next is the offset after the value.
func (r *rawPaths) scan(data []byte, p, col int) (next int, ok bool) {
	root := r.roots[col]
	r.data, r.depth, r.wide = data, 0, false
	// A new pass: every node of the column is not found until the pass
	// finds it (pass numbers start at 1, a node's at 0).
	r.pass++
	root.pass = r.pass
	end, ok := r.value(p, root)
	if !ok || r.wide && !utf8.Valid(data[p:end]) {
		r.scanned[col] = false
		return 0, false
	}
	root.start, root.end = p, end
	r.scanned[col] = true
	return end, true
}

func (r *rawPaths) ws(i int) int { return skipWS(r.data, i) }

// value passes over the value at r.data[i] (node n's, or nil for a value
// no chain reaches) and returns the offset after it.
func (r *rawPaths) value(i int, n *pathNode) (int, bool) {
	if i >= len(r.data) {
		return 0, false
	}
	if n != nil {
		n.integer = false // until number finds one
	}
	switch b := r.data[i]; {
	case b == '{':
		return r.object(i, n)
	case b == '[':
		return r.array(i, n)
	}
	if n != nil {
		for _, c := range n.children {
			if c.index >= 0 || c.path {
				// jsonb indexes a scalar as an array of one, and #>
				// steps into scalars as it does: left to the usual path.
				return 0, false
			}
		}
	}
	switch b := r.data[i]; {
	case b == '"':
		raw, next, complex, err := scanString(r.data, i)
		if err != nil || complex && bytes.Contains(raw, []byte(`\u`)) {
			return 0, false // \u0000 and unpaired surrogates are no jsonb
		}
		r.wide = r.wide || complex
		return next, true
	case b == '-' || b >= '0' && b <= '9':
		return r.number(i, n)
	}
	for _, w := range [...]string{"true", "false", "null"} {
		if len(r.data)-i >= len(w) && string(r.data[i:i+len(w)]) == w && (i+len(w) == len(r.data) || !isWordByte(r.data[i+len(w)])) {
			return i + len(w), true
		}
	}
	return 0, false
}

// isWordByte is the bytes that continue a JSON literal or number (and so
// make it invalid), as jsonb input reads them.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' || c == '.' || c >= 0x80
}

// number passes over the number at r.data[i]: the ones numeric surely
// takes (at most 1000 digits on either side of the point, no exponent);
// others are left to the usual path. For a node n it records whether
// the number is an integer of at most 18 digits (which int64 holds
// whatever they are), and its value.
func (r *rawPaths) number(i int, n *pathNode) (int, bool) {
	d := r.data
	j := i
	neg := d[j] == '-'
	if neg {
		j++
	}
	var u int64
	intDigits := 0
	if j < len(d) && d[j] == '0' {
		j++
		intDigits = 1
	} else {
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			u = u*10 + int64(d[j]-'0') // wraps past 18 digits: then unused
			j++
			intDigits++
		}
		if intDigits == 0 || intDigits > 1000 {
			return 0, false
		}
	}
	integer := intDigits <= 18
	if j < len(d) && d[j] == '.' {
		j++
		k := j
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
		if j == k || j-k > 1000 {
			return 0, false
		}
		integer = false
	}
	if j < len(d) && (isWordByte(d[j])) {
		return 0, false // an exponent, or not a number
	}
	if n != nil {
		if neg {
			u = -u
		}
		n.integer, n.ival = integer, u
	}
	return j, true
}

func (r *rawPaths) enter() bool {
	r.depth++
	return r.depth <= types.MaxJSONDepth
}

func (r *rawPaths) object(i int, n *pathNode) (int, bool) {
	if !r.enter() {
		return 0, false
	}
	d := r.data
	i = r.ws(i + 1)
	if i < len(d) && d[i] == '}' {
		r.depth--
		return i + 1, true
	}
	for field := 0; ; field++ {
		if i >= len(d) || d[i] != '"' {
			return 0, false
		}
		var c *pathNode
		next := -1
		if n != nil && field < len(n.guess) {
			// The key at this position of the previous object is most
			// often this one: the same bytes then close with a quote.
			g := &n.guess[field]
			if end := i + 1 + len(g.key); end < len(d) && d[end] == '"' && string(d[i+1:end]) == string(g.key) {
				c, next = g.child, end+1
			}
		}
		if next < 0 {
			key, end, complex, err := scanString(d, i)
			if err != nil || complex && bytes.IndexByte(key, '\\') >= 0 {
				return 0, false
			}
			r.wide = r.wide || complex
			if n != nil {
				c = n.keyChild(key)
				if !complex {
					n.remember(field, key, c)
				}
			}
			next = end
		}
		i = r.ws(next)
		if i >= len(d) || d[i] != ':' {
			return 0, false
		}
		i = r.ws(i + 1)
		if c != nil && c.pass == r.pass {
			c.forget() // the last of duplicate keys wins
		}
		var done, ok bool
		if i, done, ok = r.member(i, c, '}'); !ok || done {
			return i, ok
		}
	}
}

func (r *rawPaths) array(i int, n *pathNode) (int, bool) {
	if !r.enter() {
		return 0, false
	}
	if n != nil {
		for _, c := range n.children {
			if c.path {
				return 0, false // #> reads a key as an index here
			}
		}
	}
	d := r.data
	i = r.ws(i + 1)
	if i < len(d) && d[i] == ']' {
		r.depth--
		return i + 1, true
	}
	for k := 0; ; k++ {
		var c *pathNode
		if n != nil {
			for _, x := range n.children {
				if x.index == k {
					c = x
					break
				}
			}
		}
		var done, ok bool
		if i, done, ok = r.member(i, c, ']'); !ok || done {
			return i, ok
		}
	}
}

// member reads the value at data[i] of an object or array, recording
// where it lies in c (nil for a value no path needs), and what follows
// it: next is where the next value starts, done that close ended the
// container.
func (r *rawPaths) member(i int, c *pathNode, close byte) (next int, done, ok bool) {
	start := i
	if i, ok = r.value(i, c); !ok {
		return 0, false, false
	}
	if c != nil {
		c.pass, c.start, c.end = r.pass, start, i
	}
	i = r.ws(i)
	if i >= len(r.data) {
		return 0, false, false
	}
	switch r.data[i] {
	case ',':
		return r.ws(i + 1), false, true
	case close:
		r.depth--
		return i + 1, true, true
	}
	return 0, false, false
}

// generate computes the generated columns of row, whose members the
// decoder has read (those of scanned columns by scan).
func (r *rawPaths) generate(d *RowDecoder, row types.Row) error {
	for _, g := range r.gen {
		var v types.Datum
		var err error
		if x, ok := g.Expr.(*rawRef); ok {
			// The most common: a chain alone, most often cast to an
			// integer type, which an integer member is read as directly.
			if ch := &r.chains[x.i]; ch.cast != nil && r.scanned[ch.col] {
				if n := ch.node; n.pass != ch.root.pass {
					row[g.Col] = types.Null
					continue
				} else if n.integer && n.ival >= ch.lo && n.ival <= ch.hi {
					row[g.Col] = types.NewInt(n.ival)
					continue
				}
			}
			v, err = x.Eval(row)
		} else {
			v, err = g.Expr.Eval(row)
		}
		if err != nil {
			r.data = nil
			return d.generatedError(g, err)
		}
		row[g.Col] = v
	}
	for c, ok := range r.scanned {
		if ok {
			row[c] = types.Null // read by no operator
		}
	}
	r.data = nil // the message is the caller's
	return nil
}

// rawRef stands for chain i in the rewritten generated expressions. It
// is evaluated where the chain was, so that a cast in a branch CASE does
// not take fails only where it would have.
type rawRef struct {
	r    *rawPaths
	i    int
	name string
	t    types.Type
}

func (x *rawRef) Type() types.Type { return x.t }
func (x *rawRef) String() string   { return x.name }

func (x *rawRef) Eval(row types.Row) (types.Datum, error) {
	r, ch := x.r, &x.r.chains[x.i]
	switch {
	case !r.scanned[ch.col]:
		return ch.orig.Eval(row)
	case ch.cast != nil:
		if v, ok := r.intValue(ch); ok {
			return v, nil
		}
		v, err := r.chainValue(ch)
		if err != nil {
			return v, err
		}
		return ch.cast.Fn1(v)
	}
	return r.chainValue(ch)
}

// intValue reads the integer member of the cast chain ch as its integer
// type; ok is false for anything but an integer that fits, which the
// cast then reads from the member's text.
func (r *rawPaths) intValue(ch *rawChain) (types.Datum, bool) {
	switch n := ch.node; {
	case !n.found(ch.root):
		return types.Null, true
	case n.integer && n.ival >= ch.lo && n.ival <= ch.hi:
		return types.NewInt(n.ival), true
	}
	return types.Null, false
}

// chainValue is the value of chain ch from the spans of the last pass.
func (r *rawPaths) chainValue(ch *rawChain) (types.Datum, error) {
	n := ch.node
	if !n.found(ch.root) {
		return types.Null, nil
	}
	raw := r.data[n.start:n.end]
	if ch.asText {
		switch raw[0] {
		case 'n':
			return types.Null, nil
		case '"':
			s := raw[1 : len(raw)-1]
			if bytes.IndexByte(s, '\\') < 0 {
				return types.NewString(string(s)), nil
			}
			var err error
			if r.scratch, err = unquoteInto(r.scratch[:0], s, false); err != nil {
				return types.Null, err
			}
			return types.NewString(string(r.scratch)), nil
		case 't', 'f':
			return types.NewString(string(raw)), nil
		}
	}
	if text, ok := r.canon.CanonicalBytes(raw); ok {
		if ch.asText {
			return types.NewString(text), nil
		}
		return types.Datum{K: types.KindJSONB, S: text}, nil
	}
	v, err := types.ParseJSONB(string(raw))
	if err != nil || !ch.asText {
		return v, err
	}
	return types.NewString(v.S), nil
}
