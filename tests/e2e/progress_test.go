package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestBackfillProgress: a CREATE MATERIALIZED VIEW over a backlog reports
// its progress as NOTICEs to its client and as a row of streamdb_progress
// that other sessions see; the row goes when the view is created. The
// barrier interval is raised to an hour while the backfill waits, so that
// it cannot finish (and its progress stays at 0 of the backlog) until the
// test lowers it again.
func TestBackfillProgress(t *testing.T) {
	t.Parallel()
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_EXECUTION_PROGRESS_INTERVAL=10ms"}})
	admin := srv.Conn(t)
	exec(t, admin, "CREATE STREAM prog_ev (k int) WITH (subject = 'progress.ev')")
	_, js := testutil.JetStream(t, srv.NATSURL())
	publishMany(t, js, "progress.ev", 2000, func(i int) string { return fmt.Sprintf(`{"k": %d}`, i) })

	var mu sync.Mutex
	var notices []string
	cfg, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		notices = append(notices, n.Severity+" "+n.Code+" "+n.Message)
		mu.Unlock()
	}
	ctx := testutil.Context(t, 2*time.Minute)
	creator, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer creator.Close(context.Background())

	exec(t, admin, "SET execution.barrier.interval = '1h'")
	created := make(chan error, 1)
	go func() {
		_, err := creator.Exec(ctx, "CREATE MATERIALIZED VIEW prog_n AS SELECT count(*) AS n FROM prog_ev")
		created <- err
	}()
	poll(t, time.Minute, func() error {
		got, err := textRowsErr(ctx, admin, "SELECT messages_read, messages_total, job FROM streamdb_progress")
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] != "0 2000 backfill of prog_n" {
			return fmt.Errorf("streamdb_progress: %q", got)
		}
		return nil
	})
	poll(t, time.Minute, func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range notices {
			if strings.HasPrefix(n, "NOTICE 00000 backfill of prog_n: 0 of 2000 messages read (0%)") {
				return nil
			}
		}
		return fmt.Errorf("notices so far: %q", notices)
	})
	exec(t, admin, "SET execution.barrier.interval = '20ms'")
	if err := <-created; err != nil {
		t.Fatalf("CREATE MATERIALIZED VIEW: %v", err)
	}
	wantRows(t, admin, "SELECT n FROM prog_n", "2000")
	wantRows(t, admin, "SELECT count(*) FROM streamdb_progress", "0")
}
