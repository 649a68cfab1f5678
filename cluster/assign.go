package cluster

import (
	"slices"
	"strings"
)

// An Assignment is where one group runs.
type Assignment struct {
	Node  string   `json:"node"`
	Views []string `json:"views"`
}

// NodeLoad is a live node's load as its heartbeat reports it.
type NodeLoad struct {
	Node       string
	StateBytes int64
	RowsPerSec float64
}

// Assign places groups on the live nodes and returns the new map, group
// ID to assignment. A group whose node in prev is live stays there (no
// churn: moving a group costs a restore). Every other group, new or left
// by a node that is gone, goes to the least loaded node, judged by state
// bytes first, then rows/s, then the number of groups this call placed
// there, then name; the group's own load (when known) is added to that
// node before the next group is placed, largest groups first, so a dead
// node's groups spread over the survivors. With no live node the groups
// it cannot place are left out. Assign is deterministic.
func Assign(groups []Group, live []NodeLoad, prev map[uint32]Assignment) map[uint32]Assignment {
	type load struct {
		NodeLoad
		placed int
	}
	loads := make([]*load, len(live))
	alive := make(map[string]bool, len(live))
	for i, n := range live {
		loads[i] = &load{NodeLoad: n}
		alive[n.Node] = true
	}
	out := make(map[uint32]Assignment, len(groups))
	var unplaced []Group
	for _, g := range groups {
		if a, ok := prev[g.ID]; ok && alive[a.Node] {
			out[g.ID] = Assignment{Node: a.Node, Views: g.Views}
			continue
		}
		unplaced = append(unplaced, g)
	}
	if len(loads) == 0 {
		return out
	}
	slices.SortStableFunc(unplaced, func(a, b Group) int {
		if c := int64Cmp(b.StateBytes, a.StateBytes); c != 0 {
			return c
		}
		if a.RowsPerSec != b.RowsPerSec {
			if a.RowsPerSec > b.RowsPerSec {
				return -1
			}
			return 1
		}
		return int64Cmp(int64(a.ID), int64(b.ID))
	})
	lighter := func(a, b *load) bool {
		if a.StateBytes != b.StateBytes {
			return a.StateBytes < b.StateBytes
		}
		if a.RowsPerSec != b.RowsPerSec {
			return a.RowsPerSec < b.RowsPerSec
		}
		if a.placed != b.placed {
			return a.placed < b.placed
		}
		return strings.Compare(a.Node, b.Node) < 0
	}
	for _, g := range unplaced {
		best := loads[0]
		for _, l := range loads[1:] {
			if lighter(l, best) {
				best = l
			}
		}
		best.StateBytes += g.StateBytes
		best.RowsPerSec += g.RowsPerSec
		best.placed++
		out[g.ID] = Assignment{Node: best.Node, Views: g.Views}
	}
	return out
}
