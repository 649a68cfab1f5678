package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/cluster/control"
	"streamdb/tests/testutil"
)

// replayDDL is run on the recording server and on the replaying one, so
// that both hold the same streams, tables and views.
var replayDDL = []string{
	`CREATE STREAM clicks (id int, n int) WITH (subject = 'replay.clicks')`,
	// The recording server purges a table's changelog below what it
	// needs itself; a replay from the first epoch needs it all.
	`CREATE TABLE accts (id int PRIMARY KEY, bal int) WITH (history = '1 hour')`,
	`CREATE MATERIALIZED VIEW per_id AS SELECT id, count(*) AS c, sum(n) AS s FROM clicks GROUP BY id`,
	`CREATE MATERIALIZED VIEW by_acct AS SELECT a.id, a.bal, count(c.id) AS clicks FROM accts a LEFT JOIN clicks c ON c.id = a.id GROUP BY a.id, a.bal`,
	`CREATE MATERIALIZED VIEW top3 AS SELECT id, bal FROM accts ORDER BY bal DESC, id LIMIT 3`,
}

// replayViews are the views compared, each with the query that computes
// it in PostgreSQL over the same input.
var replayViews = []struct{ view, pg string }{
	{`SELECT id, c, s FROM per_id`, `SELECT id, count(*), sum(n) FROM clicks GROUP BY id`},
	{`SELECT id, bal, clicks FROM by_acct`, `SELECT a.id, a.bal, count(c.id) FROM accts a LEFT JOIN clicks c ON c.id = a.id GROUP BY a.id, a.bal`},
	{`SELECT id, bal FROM top3`, `SELECT id, bal FROM accts ORDER BY bal DESC, id LIMIT 3`},
}

// click is one message published to the stream, at its sequence.
type click struct {
	seq   uint64
	id, n int
}

// tableWrite is one statement on the table and the changelog sequence
// its change landed at.
type tableWrite struct {
	seq  uint64
	stmt string
}

