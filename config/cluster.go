package config

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
