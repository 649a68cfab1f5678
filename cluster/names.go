package cluster

import (
	"fmt"
	"path/filepath"
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

// LocalName is the name of the cluster of one that a server without
// --cluster is: its data directory's base name made a valid name, or
// "local".
func LocalName(dataDir string) string {
	base := filepath.Base(filepath.Clean(dataDir))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" || ValidateName(name) != nil {
		return "local"
	}
	return name
}

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
