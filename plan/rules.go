package plan

import (
	"streamdb/catalog"
)

// Rule is one rewrite of a view's bound plan into the plan its dataflow is
// built from. A rule keeps the plan's output columns and its results; each
// lives in a file of its own (rule_*.go). Since is the dataflow format from
// which views use the rule: a view keeps the rewrites of the format it was
// created with, because the numbering and encoding of its state depend on
// them.
type Rule struct {
	Name  string
	Since catalog.FormatVersion
	Apply func(Node) Node
}

// StreamingRules are the rewrites of a view's plan, in the order they run.
// A new rule goes with a new dataflow format (catalog.Dataflow*) unless it
// leaves every operator's state as it was.
var StreamingRules = []Rule{
	pruneColumnsRule,
}

// RewriteStreaming applies the rules of views of format to root, in
// order. trace, if not nil, is called after each rule that ran, with the
// plan it made.
func RewriteStreaming(root Node, format catalog.FormatVersion, trace func(rule string, after Node)) Node {
	for _, r := range StreamingRules {
		if format < r.Since {
			continue
		}
		root = r.Apply(root)
		if trace != nil {
			trace(r.Name, root)
		}
	}
	return root
}
