package storage

import "encoding/binary"

// State keys of a view of format catalog.DataflowVNodeKeys on carry a
// vnode right after their table's prefix (a join's, of format
// catalog.DataflowJoinVNodes on, after the table's prefix and its side):
//
//	StatePrefix(obj, table) | vnode (VNodeLen bytes, big-endian) | key
//
// The vnode is VNodeOf the key's distribution part (an aggregate's group
// key), so the keys of one range of vnodes of one table lie in one span
// (VNodeSpan), which Pebble can export and excise as a whole.

// VNodeLen is the width of a vnode in a state key.
const VNodeLen = 2

// VNodeOf is the vnode of distribution key dist among count vnodes:
// FNV-1a (32 bits) of its bytes, modulo count. Stored keys depend on it,
// so it never changes.
func VNodeOf[K ~string | ~[]byte](dist K, count int) uint16 {
	h := uint32(2166136261)
	for i := 0; i < len(dist); i++ {
		h ^= uint32(dist[i])
		h *= 16777619
	}
	return uint16(h % uint32(count))
}

// AppendVNode appends vnode vn to a state key being built.
func AppendVNode(buf []byte, vn uint16) []byte {
	return binary.BigEndian.AppendUint16(buf, vn)
}

// VNodeSpan is the span of keys of vnodes first to last (inclusive) of
// state table table of object obj: start inclusive, end exclusive.
func VNodeSpan(obj uint32, table uint16, first, last uint16) (start, end []byte) {
	return VNodeSpanIn(StatePrefix(obj, table), first, last)
}

// VNodeSpanIn is VNodeSpan for keys whose vnode follows prefix p: a
// table's prefix, or a longer one (a join's state puts its side first:
// StatePrefix | side | vnode | key, one span per side).
func VNodeSpanIn(p []byte, first, last uint16) (start, end []byte) {
	start = AppendVNode(append([]byte(nil), p...), first)
	if last == 0xffff {
		return start, PrefixEnd(p)
	}
	return start, AppendVNode(append([]byte(nil), p...), last+1)
}
