package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/cluster"
	"streamdb/config"
	"streamdb/ha"
	"streamdb/metrics"
	"streamdb/sql"
)

// In --cluster mode the cluster's lease is an --ha-group lease named
// after the cluster: its holder is the coordinator, which runs every
// view (as an active server does) and writes the placement map; the
// other members forward every session to it (cluster_forward.go) and
// wait to take over. Every member registers in the
// cluster's nodes bucket and heartbeats, waiting or serving.

// clusterFlags checks --cluster and --node-name and makes the cluster's
// lease the group's (--ha-group, when given too, must name the same).
func clusterFlags(cfg *config.Config, hf *haFlags) error {
	if cfg.Cluster == "" {
		return nil // a server alone: --node-name, if given, names its node
	}
	if err := cluster.ValidateName(cfg.Cluster); err != nil {
		return err
	}
	if cfg.NATSURL == "" {
		return fmt.Errorf("--cluster needs --nats-url: the servers of a cluster share a NATS server or cluster")
	}
	if hf.group != "" && hf.group != cfg.Cluster {
		return fmt.Errorf("--ha-group %q and --cluster %q differ: in a cluster the coordinator's lease is the cluster's; drop --ha-group", hf.group, cfg.Cluster)
	}
	hf.group = cfg.Cluster
	return nil
}

// nodeName is this server's name in its cluster: --node-name, else the
// address clients reach it at in a cluster, else "local" (a server
// alone, the one node of its cluster of one).
func nodeName(cfg *config.Config, hf haFlags) string {
	switch {
	case cfg.NodeName != "":
		return cfg.NodeName
	case cfg.Cluster == "":
		return config.LocalNode
	}
	return hf.clientAddr(cfg)
}

// clusterMember is this server's part in its --cluster.
type clusterMember struct {
	node       string
	nc         *nats.Conn
	membership *cluster.Membership
	log        *slog.Logger
	stop       chan struct{} // closed by leave: the placement writer ends
}

// clusterJoin connects to NATS and starts this server's heartbeat in the
// cluster's nodes bucket; status says what the server is doing at each
// heartbeat.
func clusterJoin(ctx context.Context, cfg *config.Config, hf haFlags, status func() (string, string), log *slog.Logger) (*clusterMember, error) {
	nc, js, err := connectJetStream(cfg.NATSURL, "streamdb cluster "+cfg.Cluster)
	if err != nil {
		return nil, err
	}
	addr := hf.clientAddr(cfg)
	node := nodeName(cfg, hf)
	ttl, renew := hf.ttl, hf.renew
	if ttl == 0 {
		ttl = ha.DefaultTTL
	}
	if renew == 0 {
		renew = ha.DefaultRenew
	}
	var m *cluster.Membership
	err = retry(ctx, renew, func() bool { return true }, log, "open the cluster's nodes bucket", func() error {
		m, err = cluster.Join(ctx, js, cluster.MemberOptions{Cluster: cfg.Cluster, Node: node, Addr: addr, Holder: holderID(),
			TTL: ttl, Heartbeat: renew, Replicas: hf.replicas, Log: log, Status: status})
		return err
	})
	if err != nil {
		nc.Close()
		return nil, err
	}
	log.Info("joined the cluster", "cluster", cfg.Cluster, "node", node, "address", addr)
	return &clusterMember{node: node, nc: nc, membership: m, log: log, stop: make(chan struct{})}, nil
}