// The replay oracle of issue 45: server A records a run in its cluster's
// control log (a stream and a table written over many epochs; an
// aggregate, a join and a top-N over them); server B, with the same DDL,
// replays the log (--replay-control) up to a few recorded committed
// epochs chosen by a seed, restarting each time from where it stopped.
// At each, B's views equal PostgreSQL over exactly the input up to that
// epoch's cuts (per_id's counts sum to the clicks up to the stream's
// cut, so a reader that read past the cut or stopped short fails it),
// and at the last recorded epoch they equal A's views.
func TestReplayControlLogGivesEpochViews(t *testing.T) {
	const cluster = "rec"
	seed := testutil.Seed(t, "STREAMDB_REPLAY_SEED")
	rng := rand.New(rand.NewPCG(seed, 45))
	ns := testutil.StartNATSServer(t)
	url := ns.ClientURL()
	_, js := testutil.JetStream(t, url)
	ctx := testutil.Context(t, 5*time.Minute)

	a := testutil.StartServer(t, testutil.ServerOptions{NATSURL: url, Args: []string{"--cluster", cluster}})
	aConn := a.Conn(t)
	testutil.MustExec(t, aConn, replayDDL...)
	reader := control.NewReader(js, cluster)
	testutil.Poll(t, time.Minute, "A's first recorded commit", func() error {
		_, ok, err := reader.Committed(ctx)
		if err != nil || !ok {
			return fmt.Errorf("committed: %v, %v", ok, err)
		}
		return nil
	})

	// B follows the log as it grows while its DDL runs (nothing is
	// written yet), then stops.
	bDir := t.TempDir()
	b := startReplay(t, url, bDir, cluster, 0)
	testutil.MustExec(t, b.Conn(t), replayDDL...)
	b.Stop(t)

	clickSubj, tableSubj := "replay.clicks", "streamdb.table.accts"
	clickStream := streamOf(t, js, clickSubj)
	tableStream := streamOf(t, js, tableSubj)
	var clicks []click
	var writes []tableWrite
	lastTable := lastSeq(t, tableStream, tableSubj)
	for round := 0; round < 40; round++ {
		for i := 0; i < 3; i++ {
			c := click{id: rng.IntN(8), n: rng.IntN(100)}
			ack, err := js.Publish(ctx, clickSubj, fmt.Appendf(nil, `{"id": %d, "n": %d}`, c.id, c.n))
			if err != nil {
				t.Fatal(err)
			}
			c.seq = ack.Sequence
			clicks = append(clicks, c)
		}
		id := rng.IntN(8)
		var stmt string
		switch rng.IntN(4) {
		case 0, 1:
			stmt = fmt.Sprintf(`INSERT INTO accts VALUES (%d, %d) ON CONFLICT (id) DO UPDATE SET bal = accts.bal + excluded.bal`, id, rng.IntN(50))
		case 2:
			stmt = fmt.Sprintf(`UPDATE accts SET bal = bal - %d WHERE id = %d`, rng.IntN(30), id)
		default:
			stmt = fmt.Sprintf(`DELETE FROM accts WHERE id = %d`, id)
		}
		testutil.MustExec(t, aConn, stmt)
		if seq := lastSeq(t, tableStream, tableSubj); seq > lastTable {
			writes = append(writes, tableWrite{seq: seq, stmt: stmt})
			lastTable = seq
		}
		a.WaitEpochs(t, 1) // spread the input over epochs
	}
	testutil.MustExec(t, aConn, "FLUSH")
	lastClick := lastSeq(t, clickStream, clickSubj)
	testutil.Poll(t, time.Minute, "a recorded commit covering all input", func() error {
		c, ok, err := reader.Committed(ctx)
		if err != nil || !ok {
			return fmt.Errorf("committed: %v, %v", ok, err)
		}
		if c.Cuts[clickSubj] < lastClick || c.Cuts[tableSubj] < lastTable {
			return fmt.Errorf("epoch %d cuts %v; last messages %d and %d", c.Epoch, c.Cuts, lastClick, lastTable)
		}
		return nil
	})

	// The committed epochs recorded, with their cuts.
	epochs := committedEpochs(t, reader)
	final := epochs[len(epochs)-1]
	var mid []recordedEpoch
	for _, e := range epochs {
		if e.cuts[clickSubj] > clicks[0].seq && e.cuts[clickSubj] < lastClick {
			mid = append(mid, e)
		}
	}
	if len(mid) < 3 {
		t.Fatalf("only %d recorded epochs cut the stream mid-way (of %d recorded): the input did not spread over epochs", len(mid), len(epochs))
	}
	rng.Shuffle(len(mid), func(i, j int) { mid[i], mid[j] = mid[j], mid[i] })
	chosen := mid[:3]
	slices.SortFunc(chosen, func(x, y recordedEpoch) int { return int(x.epoch) - int(y.epoch) })
	chosen = append(chosen, final)

	pg := testutil.StartPostgres(t).Conn(t)
	testutil.MustExec(t, pg, `CREATE TABLE clicks (id int, n int)`, `CREATE TABLE accts (id int PRIMARY KEY, bal int)`)
	for _, e := range chosen {
		t.Logf("epoch %d: cuts %v", e.epoch, e.cuts)
		b := startReplay(t, url, bDir, cluster, e.epoch)
		waitReplayed(t, b, e.epoch)
		bConn := b.Conn(t)
		loadPrefix(t, pg, clicks, writes, e.cuts[clickSubj], e.cuts[tableSubj])
		for _, v := range replayViews {
			if d := testutil.RowsDiff(t, bConn, v.view, pg, v.pg); d != "" {
				t.Fatalf("replayed to epoch %d (cuts %v), %s differs from PostgreSQL over the input up to the cuts:\n%s", e.epoch, e.cuts, v.view, d)
			}
		}
		n := 0
		for _, c := range clicks {
			if c.seq <= e.cuts[clickSubj] {
				n++
			}
		}
		if got := testutil.Scalar(t, bConn, `SELECT coalesce(sum(c), 0) FROM per_id`); got != strconv.Itoa(n) {
			t.Fatalf("replayed to epoch %d, per_id counts %s clicks; the cut %d holds %d", e.epoch, got, e.cuts[clickSubj], n)
		}
		if e.epoch == final.epoch {
			// A write of its own would never be read back: refused.
			err := testutil.ExecSimple(bConn, time.Minute, `INSERT INTO accts VALUES (99, 1)`)
			if pe := testutil.WantCode(t, err, "25006", "INSERT on the replay"); pe != nil && !strings.Contains(pe.Message, "replaying") {
				t.Errorf("INSERT on the replay: %q does not say why", pe.Message)
			}
			for _, v := range replayViews {
				got, want := testutil.SortedRows(t, bConn, v.view), testutil.SortedRows(t, aConn, v.view)
				if !slices.Equal(got, want) {
					t.Fatalf("at the last recorded epoch %d, %s on the replay: %v; on the recording server: %v", e.epoch, v.view, got, want)
				}
			}
		}
		b.Stop(t)
	}
}

