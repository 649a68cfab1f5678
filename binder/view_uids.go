package binder

import (
	"sort"
	"strings"

	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// UIDsOption names, in a materialized view's WITH clause, the WITH
// queries (CTEs) whose aggregate gets a user-given operator id: WITH (uids
// = 'daily_totals, hourly') gives the aggregate computed by the WITH query
// daily_totals the id aggregate:daily_totals. A named aggregate keeps its
// state through ALTER MATERIALIZED VIEW however the query around it
// changes, as long as its groups and aggregates keep their types (as
// Flink's uid("...")).
const UIDsOption = "uids"

// ParseUIDs reads the uids option: identifiers separated by commas.
func ParseUIDs(v string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		name := strings.TrimSpace(f)
		if name == "" {
			continue
		}
		for _, r := range name {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"uids\": %q is not a WITH query name", name).
					WithHint("List the names of WITH queries of the view's query, separated by commas: WITH (uids = 'daily_totals').")
			}
		}
		out[name] = true
	}
	return out, nil
}

// viewParams are the bind parameters of a view's query: the statement, and
// the WITH queries the view's uids option names.
func viewParams(st *front.Statement, opts map[string]string) (*Params, error) {
	p := &Params{stmt: st}
	if v, ok := opts[UIDsOption]; ok {
		uids, err := ParseUIDs(v)
		if err != nil {
			return nil, err
		}
		p.uids, p.named = uids, map[string]bool{}
	}
	return p, nil
}

// checkAllNamed refuses a uids option naming a WITH query the view's query
// does not read (a typo would otherwise leave the operator unnamed).
func (p *Params) checkAllNamed() error {
	var missing []string
	for name := range p.uids {
		if !p.named[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return sqlerr.New(sqlerr.InvalidParameterValue, "uids names %s, which the query reads as no WITH query", strings.Join(missing, ", ")).
		WithHint("uids lists WITH queries of the view's query (WITH name AS (SELECT ... GROUP BY ...)) whose aggregate keeps its state through ALTER MATERIALIZED VIEW.")
}

// nameOperator gives the aggregate of WITH query name, bound as node, the
// id the user named it by, if the view's uids option lists it. The
// aggregate is the first one under the query's projections, filters
// (HAVING) and sorts.
func (p *Params) nameOperator(name string, node plan.Node) error {
	if p == nil || !p.uids[name] {
		return nil
	}
	for n := node; n != nil; {
		switch x := n.(type) {
		case *plan.Aggregate:
			x.UID = name
			p.named[name] = true
			return nil
		case *plan.Project:
			n = x.Input
		case *plan.Filter:
			n = x.Input
		case *plan.Sort:
			n = x.Input
		case *plan.Limit:
			n = x.Input
		default:
			n = nil
		}
	}
	return sqlerr.New(sqlerr.InvalidParameterValue, "WITH query %s has no aggregate to name with uids", name).
		WithHint("uids names the GROUP BY (or aggregate) that a WITH query computes; remove %s from uids.", name)
}

// BindView binds the query of CREATE (or ALTER) MATERIALIZED VIEW n
// against cat, with the operators its uids option names, and
// decorrelates its subqueries and LATERAL joins; a LIMIT of zero rows is
// an empty VALUES (emptyZeroLimits). CheckStreamable then refuses what a
// view cannot compute.
func BindView(cat Catalog, st *front.Statement, n *front.CreateMaterializedView) (plan.Node, error) {
	root, err := BindUnpopulatedView(cat, st, n)
	if err != nil {
		return nil, err
	}
	return emptyZeroLimits(root)
}

// BindUnpopulatedView binds the query of CREATE MATERIALIZED VIEW ...
// WITH NO DATA as BindView does but keeps a LIMIT of zero rows as a
// LIMIT: the view is only checked and stored now, and its REFRESH binds
// the query again with BindView.
func BindUnpopulatedView(cat Catalog, st *front.Statement, n *front.CreateMaterializedView) (plan.Node, error) {
	params, err := viewParams(st, n.Options)
	if err != nil {
		return nil, err
	}
	root, err := BindQuery(cat, viewQuery(st, n), params)
	if err != nil {
		return nil, err
	}
	if err := params.checkAllNamed(); err != nil {
		return nil, err
	}
	return decorrelateView(root)
}
