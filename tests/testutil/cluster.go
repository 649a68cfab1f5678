package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"
)

// StartClusterMember starts one streamdb server of --cluster name on the
// NATS at url. It may come up as the coordinator or as a member that
// forwards sessions to the coordinator (refusing with 57P03 while none
// is known).
func StartClusterMember(t testing.TB, url, name string, extra ...string) *Server {
	t.Helper()
	args := append([]string{"--cluster", name}, extra...)
	return StartServer(t, ServerOptions{NATSURL: url, Standby: true, Args: args})
}

// ConnectCoordinator polls the servers until the cluster's coordinator
// accepts a session directly (a server whose /readyz answers 200: the
// other members answer 503 while they forward sessions) and returns that
// session and server. The session closes at the test's end.
func ConnectCoordinator(t testing.TB, timeout time.Duration, servers ...*Server) (*pgx.Conn, *Server) {
	t.Helper()
	var conn *pgx.Conn
	var at *Server
	Poll(t, timeout, "a session with the cluster's coordinator", func() error {
		var errs []error
		for _, s := range servers {
			if !s.Running() {
				continue
			}
			if err := s.readyz(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s.Addr, err))
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c, err := pgx.Connect(ctx, s.DSN())
			if err == nil {
				_, err = c.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol)
				if err != nil {
					c.Close(ctx)
				}
			}
			cancel()
			if err == nil {
				conn, at = c, s
				return nil
			}
			errs = append(errs, fmt.Errorf("%s: %w", s.Addr, err))
		}
		return fmt.Errorf("no server accepts a session: %v", errs)
	})
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn, at
}

// PlacementMap reads the placement map of cluster from its key-value
// bucket (package cluster's format): its version and each group's node.
func PlacementMap(t testing.TB, js jetstream.JetStream, cluster string) (version uint64, nodes map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, "SDB_PLACEMENT_"+cluster)
	if err != nil {
		t.Fatalf("placement bucket of cluster %s: %v", cluster, err)
	}
	e, err := kv.Get(ctx, "map")
	if err != nil {
		t.Fatalf("placement map of cluster %s: %v", cluster, err)
	}
	var m struct {
		Version uint64 `json:"version"`
		Groups  map[string]struct {
			Node string `json:"node"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(e.Value(), &m); err != nil {
		t.Fatalf("placement map %q: %v", e.Value(), err)
	}
	nodes = map[string]string{}
	for g, a := range m.Groups {
		nodes[g] = a.Node
	}
	return m.Version, nodes
}

// readyz asks the server's /readyz: nil when it answers 200.
func (s *Server) readyz() error {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(s.HTTPURL() + "/readyz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