// startReplay starts a server on dataDir replaying cluster's recorded
// epochs, up to epoch until (0: as the log grows).
func startReplay(t *testing.T, url, dataDir, cluster string, until uint64) *testutil.Server {
	t.Helper()
	args := []string{"--replay-control", cluster}
	if until > 0 {
		args = append(args, "--replay-until-epoch", strconv.FormatUint(until, 10))
	}
	return testutil.StartServer(t, testutil.ServerOptions{NATSURL: url, DataDir: dataDir, Args: args})
}

var replayEnd = regexp.MustCompile(`msg="followed epochs end".* committed_epoch=(\d+)`)

// waitReplayed waits until server b logs that it committed the last
// epoch it follows, and checks that this is epoch.
func waitReplayed(t *testing.T, b *testutil.Server, epoch uint64) {
	t.Helper()
	testutil.Poll(t, 2*time.Minute, fmt.Sprintf("the replay to reach epoch %d", epoch), func() error {
		logs := b.Logs()
		if strings.Contains(logs, "following epochs stopped") {
			t.Fatalf("the replay stopped with an error:\n%s", logs)
		}
		m := replayEnd.FindAllStringSubmatch(logs, -1)
		if len(m) == 0 {
			return errors.New("not yet")
		}
		if got := m[len(m)-1][1]; got != strconv.FormatUint(epoch, 10) {
			t.Fatalf("the replay ended at epoch %s, want %d", got, epoch)
		}
		return nil
	})
}

// recordedEpoch is a committed epoch of the log with its barrier's cuts.
type recordedEpoch struct {
	epoch uint64
	cuts  map[string]uint64
}

// committedEpochs lists the log's committed epochs in order.
func committedEpochs(t *testing.T, r *control.Reader) []recordedEpoch {
	t.Helper()
	var open, out []recordedEpoch
	var c control.Checker
	err := r.Replay(testutil.Context(t, time.Minute), 0, func(rec control.Record) error {
		if err := c.Apply(rec); err != nil {
			return err
		}
		switch rec.Kind {
		case control.KindBarrier:
			open = append(open, recordedEpoch{epoch: rec.Epoch, cuts: rec.Cuts})
		case control.KindCommit:
			for len(open) > 0 && open[0].epoch <= rec.Committed {
				out = append(out, open[0])
				open = open[1:]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("control log: %v", err)
	}
	if len(out) == 0 {
		t.Fatal("no committed epoch recorded")
	}
	return out
}

// loadPrefix fills PostgreSQL's tables with the input up to the cuts:
// the clicks at or below clickCut, and the table statements whose
// changes landed at or below tableCut, in order.
func loadPrefix(t *testing.T, pg *pgx.Conn, clicks []click, writes []tableWrite, clickCut, tableCut uint64) {
	t.Helper()
	testutil.MustExec(t, pg, `TRUNCATE clicks, accts`)
	var b strings.Builder
	for _, c := range clicks {
		if c.seq <= clickCut {
			fmt.Fprintf(&b, "INSERT INTO clicks VALUES (%d, %d);", c.id, c.n)
		}
	}
	for _, w := range writes {
		if w.seq <= tableCut {
			b.WriteString(w.stmt + ";")
		}
	}
	if b.Len() > 0 {
		testutil.MustExec(t, pg, b.String())
	}
}

// streamOf is the JetStream stream holding subject.
func streamOf(t *testing.T, js jetstream.JetStream, subject string) jetstream.Stream {
	t.Helper()
	ctx := testutil.Context(t, 30*time.Second)
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		t.Fatalf("stream of %s: %v", subject, err)
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lastSeq is the sequence of subject's newest message (0: none).
func lastSeq(t *testing.T, s jetstream.Stream, subject string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0
	}
	if err != nil {
		t.Fatalf("last message of %s: %v", subject, err)
	}
	return m.Sequence
}
