package sql

import (
	"context"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/types"
)

// sysTableNodes is the system table of the cluster's servers.
const sysTableNodes = "streamdb_nodes"

// ClusterNode is one server of the cluster as streamdb_nodes shows it.
type ClusterNode struct {
	Node, Address string
	// State is joining, active, leaving, or stale (a heartbeat older
	// than two heartbeat intervals); Role is coordinator or standby.
	State, Role string
	Views       []string
	StateBytes  int64
	RowsPerSec  float64
	Started     time.Time
	// HeartbeatAge is how old the server's last heartbeat is (by the
	// NATS server's clock); AgeKnown is false when it cannot be judged.
	HeartbeatAge time.Duration
	AgeKnown     bool
}

// ClusterMembers is what the engine reads of its cluster (cmd/streamdb
// adapts package cluster to it, so that sql speaks no NATS).
type ClusterMembers interface {
	// Self is this server's node name: where its views run.
	Self() string
	// Members lists the cluster's servers.
	Members(ctx context.Context) ([]ClusterNode, error)
}

type clusterMembers struct{ ClusterMembers }

// SetCluster tells the engine its cluster. A server never told is
// alone: the node "local", the only row of streamdb_nodes.
func (e *Engine) SetCluster(c ClusterMembers) { e.cluster.Store(&clusterMembers{c}) }

// nodeName is this server's node name.
func (e *Engine) nodeName() string {
	if c := e.cluster.Load(); c != nil {
		return c.Self()
	}
	return "local"
}

// ClusterLoad is what this server reports of its work in its heartbeat:
// the materialized views it runs and Pebble's estimate of the bytes on
// disk of their and the tables' state (cheap: it reads no keys; state
// still only in the memtable counts 0).
func (e *Engine) ClusterLoad() (views []string, stateBytes int64) {
	for _, kind := range []catalog.ObjectKind{catalog.KindView, catalog.KindTable} {
		for _, obj := range e.objects(kind) {
			if kind == catalog.KindView {
				views = append(views, obj.Name)
			}
			stateBytes += e.state.ObjectBytes(obj.ID)
		}
	}
	return views, stateBytes
}

// ViewGraph returns the descriptors view-groups are computed from: the
// materialized views, populated or not, and the plain views between
// them.
func (e *Engine) ViewGraph() []*catalog.Descriptor {
	var out []*catalog.Descriptor
	for _, kind := range []catalog.ObjectKind{catalog.KindView, catalog.KindUnpopulatedView, catalog.KindPlainView} {
		out = append(out, e.objects(kind)...)
	}
	return out
}

var nodeColumns = []types.Column{
	{Name: "node", Type: types.Text},
	{Name: "address", Type: types.Text},
	{Name: "state", Type: types.Text},
	{Name: "role", Type: types.Text},
	{Name: "views", Type: types.Int8},
	{Name: "view_names", Type: types.Text},
	{Name: "state_bytes", Type: types.Int8},
	{Name: "rows_per_second", Type: types.Float8},
	{Name: "started_at", Type: types.Timestamptz},
	{Name: "heartbeat_age", Type: types.Interval},
}

// nodesTable is the system table streamdb_nodes. A server alone shows
// itself, with no heartbeat (age 0).
func (e *Engine) nodesTable() (*catalog.Descriptor, func() []types.Row) {
	d := &catalog.Descriptor{Name: sysTableNodes, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(nodeColumns)}
	return d, func() []types.Row {
		c := e.cluster.Load()
		if c == nil {
			views, bytes := e.ClusterLoad()
			return []types.Row{nodeRow(ClusterNode{Node: e.nodeName(), State: "active", Role: "coordinator",
				Views: views, StateBytes: bytes, AgeKnown: true})}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		members, err := c.Members(ctx)
		if err != nil {
			// A system table's rows cannot fail: this server's own row
			// says the others are unknown, and the log says why.
			e.log.Warn("streamdb_nodes: could not read the cluster's members", "err", err)
			return []types.Row{nodeRow(ClusterNode{Node: c.Self(), State: "unknown", Role: "coordinator"})}
		}
		rows := make([]types.Row, len(members))
		for i, m := range members {
			rows[i] = nodeRow(m)
		}
		return rows
	}
}

func nodeRow(n ClusterNode) types.Row {
	started, age, addr := types.Null, types.Null, types.Null
	if !n.Started.IsZero() {
		started = types.NewTime(n.Started)
	}
	if n.AgeKnown {
		age = types.NewInterval(0, 0, n.HeartbeatAge.Microseconds())
	}
	if n.Address != "" {
		addr = types.NewString(n.Address)
	}
	return types.Row{types.NewString(n.Node), addr, types.NewString(n.State), types.NewString(n.Role),
		types.NewInt(int64(len(n.Views))), types.NewString(strings.Join(n.Views, ", ")),
		types.NewInt(n.StateBytes), types.NewFloat(n.RowsPerSec), started, age}
}
