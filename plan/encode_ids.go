package plan

import (
	"encoding/json"
	"fmt"
	"strings"
)

// OperatorIDs renders the operator ids of a plan record, one node per
// line, inputs indented below their node, as EXPLAIN shows a plan: a
// node recorded twice shows its id again with "(shared)".
func OperatorIDs(data []byte) (string, error) {
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return "", fmt.Errorf("plan record: %w", err)
	}
	var sb strings.Builder
	var byPos []*nodeRec
	var walk func(r *nodeRec, depth int)
	walk = func(r *nodeRec, depth int) {
		sb.WriteString(strings.Repeat("  ", depth))
		if depth > 0 {
			sb.WriteString("└─ ")
		}
		if r.Ref != nil {
			if *r.Ref >= 0 && *r.Ref < len(byPos) {
				sb.WriteString(byPos[*r.Ref].ID + " (shared)\n")
			} else {
				sb.WriteString("(bad reference)\n")
			}
			return
		}
		byPos = append(byPos, r)
		sb.WriteString(r.ID + "\n")
		for _, in := range r.In {
			walk(in, depth+1)
		}
	}
	if rec.Root != nil {
		walk(rec.Root, 0)
	}
	return sb.String(), nil
}

// NodeIDs returns the operator id of every node of root, as its plan
// record would give them (see operatorID). An error says the plan cannot
// be recorded, and so has no ids.
func NodeIDs(root Node) (map[Node]string, error) {
	e := newEncoder()
	if _, err := e.node(root); err != nil {
		return nil, err
	}
	return e.byNode, nil
}