// serve reports the engine's load in the heartbeats and, every interval
// while this server holds the cluster's lease, writes the placement map:
// every view-group on this server, the only one that runs views in this
// step of scale-out.
func (c *clusterMember) serve(engine *sql.Engine, lease *ha.Lease, placement *cluster.PlacementStore, interval time.Duration) {
	c.membership.SetLoad(func() cluster.Load {
		views, bytes := engine.ClusterLoad()
		return cluster.Load{Views: views, StateBytes: bytes, RowsIn: metrics.TotalViewRowsIn()}
	})
	engine.SetCluster(clusterView{c.membership})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		warned := false
		for {
			err := c.place(engine, lease, placement, interval)
			if err != nil && !warned {
				c.log.Warn("could not write the cluster's placement map; retrying", "err", err)
			}
			warned = err != nil
			select {
			case <-c.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// place writes the placement map if the view-groups changed. The lease
// is checked first; the map's compare-and-set keeps a writer that read
// an older map from overwriting a newer one.
func (c *clusterMember) place(engine *sql.Engine, lease *ha.Lease, placement *cluster.PlacementStore, timeout time.Duration) error {
	if err := lease.Check(); err != nil {
		return err
	}
	groups := cluster.Groups(engine.ViewGraph())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	self := []cluster.NodeLoad{{Node: c.node}}
	_, err := placement.Update(ctx, c.node, func(cur cluster.Placement) map[uint32]cluster.Assignment {
		return cluster.Assign(groups, self, cur.Groups)
	})
	return err
}

// leave stops the placement writer and the heartbeat and deletes this
// server's entry (a clean shutdown).
func (c *clusterMember) leave() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.membership.Leave(ctx); err != nil {
		c.log.Warn("leaving the cluster", "err", err)
	}
	c.nc.Close()
}

// openPlacement opens the cluster's placement bucket on the member's
// connection.
func (c *clusterMember) openPlacement(ctx context.Context, cfg *config.Config, hf haFlags) (*cluster.PlacementStore, error) {
	js, err := jetstream.New(c.nc)
	if err != nil {
		return nil, err
	}
	return cluster.OpenPlacement(ctx, js, cfg.Cluster, hf.replicas)
}

// clusterView shows the engine its cluster's members.
type clusterView struct{ m *cluster.Membership }

func (v clusterView) Self() string { return v.m.Node() }

func (v clusterView) Members(ctx context.Context) ([]sql.ClusterNode, error) {
	ms, err := v.m.Members(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sql.ClusterNode, len(ms))
	for i, m := range ms {
		out[i] = sql.ClusterNode{Node: m.Node, Address: m.Addr, State: m.State, Role: m.Role, Views: m.Views,
			StateBytes: m.StateBytes, RowsPerSec: m.RowsPerSec, Started: m.Started, HeartbeatAge: m.HeartbeatAge, AgeKnown: m.Known}
	}
	return out, nil
}

// localView is the cluster of one of a server without --cluster.
type localView struct {
	node, addr string
	started    time.Time
	engine     *sql.Engine
}

func (v localView) Self() string { return v.node }

func (v localView) Members(context.Context) ([]sql.ClusterNode, error) {
	views, bytes := v.engine.ClusterLoad()
	return []sql.ClusterNode{{Node: v.node, Address: v.addr, State: cluster.StateActive, Role: cluster.RoleCoordinator,
		Views: views, StateBytes: bytes, Started: v.started, AgeKnown: true}}, nil
}

// memberStatus is what a member's heartbeat says it is doing, from its
// --ha-group phase and whether its engine serves.
func memberStatus(hs *haState, serving *atomic.Bool) func() (string, string) {
	return func() (string, string) {
		switch hs.phase.Load() {
		case phaseStandby:
			return cluster.StateActive, cluster.RoleStandby
		case phaseTakeover:
			return cluster.StateJoining, cluster.RoleCoordinator
		case phaseStepDown:
			return cluster.StateLeaving, cluster.RoleCoordinator
		}
		if serving.Load() {
			return cluster.StateActive, cluster.RoleCoordinator
		}
		return cluster.StateJoining, cluster.RoleStandby
	}
}

// startServing makes this member, which holds the cluster's lease and
// has opened its engine, the coordinator: its heartbeat reports the
// engine's load and it writes the placement map.
func (c *clusterMember) startServing(cfg *config.Config, hf haFlags, engine *sql.Engine, lease *ha.Lease) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var placement *cluster.PlacementStore
	err := retry(ctx, hf.renew, func() bool { return lease.Check() == nil }, c.log, "open the cluster's placement bucket", func() error {
		var err error
		placement, err = c.openPlacement(ctx, cfg, hf)
		return err
	})
	if err != nil {
		return err
	}
	c.serve(engine, lease, placement, hf.renew)
	return nil
}
