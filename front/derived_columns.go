package front

import (
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// The TiDB parser takes a column list after a derived table's alias only
// after LATERAL; PostgreSQL takes it on any subquery in FROM:
//
//	(SELECT 1, 2) AS s(p, q)
//
// cutDerivedColumns stands a placeholder alias, derivedAliasPrefix plus
// the list's index, in place of "s(p, q)"; fillDerivedColumns gives the
// parsed table source its alias and column names back, which the binder
// reads as it does LATERAL's.
const derivedAliasPrefix = "streamdb_derived_"

type derivedColumns struct {
	alias string
	names []string
}

// cutDerivedColumns returns toks with the column list of each aliased
// subquery in FROM cut out, and the lists cut.
func cutDerivedColumns(src string, toks []token) ([]token, []derivedColumns, error) {
	var lists []derivedColumns
	var out []token
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		open := -1
		if t.isOp(")") {
			open = matchParenBack(toks, i)
		}
		// ( SELECT | WITH | ( ... ) [AS] name ( names ), not after LATERAL
		// or a function name.
		if open < 0 || open+1 >= i || !toks[open+1].isWord("select", "with") && !toks[open+1].isOp("(") ||
			open > 0 && (toks[open-1].isWord("lateral") || toks[open-1].isName() && !toks[open-1].isWord("from", "join")) {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		a := i + 1
		if a < len(toks) && toks[a].isWord("as") {
			a++
		}
		c := a + 1
		if c >= len(toks) || !toks[a].isName() || operatorWords[toks[a].val] || !toks[c].isOp("(") || !inFromClause(toks, open) {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		ce := matchParen(toks, c)
		if ce < 0 {
			return nil, nil, syntaxError(src, toks[c])
		}
		var names []string
		for _, n := range splitTopLevel(toks[c+1 : ce]) {
			if len(n) != 1 || !n[0].isName() {
				return nil, nil, syntaxError(src, toks[c])
			}
			names = append(names, n[0].val)
		}
		if out == nil {
			out = append([]token(nil), toks[:i]...)
		}
		out = append(out, toks[i:a]...)
		if a == i+1 {
			out = append(out, synth(tkWord, "as", toks[a], true))
		}
		out = append(out, synth(tkWord, derivedAliasPrefix+strconv.Itoa(len(lists)), toks[a], true))
		lists = append(lists, derivedColumns{alias: toks[a].val, names: names})
		i = ce
	}
	if out == nil {
		return toks, nil, nil
	}
	return out, lists, nil
}

// fillDerivedColumns gives the table sources of cutDerivedColumns' lists
// their aliases and column names.
func fillDerivedColumns(stmt ast.Node, lists []derivedColumns) {
	stmt.Accept(&derivedFiller{lists: lists})
}

type derivedFiller struct{ lists []derivedColumns }

func (v *derivedFiller) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (v *derivedFiller) Leave(n ast.Node) (ast.Node, bool) {
	ts, ok := n.(*ast.TableSource)
	if !ok || len(ts.AsName.O) <= len(derivedAliasPrefix) || ts.AsName.O[:len(derivedAliasPrefix)] != derivedAliasPrefix {
		return n, true
	}
	k, err := strconv.Atoi(ts.AsName.O[len(derivedAliasPrefix):])
	if err != nil || k >= len(v.lists) {
		return n, true
	}
	d := v.lists[k]
	ts.AsName = ast.NewCIStr(d.alias)
	ts.ColumnNames = make([]ast.CIStr, len(d.names))
	for i, name := range d.names {
		ts.ColumnNames[i] = ast.NewCIStr(name)
	}
	return n, true
}
