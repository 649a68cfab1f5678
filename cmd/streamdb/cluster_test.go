package main

import (
	"strings"
	"testing"
)

func TestClusterFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		wantErr string
		group   string
		node    string
	}{
		{args: nil, node: "local"},
		{args: []string{"--node-name", "n7"}, node: "n7"},
		{args: []string{"--cluster", "c1", "--nats-url", "nats://x:4222", "--listen", "10.0.0.1:5433"}, group: "c1", node: "10.0.0.1:5433"},
		{args: []string{"--cluster", "c1", "--nats-url", "nats://x:4222", "--ha-advertise", "db1:5433"}, group: "c1", node: "db1:5433"},
		{args: []string{"--cluster", "c1", "--nats-url", "nats://x:4222", "--ha-group", "c1", "--node-name", "n1"}, group: "c1", node: "n1"},
		{args: []string{"--cluster", "c1"}, wantErr: "--cluster needs --nats-url"},
		{args: []string{"--cluster", "c1", "--nats-url", "nats://x:4222", "--ha-group", "g"}, wantErr: "drop --ha-group"},
		{args: []string{"--cluster", "a b", "--nats-url", "nats://x:4222"}, wantErr: "use 1 to 64 letters"},
	} {
		args := append([]string{"--data-dir", t.TempDir()}, c.args...)
		cfg, hf, err := parseFlags(args)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		err = clusterFlags(cfg, &hf)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: error %v, want one saying %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if hf.group != c.group || nodeName(cfg, hf) != c.node {
			t.Errorf("%q: group %q node %q, want %q and %q", c.args, hf.group, nodeName(cfg, hf), c.group, c.node)
		}
	}
}
