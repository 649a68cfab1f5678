package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/checkpoint"
	"streamdb/cluster/control"
	"streamdb/tests/testutil"
)

// A server of a cluster (--cluster, on an external NATS) records its
// committed epochs with each source's cut, and its checkpoints, in the
// cluster's control stream: the log keeps its invariants (epochs
// increase, across a restart too, where the new process takes the
// coordinator lease), the committed cut covers every message of the
// stream and the table the views show, no cut names a message that does
// not exist, and each checkpoint record holds the digest of that
// checkpoint's metadata on disk.
func TestClusterControlLogRecordsEpochs(t *testing.T) {
	const cluster = "e2e"
	ns := testutil.StartNATSServer(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: ns.ClientURL(), Args: []string{"--cluster", cluster}})
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn,
		`CREATE STREAM clicks (id int, n int) WITH (subject = 'ctl.clicks')`,
		`CREATE TABLE accts (id int PRIMARY KEY, bal int)`,
		`CREATE MATERIALIZED VIEW clicks_total AS SELECT count(*) AS c, sum(n) AS s FROM clicks`,
		`CREATE MATERIALIZED VIEW by_acct AS SELECT a.id, a.bal, count(c.id) AS clicks FROM accts a LEFT JOIN clicks c ON c.id = a.id GROUP BY a.id, a.bal`)
	round := func(from int) {
		publishMany(t, js, "ctl.clicks", 50, func(i int) string { return fmt.Sprintf(`{"id": %d, "n": %d}`, (from+i)%10, i) })
		for i := 0; i < 5; i++ {
			exec(t, conn, fmt.Sprintf(`INSERT INTO accts VALUES (%d, %d) ON CONFLICT (id) DO UPDATE SET bal = accts.bal + excluded.bal`, (from/10+i)%10, i+1))
		}
		flush(t, conn)
	}
	round(0)
	wantRows(t, conn, `SELECT c, s FROM clicks_total`, "50 1225")
	covered(t, js, cluster)

	srv.Restart(t)
	conn = srv.Conn(t)
	round(50)
	wantRows(t, conn, `SELECT c, s FROM clicks_total`, "100 2450")
	wantRows(t, conn, `SELECT count(*), sum(clicks) FROM by_acct`, "10 100")
	covered(t, js, cluster)

	// A checkpoint completes (every second by default) and is recorded.
	var recs []control.Record
	testutil.Poll(t, time.Minute, "a checkpoint record", func() error {
		recs = replayAll(t, js, cluster)
		for _, r := range recs {
			if r.Kind == control.KindCheckpoint {
				return nil
			}
		}
		return errors.New("none yet")
	})
	metas, err := checkpoint.List(filepath.Join(srv.DataDir, "checkpoints"))
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[uint64]string{}
	for _, m := range metas {
		if data, err := os.ReadFile(filepath.Join(m.Dir, checkpoint.MetadataFile)); err == nil {
			sum := sha256.Sum256(data)
			onDisk[m.ID] = hex.EncodeToString(sum[:])
		}
	}
	matched := 0
	tokens := map[uint64]bool{}
	for _, r := range recs {
		tokens[r.Token] = true
		if r.Kind == control.KindCheckpoint && onDisk[r.ID] != "" {
			if onDisk[r.ID] != r.Digest {
				t.Fatalf("checkpoint %d: recorded digest %s, its metadata's is %s", r.ID, r.Digest, onDisk[r.ID])
			}
			matched++
		}
	}
	if matched == 0 {
		t.Fatalf("no recorded checkpoint is among those on disk (%v)", onDisk)
	}
	t.Logf("%d records; %d checkpoint records match the metadata on disk; tokens %v", len(recs), matched, tokens)
	if len(tokens) < 2 {
		t.Fatalf("records carry tokens %v: the restarted server should have taken the lease anew", tokens)
	}
}

// replayAll replays the cluster's whole control log through a Checker.
func replayAll(t *testing.T, js jetstream.JetStream, cluster string) []control.Record {
	t.Helper()
	var recs []control.Record
	var c control.Checker
	err := control.NewReader(js, cluster).Replay(testutil.Context(t, time.Minute), 0, func(r control.Record) error {
		recs = append(recs, r)
		return c.Apply(r)
	})
	if err != nil {
		t.Fatalf("control log: %v", err)
	}
	return recs
}

// covered waits until the committed cut covers the last message of the
// stream's subject and of the table's changelog (the views already show
// them: the caller flushed), then checks the whole log: its invariants,
// cuts that never go back (no view here is created over existing input,
// nothing is restored) and no cut past its subject's last message.
func covered(t *testing.T, js jetstream.JetStream, cluster string) {
	t.Helper()
	ctx := testutil.Context(t, time.Minute)
	last := func(subject string) uint64 {
		name, err := js.StreamNameBySubject(ctx, subject)
		if err != nil {
			t.Fatalf("stream of %s: %v", subject, err)
		}
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.GetLastMsgForSubject(ctx, subject)
		if err != nil {
			t.Fatalf("last message of %s: %v", subject, err)
		}
		return m.Sequence
	}
	var table string
	testutil.Poll(t, time.Minute, "the committed cut to cover the flushed input", func() error {
		c, ok, err := control.NewReader(js, cluster).Committed(ctx)
		if err != nil || !ok {
			return fmt.Errorf("committed: %v, %v", ok, err)
		}
		table = ""
		for subj := range c.Cuts {
			if strings.HasPrefix(subj, broker.TableSubjectPrefix) {
				table = subj
			}
		}
		if table == "" || len(c.Cuts) != 2 {
			return fmt.Errorf("epoch %d cuts %v: want ctl.clicks and the table's changelog", c.Epoch, c.Cuts)
		}
		for _, subj := range []string{"ctl.clicks", table} {
			if want := last(subj); c.Cuts[subj] < want {
				return fmt.Errorf("epoch %d: cut of %s at %d, its last message is %d", c.Epoch, subj, c.Cuts[subj], want)
			}
		}
		return nil
	})
	lastSeq := map[string]uint64{"ctl.clicks": last("ctl.clicks"), table: last(table)}
	prev := map[string]uint64{}
	for _, r := range replayAll(t, js, cluster) {
		if r.Kind != control.KindBarrier {
			continue
		}
		for subj, seq := range r.Cuts {
			if seq < prev[subj] {
				t.Fatalf("epoch %d: cut of %s went back from %d to %d", r.Epoch, subj, prev[subj], seq)
			}
			if seq > lastSeq[subj] {
				t.Fatalf("epoch %d: cut of %s at %d, past its last message %d", r.Epoch, subj, seq, lastSeq[subj])
			}
			prev[subj] = seq
		}
	}
}
