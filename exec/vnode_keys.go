package exec

import (
	"streamdb/catalog"
	"streamdb/storage"
)

// State tables whose keys carry a vnode (catalog.DataflowVNodeKeys on):
// an operator that keys a table this way knows its view's vnode count,
// vnodes (0: its keys carry none), and builds every key of the table
// through appendVNodeKey, reads through vnodeSkip.

// appendVNodeKey appends to buf the state key of distribution key dist
// in the table under prefix: prefix, the vnode of dist among vnodes
// (none when vnodes is 0), then dist. A caller appends what follows
// dist in the key.
func appendVNodeKey(buf, prefix []byte, vnodes int, dist string) []byte {
	buf = append(buf, prefix...)
	if vnodes > 0 {
		buf = storage.AppendVNode(buf, storage.VNodeOf(dist, vnodes))
	}
	return append(buf, dist...)
}

// vnodeOf is the vnode of distribution key dist among vnodes (0 when
// the keys carry none).
func vnodeOf(dist string, vnodes int) uint16 {
	if vnodes == 0 {
		return 0
	}
	return storage.VNodeOf(dist, vnodes)
}

// vnodeSkip is the width of the vnode after a table's prefix in its
// keys: a key's own part starts at len(prefix)+vnodeSkip(vnodes).
func vnodeSkip(vnodes int) int {
	if vnodes == 0 {
		return 0
	}
	return storage.VNodeLen
}

// defaultVNodes is the vnode count of the state tables of a view of
// format dataflow whose descriptor is not at hand (catalog.StateVNodes).
func defaultVNodes(dataflow catalog.FormatVersion) int {
	return (&catalog.Descriptor{Dataflow: dataflow}).StateVNodes()
}
