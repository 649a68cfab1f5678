package config

import "testing"

func TestClusterName(t *testing.T) {
	for _, c := range []struct{ cluster, dataDir, want string }{
		{"c1", "/var/lib/x", "c1"},
		{"", "/var/lib/streamdb-data/", "streamdb-data"},
		{"", "./my data.d", "my_data_d"},
		{"", "/", "local"},
		{"", ".", "local"},
	} {
		cfg := Defaults()
		cfg.Cluster, cfg.DataDir = c.cluster, c.dataDir
		if got := cfg.ClusterName(); got != c.want {
			t.Errorf("ClusterName(--cluster %q, --data-dir %q) = %q, want %q", c.cluster, c.dataDir, got, c.want)
		}
	}
}

// The cluster name comes from ClusterEnv unless a flag set it first.
func TestClusterFromEnv(t *testing.T) {
	env := func(k string) string {
		if k == ClusterEnv {
			return "east"
		}
		return ""
	}
	c := Defaults()
	if err := c.LoadEnv(env); err != nil || c.Cluster != "east" {
		t.Fatalf("LoadEnv: cluster %q, %v; want east", c.Cluster, err)
	}
	c = Defaults()
	c.Cluster = "west" // --cluster
	if err := c.LoadEnv(env); err != nil || c.Cluster != "west" {
		t.Fatalf("LoadEnv after the flag: cluster %q, %v; want west", c.Cluster, err)
	}
	c = Defaults()
	if err := c.LoadEnv(func(string) string { return "" }); err != nil || c.Cluster != "" {
		t.Fatalf("LoadEnv without it: cluster %q, %v; want none", c.Cluster, err)
	}
}
