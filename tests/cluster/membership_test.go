package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// The lease and node entries expire 3 s after a member's last renewal;
// members renew every 500 ms.
var memberArgs = []string{"--ha-lease-ttl", "3s", "--ha-renew-interval", "500ms", "--ha-replicas", "3"}

const nodeTTL = 3 * time.Second

// node is one row of streamdb_nodes.
type node struct {
	name, state, role, views string
	fresh                    bool // heartbeat_age under one second
}

func nodes(t *testing.T, conn *pgx.Conn) map[string]node {
	t.Helper()
	_, rows, err := testutil.QueryText(conn, 30*time.Second,
		"SELECT node, state, role, view_names, heartbeat_age < interval '1 second' FROM streamdb_nodes", "NULL")
	if err != nil {
		t.Fatalf("streamdb_nodes: %v", err)
	}
	out := map[string]node{}
	for _, r := range rows {
		out[r[0]] = node{name: r[0], state: r[1], role: r[2], views: r[3], fresh: r[4] == "t"}
	}
	return out
}

// viewNodes is SHOW MATERIALIZED VIEWS' node column by view.
func viewNodes(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	cols, rows, err := testutil.QueryText(conn, 30*time.Second, "SHOW MATERIALIZED VIEWS", "NULL")
	if err != nil {
		t.Fatalf("SHOW MATERIALIZED VIEWS: %v", err)
	}
	at := slices.Index(cols, "node")
	if at < 0 {
		t.Fatalf("SHOW MATERIALIZED VIEWS has no node column: %q", cols)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r[0]] = r[at]
	}
	return out
}

// placedOn waits until the placement map puts both view-groups on node
// alone and returns its version.
func placedOn(t *testing.T, js jetstream.JetStream, node string, after uint64) uint64 {
	t.Helper()
	var version uint64
	testutil.Poll(t, 30*time.Second, "the placement map to name "+node+" only", func() error {
		v, groups := testutil.PlacementMap(t, js, "c1")
		if len(groups) != 2 || v <= after {
			return fmt.Errorf("version %d, groups %v: want 2 groups after version %d", v, groups, after)
		}
		for g, n := range groups {
			if n != node {
				return fmt.Errorf("group %s on %s", g, n)
			}
		}
		version = v
		return nil
	})
	return version
}

func TestClusterMembersAndPlacement(t *testing.T) {
	began := time.Now()
	natsCluster := testutil.StartNATSCluster(t, 3)
	url := natsCluster.URL()
	_, js := testutil.JetStream(t, url)
	var servers []*testutil.Server
	for range 3 {
		servers = append(servers, testutil.StartClusterMember(t, url, "c1", memberArgs...))
	}
	conn, coord := testutil.ConnectCoordinator(t, 60*time.Second, servers...)
	testutil.MustExec(t, conn,
		"CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = 'cluster.ev')",
		"CREATE MATERIALIZED VIEW per_k AS SELECT k, sum(v) AS s FROM ev GROUP BY k",
		"CREATE MATERIALIZED VIEW big_k AS SELECT k FROM per_k WHERE s > 10",
		"CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n FROM ev")

	// Every member is listed with a fresh heartbeat; the coordinator
	// runs the views, the others wait as standbys.
	testutil.Poll(t, 30*time.Second, "streamdb_nodes to list the three members", func() error {
		got := nodes(t, conn)
		if len(got) != 3 {
			return fmt.Errorf("nodes %v", got)
		}
		for _, s := range servers {
			n, ok := got[s.Addr]
			want := node{name: s.Addr, state: "active", role: "standby", fresh: true}
			if s == coord {
				want.role, want.views = "coordinator", "big_k, per_k, total"
			}
			if !ok || n != want {
				return fmt.Errorf("node %s is %+v, want %+v", s.Addr, n, want)
			}
		}
		return nil
	})
	for v, n := range viewNodes(t, conn) {
		if n != coord.Addr {
			t.Errorf("SHOW MATERIALIZED VIEWS: %s runs on %q, want the coordinator %s", v, n, coord.Addr)
		}
	}
	version := placedOn(t, js, coord.Addr, 0)

	// A member killed with -9 turns stale, then its entry expires.
	victim := servers[0]
	if victim == coord {
		victim = servers[1]
	}
	victim.Kill(t)
	killed := time.Now()
	testutil.Poll(t, 10*time.Second, "the killed member to show stale", func() error {
		if n := nodes(t, conn)[victim.Addr]; n.state != "stale" {
			return fmt.Errorf("killed member is %+v", n)
		}
		return nil
	})
	stale := time.Since(killed)
	testutil.Poll(t, nodeTTL+10*time.Second, "the killed member to leave streamdb_nodes", func() error {
		if n, ok := nodes(t, conn)[victim.Addr]; ok {
			return fmt.Errorf("killed member still listed: %+v", n)
		}
		return nil
	})
	t.Logf("killed member stale after %s, gone after %s (entry TTL %s)", stale.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond), nodeTTL)
	if got := nodes(t, conn); len(got) != 2 {
		t.Fatalf("after the kill, streamdb_nodes lists %v, want the coordinator and one standby", got)
	}

	// The coordinator killed: the standby left takes the lease, runs the
	// views and rewrites the map onto itself.
	var rest *testutil.Server
	for _, s := range servers {
		if s != coord && s != victim {
			rest = s
		}
	}
	coord.Kill(t)
	conn2, coord2 := testutil.ConnectCoordinator(t, 60*time.Second, rest)
	placedOn(t, js, coord2.Addr, version)
	for v, n := range viewNodes(t, conn2) {
		if n != coord2.Addr {
			t.Errorf("after the takeover, SHOW MATERIALIZED VIEWS: %s runs on %q, want %s", v, n, coord2.Addr)
		}
	}
	testutil.Poll(t, nodeTTL+10*time.Second, "streamdb_nodes on the new coordinator to list itself only", func() error {
		got := nodes(t, conn2)
		if n := got[coord2.Addr]; len(got) != 1 || n.role != "coordinator" || n.state != "active" || !strings.Contains(n.views, "per_k") {
			return fmt.Errorf("nodes %v", got)
		}
		return nil
	})
	t.Logf("test took %s", time.Since(began).Round(time.Millisecond))
}
