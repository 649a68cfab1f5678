package bench

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// BenchmarkForwardedSession measures what a cluster member's relay adds
// (pgwire.Forwarder): two servers with --cluster on one NATS server, the
// latency of `SELECT 1` (simple protocol) on a session with the
// coordinator and on one through the other member, and the time to open
// a session each way, interleaved one for one so both see the same load.
func BenchmarkForwardedSession(b *testing.B) {
	queries, connects := 2000, 100
	if report.Mode == "full" {
		queries, connects = 20000, 500
	}
	report.Configf("ForwardedSession: two --cluster servers on one NATS server; %d SELECT 1 and %d connects each way, interleaved", queries, connects)
	url := testutil.StartNATS(b)
	args := []string{"--cluster", "bench", "--ha-lease-ttl", "3s", "--ha-renew-interval", "500ms"}
	s1 := testutil.StartServer(b, testutil.ServerOptions{NATSURL: url, Standby: true, Args: args})
	s2 := testutil.StartServer(b, testutil.ServerOptions{NATSURL: url, Standby: true, Args: args})
	direct, coord := testutil.ConnectCoordinator(b, time.Minute, s1, s2)
	member := s1
	if coord == s1 {
		member = s2
	}
	viaMember := member.Conn(b)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	selectOne := func(conn *pgx.Conn) time.Duration {
		t0 := time.Now()
		if _, err := conn.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	connect := func(s *testutil.Server) time.Duration {
		t0 := time.Now()
		c, err := pgx.Connect(ctx, s.DSN())
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(t0)
		c.Close(ctx)
		return took
	}
	var qDirect, qMember, cDirect, cMember []time.Duration
	for range queries {
		qDirect = append(qDirect, selectOne(direct))
		qMember = append(qMember, selectOne(viaMember))
	}
	for range connects {
		cDirect = append(cDirect, connect(coord))
		cMember = append(cMember, connect(member))
	}
	pct := func(d []time.Duration, p float64) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[min(len(d)-1, int(p*float64(len(d))))].Microseconds()) / 1000
	}
	for _, c := range []struct {
		name   string
		q, con []time.Duration
	}{{"direct to the coordinator", qDirect, cDirect}, {"through a member", qMember, cMember}} {
		report.Add("ForwardedSession", c.name, "SELECT 1 p50", pct(c.q, 0.5), "ms")
		report.Add("ForwardedSession", c.name, "SELECT 1 p99", pct(c.q, 0.99), "ms")
		report.Add("ForwardedSession", c.name, "connect p50", pct(c.con, 0.5), "ms")
		report.Add("ForwardedSession", c.name, "connect p99", pct(c.con, 0.99), "ms")
	}
	report.Add("ForwardedSession", "through a member / direct", "SELECT 1 p50 ratio", pct(qMember, 0.5)/pct(qDirect, 0.5), "x")
	report.Add("ForwardedSession", "through a member / direct", "connect p50 ratio", pct(cMember, 0.5)/pct(cDirect, 0.5), "x")
	b.Logf("SELECT 1 p50 direct %.3f ms, through a member %.3f ms; connect p50 direct %.2f ms, through a member %.2f ms; load %s",
		pct(qDirect, 0.5), pct(qMember, 0.5), pct(cDirect, 0.5), pct(cMember, 0.5), loadAvg())
}
