package cluster

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func groupsOf(ids ...uint32) []Group {
	var out []Group
	for _, id := range ids {
		out = append(out, Group{ID: id, Views: []string{fmt.Sprintf("v%d", id)}})
	}
	return out
}

func nodesOf(assigned map[uint32]Assignment) map[uint32]string {
	out := map[uint32]string{}
	for id, a := range assigned {
		out[id] = a.Node
	}
	return out
}

func TestAssignKeepsLiveAndPlacesByLoad(t *testing.T) {
	live := []NodeLoad{{Node: "n1", StateBytes: 900}, {Node: "n2", StateBytes: 100}, {Node: "n3", StateBytes: 100, RowsPerSec: 50}}
	prev := map[uint32]Assignment{1: {Node: "n1"}, 2: {Node: "n3"}}
	got := nodesOf(Assign(groupsOf(1, 2, 3), live, prev))
	// 1 and 2 stay (their nodes are alive, however loaded); 3 is new and
	// goes to n2: n2 and n3 hold as many bytes, n2 reads fewer rows/s.
	want := map[uint32]string{1: "n1", 2: "n3", 3: "n2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Assign = %v, want %v", got, want)
	}
}

func TestAssignSpreadsADeadNodesGroups(t *testing.T) {
	live := []NodeLoad{{Node: "n1"}, {Node: "n3"}}
	prev := map[uint32]Assignment{}
	for id := uint32(1); id <= 7; id++ {
		prev[id] = Assignment{Node: "n2"} // n2 is gone
	}
	prev[8] = Assignment{Node: "n1"}
	got := nodesOf(Assign(groupsOf(1, 2, 3, 4, 5, 6, 7, 8), live, prev))
	count := map[string]int{}
	for id, n := range got {
		if id != 8 {
			count[n]++
		}
	}
	if got[8] != "n1" || count["n1"]+count["n3"] != 7 || count["n1"] < 3 || count["n3"] < 3 {
		t.Fatalf("Assign = %v: the dead node's 7 groups should split 3/4 over n1 and n3, group 8 stay on n1", got)
	}
}

func TestAssignWeighsGroups(t *testing.T) {
	groups := []Group{{ID: 1, StateBytes: 1000}, {ID: 2, StateBytes: 600}, {ID: 3, StateBytes: 500}, {ID: 4, StateBytes: 100}}
	got := nodesOf(Assign(groups, []NodeLoad{{Node: "a"}, {Node: "b"}}, nil))
	// Largest first onto the lighter node: 1→a, 2→b, 3→b (600<1000), 4→a (1000<1100).
	want := map[uint32]string{1: "a", 2: "b", 3: "b", 4: "a"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Assign = %v, want %v", got, want)
	}
}

func TestAssignWithoutLiveNodes(t *testing.T) {
	got := Assign(groupsOf(1, 2), nil, map[uint32]Assignment{1: {Node: "gone"}})
	if len(got) != 0 {
		t.Fatalf("Assign with no live node = %v, want nothing placed", got)
	}
}

// Random graphs of groups, nodes and earlier maps: every group lands on
// a live node, a group whose node lives never moves, the answer does not
// depend on the order of the inputs, and groups of unknown load spread
// over equally loaded nodes within one of each other.
func TestAssignProperties(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (set it in the test to replay)", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for round := range 500 {
		nNodes := 1 + r.IntN(6)
		var live []NodeLoad
		alive := map[string]bool{}
		for i := range nNodes {
			if r.IntN(3) > 0 || i == 0 {
				n := fmt.Sprintf("n%d", i)
				live = append(live, NodeLoad{Node: n})
				alive[n] = true
			}
		}
		groups := groupsOf()
		prev := map[uint32]Assignment{}
		for id := range uint32(1 + r.IntN(30)) {
			groups = append(groups, Group{ID: id})
			if r.IntN(2) == 0 {
				prev[id] = Assignment{Node: fmt.Sprintf("n%d", r.IntN(nNodes))}
			}
		}
		got := Assign(groups, live, prev)
		shuffled := append([]Group(nil), groups...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		liveShuffled := append([]NodeLoad(nil), live...)
		r.Shuffle(len(liveShuffled), func(i, j int) { liveShuffled[i], liveShuffled[j] = liveShuffled[j], liveShuffled[i] })
		if again := Assign(shuffled, liveShuffled, prev); !reflect.DeepEqual(nodesOf(again), nodesOf(got)) {
			t.Fatalf("seed %d round %d: Assign depends on input order: %v vs %v", seed, round, nodesOf(got), nodesOf(again))
		}
		placed := map[string]int{}
		for _, g := range groups {
			a, ok := got[g.ID]
			if !ok || !alive[a.Node] {
				t.Fatalf("seed %d round %d: group %d placed on %q, not a live node of %v", seed, round, g.ID, a.Node, live)
			}
			if p, had := prev[g.ID]; had && alive[p.Node] && a.Node != p.Node {
				t.Fatalf("seed %d round %d: group %d moved from live %s to %s", seed, round, g.ID, p.Node, a.Node)
			}
			if p, had := prev[g.ID]; !had || !alive[p.Node] {
				placed[a.Node]++
			}
		}
		lo, hi := len(groups), 0
		for _, n := range live {
			lo, hi = min(lo, placed[n.Node]), max(hi, placed[n.Node])
		}
		if hi-lo > 1 {
			t.Fatalf("seed %d round %d: newly placed groups per node %v: spread unevenly over %v", seed, round, placed, live)
		}
	}
}
