package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// feedRow is one row of a SUBSCRIBE: epoch, diff ("" for a progress
// row's NULL) and the view's columns as text.
type feedRow struct {
	epoch uint64
	diff  string
	row   string
}

// startFeed reads a SUBSCRIBE's rows in the background: they arrive on
// the first channel, the reader's end (rows.Err) on the second, and the
// returned model starts empty.
func startFeed(t *testing.T, rows pgx.Rows) (chan feedRow, chan error, *feedModel) {
	ch, done := make(chan feedRow, 1024), make(chan error, 1)
	go readFeed(rows, ch, done)
	return ch, done, &feedModel{t: t, counts: map[string]int64{}}
}

// readFeed reads rows of a running SUBSCRIBE into ch until it ends; the
// error that ended it is sent on done.
func readFeed(rows pgx.Rows, ch chan<- feedRow, done chan<- error) {
	for rows.Next() {
		raw := rows.RawValues()
		if rows.FieldDescriptions()[0].Format == pgx.BinaryFormatCode {
			raw = textValues(rows)
		}
		e, _ := strconv.ParseUint(string(raw[0]), 10, 64)
		cols := make([]string, len(raw)-2)
		for i, v := range raw[2:] {
			if v == nil {
				cols[i] = "NULL"
			} else {
				cols[i] = string(v)
			}
		}
		diff := ""
		if raw[1] != nil {
			diff = string(raw[1])
		}
		ch <- feedRow{epoch: e, diff: diff, row: strings.Join(cols, " ")}
	}
	rows.Close()
	done <- rows.Err()
}

// textValues returns a binary-format row's values as text.
func textValues(rows pgx.Rows) [][]byte {
	vals, err := rows.Values()
	if err != nil {
		panic(err)
	}
	out := make([][]byte, len(vals))
	for i, v := range vals {
		if v != nil {
			out[i] = fmt.Append(nil, v)
		}
	}
	return out
}

// feedModel rebuilds a view from its feed and checks the feed's order.
type feedModel struct {
	t         *testing.T
	counts    map[string]int64
	lastEpoch uint64
	progress  int // rows with a NULL diff
	changes   int
}

func (m *feedModel) apply(r feedRow) {
	m.t.Helper()
	if r.epoch < m.lastEpoch {
		m.t.Fatalf("epoch %d after epoch %d", r.epoch, m.lastEpoch)
	}
	m.lastEpoch = r.epoch
	if r.diff == "" {
		m.progress++
		return
	}
	d, err := strconv.ParseInt(r.diff, 10, 64)
	if err != nil || d == 0 {
		m.t.Fatalf("bad diff %q", r.diff)
	}
	m.changes++
	m.counts[r.row] += d
	if m.counts[r.row] < 0 {
		m.t.Fatalf("row %q went below zero at epoch %d", r.row, r.epoch)
	}
	if m.counts[r.row] == 0 {
		delete(m.counts, r.row)
	}
}

