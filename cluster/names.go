package cluster

import (
	"fmt"
	"regexp"
	"strings"
)

var clusterName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidateName checks a --cluster name: it becomes part of bucket names.
func ValidateName(name string) error {
	if !clusterName.MatchString(name) {
		return fmt.Errorf("--cluster %q: use 1 to 64 letters, digits, '-' or '_'", name)
	}
	return nil
}

// NodesBucket is the key-value bucket of cluster's members.
func NodesBucket(cluster string) string { return "SDB_NODES_" + cluster }

// PlacementBucket is the key-value bucket of cluster's placement map.
func PlacementBucket(cluster string) string { return "SDB_PLACEMENT_" + cluster }

// nodeKey is a member's key in the nodes bucket. KV keys allow
// [-/_=.a-zA-Z0-9]; a node name is host:port, so other bytes are
// written as _XX (hex).
func nodeKey(node string) string {
	var b strings.Builder
	for i := 0; i < len(node); i++ {
		c := node[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "_%02X", c)
		}
	}
	return b.String()
}
