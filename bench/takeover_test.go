package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

const takeoverBench = "takeover"

// BenchmarkTakeover measures an --ha-group takeover with a view of N keys
// (BENCH_TAKEOVER_KEYS, default 1M): two servers on one NATS server, the
// view built and checkpointed into the group's bucket, then the active
// server killed (SIGKILL) while events keep arriving. It reports the time
// from the kill to a session on the standby (lease expiry + download +
// restore + start) and to the view holding every event (catch-up), side
// by side with the lease TTL and the standby's restore of the state.
func BenchmarkTakeover(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("BENCH_TAKEOVER_KEYS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	const ttl = 2 * time.Second
	report.Configf("takeover: view of %d keys (one event per key), two servers of one --ha-group on one NATS server, --ha-lease-ttl %s, --ha-renew-interval 400ms; 20000 more events published after the kill", n, ttl)
	cas := humanCount(n) + " keys"
	add := func(name string, v float64, unit string) *Figure {
		return report.Add(takeoverBench, cas, name, v, unit)
	}
	url := testutil.StartNATS(b)
	member := func() *testutil.Server {
		return testutil.StartServer(b, testutil.ServerOptions{NATSURL: url, Standby: true,
			Args:         []string{"--ha-group", "bench", "--ha-lease-ttl", ttl.String(), "--ha-renew-interval", "400ms"},
			ReadyTimeout: 15 * time.Minute, StopTimeout: 2 * time.Minute})
	}
	a := member()
	standby := member()
	conn := a.Conn(b)
	const subject = "bench.takeover"
	execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = '"+subject+"')")
	publishAll(b, url, subject, n, 4, func(i int) []byte { return event(int64(i), 1) })
	execTimed(b, conn, "CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k")
	execTimed(b, conn, "FLUSH")
	ck := execTimed(b, conn, "CHECKPOINT")
	add("CHECKPOINT with upload to the bucket", ms(ck), "ms")
	conn.Close(context.Background())

	a.Kill(b)
	start := time.Now()
	publishAll(b, url, subject, 20000, 1, func(i int) []byte { return event(int64(i), 1) })
	var c *pgx.Conn
	testutil.Poll(b, 15*time.Minute, "a session on the standby", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		c, err = pgx.Connect(ctx, standby.DSN())
		return err
	})
	session := time.Since(start)
	defer c.Close(context.Background())
	want := int64(n + 20000)
	testutil.Poll(b, 15*time.Minute, "the view to hold every event", func() error {
		if got := queryInt(b, c, "SELECT sum(n) FROM agg"); got != want {
			return fmt.Errorf("sum(n) = %d, want %d", got, want)
		}
		return nil
	})
	caught := time.Since(start)
	add("lease TTL", ms(ttl), "ms")
	add("kill to a session on the standby", ms(session), "ms")
	add("kill to the view holding every event", ms(caught), "ms")
	if d, ok := lastRestoreTook(standby.Logs()); ok {
		add("standby: restore of the downloaded state", ms(d), "ms")
	}

}