func (m *feedModel) rows() []string {
	var out []string
	for r, n := range m.counts {
		for range n {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// waitModel applies feed rows until the model holds want.
func waitModel(t *testing.T, m *feedModel, ch <-chan feedRow, done <-chan error, want []string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for !slices.Equal(m.rows(), want) {
		select {
		case r := <-ch:
			m.apply(r)
		case err := <-done:
			t.Fatalf("the feed ended: %v", err)
		case <-deadline:
			t.Fatalf("the feed did not reach the view's rows:\n feed: %v\n view: %v", first(m.rows(), 12), first(want, 12))
		}
	}
}

func sortedText(t *testing.T, conn *pgx.Conn, q string) []string {
	t.Helper()
	rows := textRows(t, conn, q)
	slices.Sort(rows)
	return rows
}

// TestSubscribe: a subscriber to an aggregate gets its snapshot, then each
// committed epoch's changes in epoch order (with a NULL-diff row for each
// epoch that changed nothing), from which it rebuilds the view exactly;
// a CancelRequest ends the feed with 57014 and the session serves on.
func TestSubscribe(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_SEED")
	r := rand.New(rand.NewPCG(seed, 3))
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM s (k int, v int) WITH (subject = 'sub.s')",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, sum(v) AS total, count(*) AS n FROM s GROUP BY k")
	event := func(int) string { return fmt.Sprintf(`{"k": %d, "v": %d}`, r.IntN(20), r.IntN(100)-30) }
	publishMany(t, js, "sub.s", 200, event)
	flush(t, conn)

	sconn := srv.Conn(t)
	ctx := testutil.Context(t, 3*time.Minute)
	rows, err := sconn.Query(ctx, "SUBSCRIBE agg WITH (progress = true)", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldNames(rows.FieldDescriptions()); got != "epoch diff k total n" {
		t.Fatalf("columns %q", got)
	}
	ch, done, m := startFeed(t, rows)
	waitModel(t, m, ch, done, sortedText(t, conn, "SELECT * FROM agg"))
	snapshotEpoch := m.lastEpoch
	if m.changes != 20 {
		t.Fatalf("the snapshot has %d rows, want 20", m.changes)
	}
	for round := range 5 {
		publishMany(t, js, "sub.s", 300, event)
		flush(t, conn)
		waitModel(t, m, ch, done, sortedText(t, conn, "SELECT * FROM agg"))
		t.Logf("round %d: epoch %d, %d changes, %d progress rows", round, m.lastEpoch, m.changes, m.progress)
	}
	if m.lastEpoch <= snapshotEpoch {
		t.Fatalf("no epoch after the snapshot's (%d)", snapshotEpoch)
	}
	// With nothing published, epochs still commit: progress rows come.
	seen := m.progress
	for m.progress < seen+3 {
		select {
		case r := <-ch:
			m.apply(r)
		case err := <-done:
			t.Fatalf("the feed ended: %v", err)
		case <-ctx.Done():
			t.Fatal("no progress rows while idle")
		}
	}
	if err := sconn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	var ended error
	for ended == nil {
		select {
		case r := <-ch:
			m.apply(r)
		case ended = <-done:
			if ended == nil {
				t.Fatal("the feed ended without an error")
			}
		case <-ctx.Done():
			t.Fatal("the feed did not end after a CancelRequest")
		}
	}
	wantCode(t, ended, "57014")
	wantRows(t, sconn, "SELECT count(*) FROM agg", "20")
}

func fieldNames(fds []pgconn.FieldDescription) string {
	names := make([]string, len(fds))
	for i, fd := range fds {
		names[i] = fd.Name
	}
	return strings.Join(names, " ")
}

// TestSubscribeSlowSubscriber: a subscriber that stops reading is cut off
// with 54000 once more than max_buffered_rows changes wait for it, while
// the views keep committing (FLUSH returns, the view holds every event).
func TestSubscribeSlowSubscriber(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM s (k int, pad text) WITH (subject = 'slow.s')",
		"CREATE MATERIALIZED VIEW wide AS SELECT k, pad FROM s")
	sconn := srv.Conn(t)
	ctx := testutil.Context(t, 3*time.Minute)
	rows, err := sconn.Query(ctx, "SUBSCRIBE wide WITH (max_buffered_rows = 100)", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	// The subscriber reads nothing: once the socket's buffers are full
	// (rows of 4 KiB, 12 MiB in all), its changes queue up.
	pad := strings.Repeat("x", 4096)
	const n = 3000
	publishMany(t, js, "slow.s", n, func(i int) string { return fmt.Sprintf(`{"k": %d, "pad": %q}`, i, pad) })
	flush(t, conn)
	wantRows(t, conn, "SELECT count(*) FROM wide", strconv.Itoa(n))
	got := 0
	for rows.Next() {
		got++
	}
	pe := wantCode(t, rows.Err(), "54000")
	if !strings.Contains(pe.Message, "fell behind") {
		t.Fatalf("message %q", pe.Message)
	}
	if got >= n {
		t.Fatalf("the subscriber got all %d rows: it was not cut off", got)
	}
	t.Logf("the subscriber got %d of %d rows before it was cut off: %s", got, n, pe.Message)
	wantRows(t, sconn, "SELECT count(*) FROM wide", strconv.Itoa(n))
}

// TestSubscribeCopy: COPY (SUBSCRIBE ...) TO STDOUT streams the feed as
// text rows (epoch, diff, columns, tab-separated, \N for NULL) until the
// client cancels.
func TestSubscribeCopy(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM s (k int, v int) WITH (subject = 'copy.s')",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, sum(v) AS total FROM s GROUP BY k")
	testutil.Publish(t, js, "copy.s", `{"k": 1, "v": 10}`, `{"k": 2, "v": 5}`)
	flush(t, conn)
	sconn := srv.Conn(t)
	ctx, cancel := context.WithCancel(testutil.Context(t, time.Minute))
	w := &lineWriter{lines: make(chan string, 100)}
	copyDone := make(chan error, 1)
	go func() {
		_, err := sconn.PgConn().CopyTo(ctx, w, "COPY (SUBSCRIBE agg WITH (progress = true)) TO STDOUT")
		copyDone <- err
	}()
	var got []string
	next := func() string {
		select {
		case l := <-w.lines:
			return l
		case err := <-copyDone:
			t.Fatalf("COPY ended: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatalf("no COPY data; got %q", got)
		}
		return ""
	}
	for len(got) < 2 {
		got = append(got, next())
	}
	fields := func(l string) []string { return strings.Split(l, "\t") }
	epoch := fields(got[0])[0]
	slices.Sort(got)
	if want := []string{epoch + "\t1\t1\t10", epoch + "\t1\t2\t5"}; !slices.Equal(got, want) {
		t.Fatalf("snapshot %q, want %q", got, want)
	}
	testutil.Publish(t, js, "copy.s", `{"k": 1, "v": 7}`)
	var change []string
	for len(change) < 2 {
		f := fields(next())
		if f[1] == `\N` {
			if f[2] != `\N` || f[3] != `\N` {
				t.Fatalf("progress row %q", f)
			}
			continue
		}
		change = append(change, strings.Join(f[1:], " "))
	}
	if want := []string{"-1 1 10", "1 1 17"}; !slices.Equal(change, want) {
		t.Fatalf("changes %q, want %q (retraction first)", change, want)
	}
	cancel()
	select {
	case err := <-copyDone:
		if err == nil {
			t.Fatal("COPY (SUBSCRIBE) ended without an error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("COPY (SUBSCRIBE) did not end after cancel")
	}
	wantRows(t, conn, "SELECT k, total FROM agg ORDER BY k", "1 17", "2 5")
}

// lineWriter splits COPY data into lines.
type lineWriter struct {
	buf   string
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf += string(p)
	for {
		i := strings.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines <- w.buf[:i]
		w.buf = w.buf[i+1:]
	}
}

// TestChangesBetween: SELECT * FROM v CHANGES BETWEEN a AND b is the
// multiset difference of SELECT * FROM v AS OF a and AS OF b, for
// savepoints and checkpoints, either way round; SUBSCRIBE AS OF a
// savepoint rebuilds the view from that point; points the view did not
// exist at, unknown points and epochs no point is at are refused.
func TestChangesBetween(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_SEED")
	r := rand.New(rand.NewPCG(seed, 5))
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM s (k int, v int) WITH (subject = 'cb.s')",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, sum(v) AS total FROM s GROUP BY k",
		"CREATE MATERIALIZED VIEW pos AS SELECT k % 4 AS b, v FROM s WHERE v > 50")
	event := func(int) string { return fmt.Sprintf(`{"k": %d, "v": %d}`, r.IntN(15), r.IntN(100)) }
	points := []string{}
	for i := range 3 {
		publishMany(t, js, "cb.s", 150, event)
		flush(t, conn)
		exec(t, conn, fmt.Sprintf("SAVEPOINT p%d", i))
		points = append(points, fmt.Sprintf("SAVEPOINT p%d", i))
	}
	publishMany(t, js, "cb.s", 150, event)
	flush(t, conn)
	exec(t, conn, "CHECKPOINT")
	id := textRows(t, conn, "SELECT max(id) FROM streamdb_checkpoints WHERE status = 'completed'")[0]
	points = append(points, "CHECKPOINT "+id)
	for _, view := range []string{"agg", "pos"} {
		for _, a := range points {
			for _, b := range points {
				if a == b {
					continue
				}
				want := multisetDiff(sortedText(t, conn, "SELECT * FROM "+view+" AS OF "+a), sortedText(t, conn, "SELECT * FROM "+view+" AS OF "+b))
				got := sortedText(t, conn, fmt.Sprintf("SELECT * FROM %s CHANGES BETWEEN %s AND %s", view, a, b))
				if !slices.Equal(got, want) {
					t.Fatalf("%s between %s and %s:\n got %v\nwant %v", view, a, b, first(got, 10), first(want, 10))
				}
				if len(got) == 0 {
					t.Fatalf("%s between %s and %s: no changes", view, a, b)
				}
			}
		}
	}
	wantRows(t, conn, "SELECT * FROM agg CHANGES BETWEEN SAVEPOINT p1 AND SAVEPOINT p1")
	_, err := conn.Exec(testutil.Context(t, time.Minute), "SELECT * FROM agg CHANGES BETWEEN SAVEPOINT p0 AND SAVEPOINT nope", pgx.QueryExecModeSimpleProtocol)
	wantCode(t, err, "3B001")
	exec(t, conn, "CREATE MATERIALIZED VIEW late AS SELECT k FROM s")
	flush(t, conn)
	exec(t, conn, "SAVEPOINT p9")
	_, err = conn.Exec(testutil.Context(t, time.Minute), "SELECT * FROM late CHANGES BETWEEN SAVEPOINT p0 AND SAVEPOINT p9", pgx.QueryExecModeSimpleProtocol)
	wantCode(t, err, "55000")
	_, err = conn.Exec(testutil.Context(t, time.Minute), "SELECT k FROM agg CHANGES BETWEEN SAVEPOINT p0 AND SAVEPOINT p1", pgx.QueryExecModeSimpleProtocol)
	wantCode(t, err, "0A000")

	// SUBSCRIBE AS OF a savepoint: that point's rows, then the net change
	// to the start epoch, then live changes: the model ends as the view.
	sconn := srv.Conn(t)
	ctx := testutil.Context(t, 2*time.Minute)
	rows, err := sconn.Query(ctx, "SUBSCRIBE agg AS OF SAVEPOINT p0", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	ch, done, m := startFeed(t, rows)
	waitModel(t, m, ch, done, sortedText(t, conn, "SELECT * FROM agg AS OF SAVEPOINT p0"))
	publishMany(t, js, "cb.s", 100, event)
	flush(t, conn)
	waitModel(t, m, ch, done, sortedText(t, conn, "SELECT * FROM agg"))
	sconn.PgConn().CancelRequest(ctx)
	<-done

	// AS OF EPOCH needs a point at exactly that epoch.
	epoch := ""
	for _, row := range textRows(t, conn, "SHOW SAVEPOINTS") {
		if f := strings.Fields(row); f[0] == "p1" {
			epoch = f[2]
		}
	}
	rows, err = sconn.Query(ctx, "SUBSCRIBE agg WITH (snapshot = false) AS OF EPOCH "+epoch, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	ch, done, m = startFeed(t, rows)
	for _, row := range sortedText(t, conn, "SELECT * FROM agg AS OF SAVEPOINT p1") {
		m.counts[row]++
	}
	waitModel(t, m, ch, done, sortedText(t, conn, "SELECT * FROM agg"))
	sconn.PgConn().CancelRequest(ctx)
	<-done
	e, _ := strconv.ParseUint(epoch, 10, 64)
	_, err = sconn.Exec(ctx, fmt.Sprintf("SUBSCRIBE agg AS OF EPOCH %d", unheldEpoch(t, conn, e)), pgx.QueryExecModeSimpleProtocol)
	if pe := wantCode(t, err, "55000"); !strings.Contains(pe.Hint, epoch) {
		t.Fatalf("hint %q does not list epoch %s", pe.Hint, epoch)
	}
	_, err = sconn.Exec(ctx, "SUBSCRIBE s", pgx.QueryExecModeSimpleProtocol)
	wantCode(t, err, "0A000")
	_, err = sconn.Exec(ctx, "SUBSCRIBE (SELECT k FROM agg)", pgx.QueryExecModeSimpleProtocol)
	wantCode(t, err, "0A000")
	_, err = sconn.Exec(ctx, "SUBSCRIBE agg WITH (bogus = 1)", pgx.QueryExecModeSimpleProtocol)
	wantCode(t, err, "22023")
}

// multisetDiff returns "diff row" for each row whose count differs from a
// to b.
func multisetDiff(a, b []string) []string {
	n := map[string]int{}
	for _, r := range a {
		n[r]--
	}
	for _, r := range b {
		n[r]++
	}
	var out []string
	for _, r := range slices.Sorted(maps.Keys(n)) {
		if n[r] != 0 {
			out = append(out, fmt.Sprintf("%d %s", n[r], r))
		}
	}
	slices.Sort(out)
	return out
}

// unheldEpoch returns the first epoch after e that no checkpoint or
// savepoint is at, and below the newest one's epoch, so that no later
// checkpoint can be taken at it (periodic checkpoints run meanwhile).
func unheldEpoch(t *testing.T, conn *pgx.Conn, e uint64) uint64 {
	t.Helper()
	held := map[uint64]bool{}
	var newest uint64
	for _, show := range []string{"SHOW CHECKPOINTS", "SHOW SAVEPOINTS"} {
		cols, rows, err := testutil.QueryText(conn, time.Minute, show, "NULL")
		if err != nil {
			t.Fatalf("%s: %v", show, err)
		}
		at := slices.Index(cols, "epoch")
		if at < 0 {
			t.Fatalf("%s has no epoch column: %v", show, cols)
		}
		for _, r := range rows {
			if x, err := strconv.ParseUint(r[at], 10, 64); err == nil {
				held[x] = true
				newest = max(newest, x)
			}
		}
	}
	for x := e + 1; x < newest; x++ {
		if !held[x] {
			return x
		}
	}
	t.Fatalf("every epoch from %d to %d has a checkpoint or savepoint", e+1, newest)
	return 0
}
