package ha

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// Lease settings of the tests: a takeover within about three seconds,
// with room for renewals slowed by a busy machine.
const (
	leaseTTL   = "3s"
	leaseRenew = "500ms"
)

// startMember starts one server of group on the NATS at url. It may come
// up active or as a standby.
func startMember(t *testing.T, url, group string, extra ...string) *testutil.Server {
	t.Helper()
	return startMemberEnv(t, url, group, nil, extra...)
}

// startActive starts the first server of group and returns once it
// serves sessions, so that it is the group's active server. StartServer
// returns at a member's first 57P03, which it sends as a standby before
// it takes the lease: a member started right after could otherwise read
// the lease before anyone holds it (its refusals then name no server), or
// take the lease itself.
func startActive(t *testing.T, url, group string, env []string, extra ...string) *testutil.Server {
	t.Helper()
	s := startMemberEnv(t, url, group, env, extra...)
	connectGroup(t, 60*time.Second, s)
	return s
}

// startMemberEnv is startMember with extra environment entries.
func startMemberEnv(t *testing.T, url, group string, env []string, extra ...string) *testutil.Server {
	t.Helper()
	args := append([]string{"--ha-group", group, "--ha-lease-ttl", leaseTTL, "--ha-renew-interval", leaseRenew}, extra...)
	return testutil.StartServer(t, testutil.ServerOptions{NATSURL: url, Standby: true, Args: args, Env: env})
}

// groupDSN lists every server, as a client of a group does.
func groupDSN(servers ...*testutil.Server) string {
	var hosts, ports []string
	for _, s := range servers {
		hosts = append(hosts, "127.0.0.1")
		ports = append(ports, fmt.Sprint(s.Port))
	}
	return fmt.Sprintf("host=%s port=%s user=streamdb dbname=streamdb sslmode=disable connect_timeout=5",
		strings.Join(hosts, ","), strings.Join(ports, ","))
}

// refusal connects to s and returns its 57P03 message, or the reason it
// did not refuse.
func refusal(s *testutil.Server) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, s.DSN())
	if err == nil {
		c.Close(ctx)
		return "", fmt.Errorf("%s accepted a session", s.Addr)
	}
	if code := testutil.SQLState(err); code != "57P03" {
		return "", fmt.Errorf("%s: %v (SQLSTATE %q, want 57P03)", s.Addr, err, code)
	}
	var pe *pgconn.PgError
	_ = errors.As(err, &pe)
	return pe.Message, nil
}

// activeOf connects with every host listed and returns the session's
// server address (inet_server_port is not needed: the standby refuses,
// so whichever answers is the active one) and the connection.
func connectGroup(t *testing.T, timeout time.Duration, servers ...*testutil.Server) *pgx.Conn {
	t.Helper()
	var conn *pgx.Conn
	testutil.Poll(t, timeout, "a session with the group's active server", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, groupDSN(servers...))
		if err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol); err != nil {
			c.Close(ctx)
			return err
		}
		conn = c
		return nil
	})
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// activeAddr returns the address of the server conn is connected to.
func activeAddr(conn *pgx.Conn) string {
	cfg := conn.PgConn().Conn().RemoteAddr()
	return cfg.String()
}
