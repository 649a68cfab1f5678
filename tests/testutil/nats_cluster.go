package testutil

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// NATSCluster is a JetStream cluster of NATS servers inside the test
// process, on free ports of 127.0.0.1, each with its own store.
type NATSCluster struct {
	Servers []*natsserver.Server
}

// StartNATSCluster starts n clustered NATS servers with JetStream and
// waits until JetStream has a leader. t.Cleanup shuts them down.
func StartNATSCluster(t testing.TB, n int) *NATSCluster {
	t.Helper()
	ports := FreePorts(t, n)
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", Host: hostPort(p)})
	}
	c := &NATSCluster{}
	for i := 0; i < n; i++ {
		opts := natsOptions(t)
		opts.ServerName = fmt.Sprintf("n%d", i+1)
		opts.Cluster = natsserver.ClusterOpts{Name: "testcluster", Host: "127.0.0.1", Port: ports[i]}
		opts.Routes = routes
		c.Servers = append(c.Servers, runNATS(t, opts))
	}
	for _, s := range c.Servers {
		if !s.ReadyForConnections(30 * time.Second) {
			t.Fatalf("testutil: NATS server %s not ready within 30s", s.Name())
		}
	}
	Poll(t, 60*time.Second, "the NATS cluster's JetStream to elect a leader", func() error {
		for _, s := range c.Servers {
			if s.JetStreamIsLeader() {
				return nil
			}
		}
		return fmt.Errorf("no JetStream meta leader yet")
	})
	return c
}

// URL lists every running server's client URL, as a client of the
// cluster is given them.
func (c *NATSCluster) URL() string {
	var urls []string
	for _, s := range c.Servers {
		if s.Running() {
			urls = append(urls, s.ClientURL())
		}
	}
	return strings.Join(urls, ",")
}
