package catalog

// DefaultVNodes is the vnode count a view created now spreads its state
// keys over (DataflowVNodeKeys): 256, as RisingWave's default, a
// compromise between the cost of scanning many spans and how finely a
// view can later be split across servers. It is not a user setting yet.
const DefaultVNodes = 256

// StateVNodes is the number of vnodes the state keys of view d carry:
// 0 for a view of a format before DataflowVNodeKeys, whose keys carry
// none; else its VNodes, fixed at CREATE (DefaultVNodes when a
// descriptor built in memory, by a test or a probe, left it unset: every
// view stored so far has that count).
func (d *Descriptor) StateVNodes() int {
	if d.Dataflow < DataflowVNodeKeys {
		return 0
	}
	if d.VNodes == 0 {
		return DefaultVNodes
	}
	return int(d.VNodes)
}

// RowVNodes is the number of vnodes the keys of object d's rows carry:
// 0 for a table, and for a view of a format before
// DataflowViewRowVNodes; else StateVNodes.
func (d *Descriptor) RowVNodes() int {
	if d.Kind != KindView || d.Dataflow < DataflowViewRowVNodes {
		return 0
	}
	return d.StateVNodes()
}
