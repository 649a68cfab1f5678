package config

import (
	"path/filepath"
	"strings"
)

// Clustering names the server's cluster and its own name in it.
type Clustering struct {
	// Cluster is --cluster: the name of the cluster of servers this one
	// belongs to. Empty for a server alone, which is a cluster of one.
	Cluster string
	// NodeName is --node-name: this server's name in its cluster, unique
	// there. Empty for the default (the address clients reach it at).
	NodeName string
}

// LocalNode is the node name of a server without --cluster or
// --node-name: the one node of its cluster of one.
const LocalNode = "local"

// ClusterName is Cluster, or for a server without --cluster (a cluster
// of one) its data directory's base name made a valid cluster name
// (letters, digits, '-' and '_', at most 64), or "local".
func (c *Config) ClusterName() string {
	if c.Cluster != "" {
		return c.Cluster
	}
	base := filepath.Base(filepath.Clean(c.DataDir))
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
	if name == "" {
		return "local"
	}
	return name
}

// ClusterEnv names the cluster a server joins when no --cluster flag
// does (Config.Cluster). A server of a cluster records its committed
// epochs and checkpoints in the cluster's control log (cluster/control,
// docs/cluster.md); without one it is a cluster of one that records
// nothing.
const ClusterEnv = "STREAMDB_CLUSTER"

// loadClusterEnv takes Cluster from ClusterEnv unless a flag set it.
func (c *Config) loadClusterEnv(getenv func(string) string) {
	if c.Cluster == "" {
		c.Cluster = getenv(ClusterEnv)
	}
}
