package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// populatingBacklog is the number of events a view must backfill in the
// populating tests: enough that the backfill takes a while.
const populatingBacklog = 300_000

// showStatus returns the status column of view in SHOW MATERIALIZED VIEWS
// (name, definition, status, node).
func showStatus(t *testing.T, conn *pgx.Conn, view string) string {
	t.Helper()
	rows, err := conn.Query(testutil.Context(t, 30*time.Second), "SHOW MATERIALIZED VIEWS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("SHOW MATERIALIZED VIEWS: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		vals := rows.RawValues()
		if string(vals[0]) == view {
			return string(vals[2])
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("SHOW MATERIALIZED VIEWS: %v", err)
	}
	t.Fatalf("SHOW MATERIALIZED VIEWS has no view %q", view)
	return ""
}

// wantPopulating checks that a query of view fails with 55000 and a
// message naming the view and its progress out of total events.
func wantPopulating(t *testing.T, err error, view string, total int) {
	t.Helper()
	pe := wantCode(t, err, "55000")
	if pe == nil {
		return
	}
	prefix := fmt.Sprintf("materialized view %q is still being populated: ", view)
	suffix := fmt.Sprintf(" of %d events", total)
	if !strings.HasPrefix(pe.Message, prefix) || !strings.HasSuffix(pe.Message, suffix) {
		t.Errorf("message %q, want %q<n>%q", pe.Message, prefix, suffix)
	}
	if pe.Hint == "" {
		t.Errorf("no hint with %q", pe.Message)
	}
}

// TestViewInvisibleWhilePopulating: while CREATE MATERIALIZED VIEW
// backfills a large backlog, other sessions' queries of the view fail with
// 55000 and SHOW MATERIALIZED VIEWS shows its progress; once CREATE
// returns, every session reads the complete view.
func TestViewInvisibleWhilePopulating(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	other := srv.Conn(t)
	exec(t, conn, "CREATE STREAM ev (k BIGINT) WITH (subject = 'pop.ev', format = 'json')")
	_, js := testutil.JetStream(t, srv.NATSURL())
	publishBacklog(t, js, "pop.ev", 0, populatingBacklog)

	created := make(chan error, 1)
	begun := time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		_, err := conn.Exec(ctx, "CREATE MATERIALIZED VIEW v AS SELECT k, count(*) AS n FROM ev GROUP BY k", pgx.QueryExecModeSimpleProtocol)
		created <- err
	}()

	// Poll from the other session until CREATE returns: once the view
	// exists it must be refused, never read half-built.
	var refused, shown int
	var lastStatus string
	ctx := testutil.Context(t, 5*time.Minute)
	var createErr error
poll:
	for {
		select {
		case createErr = <-created:
			break poll
		default:
		}
		rows, err := textRowsErr(ctx, other, "SELECT count(*), sum(n) FROM v")
		switch {
		case err == nil:
			// Only possible once the view is complete, that is after
			// CREATE has returned (it may be on its way back).
			select {
			case createErr = <-created:
			case <-time.After(30 * time.Second):
				t.Fatalf("a second session read v (%q) while its CREATE had not returned", rows)
			}
			if want := fmt.Sprintf("%d %d", populatingBacklog, populatingBacklog); !slices.Equal(rows, []string{want}) {
				t.Fatalf("a second session read v as %q before CREATE returned; want the complete %q", rows, want)
			}
			break poll
		case pgError(t, err).Code == "42P01":
			// Not created yet.
		default:
			wantPopulating(t, err, "v", populatingBacklog)
			refused++
			if st := showStatus(t, other, "v"); strings.HasPrefix(st, "populating: ") {
				shown++
				lastStatus = st
				if !strings.Contains(st, fmt.Sprintf(" of %d events", populatingBacklog)) {
					t.Errorf("status %q does not give the backlog of %d events", st, populatingBacklog)
				}
			}
		}
		time.Sleep(5 * time.Millisecond) // paces the probes; the loop ends when CREATE returns
	}
	if createErr != nil {
		t.Fatalf("CREATE MATERIALIZED VIEW: %v", createErr)
	}
	t.Logf("CREATE took %v; %d queries refused, %d SHOWs with progress (last %q)", time.Since(begun).Round(time.Millisecond), refused, shown, lastStatus)
	if refused == 0 {
		t.Fatalf("no query of v was refused while it was being populated (CREATE took %v)", time.Since(begun))
	}
	if shown == 0 {
		t.Errorf("SHOW MATERIALIZED VIEWS never showed v's progress while it was refused")
	}
	want := fmt.Sprintf("%d %d", populatingBacklog, populatingBacklog)
	wantRows(t, conn, "SELECT count(*), sum(n) FROM v", want)
	wantRows(t, other, "SELECT count(*), sum(n) FROM v", want)
	if st := showStatus(t, other, "v"); st != "running" {
		t.Errorf("status after CREATE returned: %q, want running", st)
	}
}

// TestPopulatingSurvivesRestart: a view whose backfill has not finished
// (sources paused, so CREATE returns at once) is refused, and after a
// kill -9 and restart it is still populating until it has caught up; it is
// never read half-built.
func TestPopulatingSurvivesRestart(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE STREAM ev (k BIGINT) WITH (subject = 'pop.ev', format = 'json')")
	_, js := testutil.JetStream(t, srv.NATSURL())
	publishBacklog(t, js, "pop.ev", 0, populatingBacklog)
	exec(t, conn, "ALTER SYSTEM PAUSE",
		"CREATE MATERIALIZED VIEW w AS SELECT k, count(*) AS n FROM ev GROUP BY k")
	other := srv.Conn(t)
	_, err := textRowsErr(testutil.Context(t, 30*time.Second), other, "SELECT count(*) FROM w")
	wantPopulating(t, err, "w", populatingBacklog)
	if st, want := showStatus(t, other, "w"), fmt.Sprintf("populating: 0 of %d events (0%%)", populatingBacklog); st != want {
		t.Errorf("status of w while paused: %q, want %q", st, want)
	}

	srv.Kill(t)
	srv.Restart(t) // sources run again: the backfill resumes
	conn = srv.Conn(t)
	want := fmt.Sprintf("%d %d", populatingBacklog, populatingBacklog)
	var refused int
	poll(t, 3*time.Minute, func() error {
		rows, err := textRowsErr(testutil.Context(t, 30*time.Second), conn, "SELECT count(*), sum(n) FROM w")
		if err != nil {
			wantPopulating(t, err, "w", populatingBacklog)
			refused++
			return err
		}
		if !slices.Equal(rows, []string{want}) {
			t.Fatalf("w read half-built after restart: %q, want %q", rows, want)
		}
		return nil
	})
	t.Logf("%d queries refused after the restart before w was populated", refused)
	if refused == 0 {
		t.Logf("w caught up before the first query after the restart")
	}
	if st := showStatus(t, conn, "w"); st != "running" {
		t.Errorf("status once populated: %q, want running", st)
	}
	// Populated for good: the flag does not come back after a restart.
	srv.Restart(t)
	conn = srv.Conn(t)
	wantRows(t, conn, "SELECT count(*), sum(n) FROM w", want)
}
