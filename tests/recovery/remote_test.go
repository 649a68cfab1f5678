package recovery

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// remoteMeta is the part of a checkpoint's metadata object the tests read.
type remoteMeta struct {
	ID    int64 `json:"id"`
	Files []struct {
		Name   string `json:"name"`
		Size   int64  `json:"size"`
		CRC32C uint32 `json:"crc32c"`
	} `json:"files"`
}

// fileObjects are the object names of m's files in the bucket.
func (m remoteMeta) fileObjects() []string {
	var out []string
	for _, f := range m.Files {
		out = append(out, fmt.Sprintf("files/%s.%d.%08x", f.Name, f.Size, f.CRC32C))
	}
	return out
}

// bucketObjects lists the live objects of a bucket by name.
func bucketObjects(t testing.TB, st jetstream.ObjectStore) map[string]*jetstream.ObjectInfo {
	t.Helper()
	infos, err := st.List(testutil.Context(t, 30*time.Second))
	if err != nil && err != jetstream.ErrNoObjectsFound {
		t.Fatal(err)
	}
	out := map[string]*jetstream.ObjectInfo{}
	for _, in := range infos {
		if !in.Deleted {
			out[in.Name] = in
		}
	}
	return out
}

// bucketCheckpoints reads the committed checkpoints of a bucket, by id.
func bucketCheckpoints(t testing.TB, st jetstream.ObjectStore) map[int64]remoteMeta {
	t.Helper()
	out := map[int64]remoteMeta{}
	for name := range bucketObjects(t, st) {
		if !strings.HasPrefix(name, "meta/") {
			continue
		}
		data, err := st.GetBytes(testutil.Context(t, 30*time.Second), name)
		if err != nil {
			t.Fatal(err)
		}
		var m remoteMeta
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		out[m.ID] = m
	}
	return out
}

// TestRemoteCheckpointUpload: with state.checkpoints.dir a bucket, each
// checkpoint is in the bucket when CHECKPOINT returns, SHOW CHECKPOINTS
// says so, a file the previous checkpoint shares is not put again (its
// object keeps its identity), and retention leaves exactly the files of
// the kept checkpoints.
func TestRemoteCheckpointUpload(t *testing.T) {
	seed := seedFor(t)
	natsURL := testutil.StartNATS(t)
	cfg := writeConfig(t, "execution.checkpointing.interval=0", "state.checkpoints.num-retained=2",
		"state.checkpoints.dir=nats-object://CKPT?replicas=1", "state.savepoints.dir=nats-object://CKPT")
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: cfg})
	conn := srv.Conn(t)
	createWorkload(t, conn)
	_, js := testutil.JetStream(t, natsURL)
	st, err := js.ObjectStore(testutil.Context(t, 10*time.Second), "CKPT")
	if err != nil {
		t.Fatalf("the checkpoint bucket was not created: %v", err)
	}
	gen := newGenerator(seed)
	var taken []ckpt
	spFiles := map[string]bool{}
	for round := 0; round < 4; round++ {
		if round == 1 {
			testutil.MustExec(t, conn, "SAVEPOINT sp1")
			data, err := st.GetBytes(testutil.Context(t, 10*time.Second), "savepoints/sp1.json")
			if err != nil {
				t.Fatalf("savepoint sp1 is not in the bucket: %v", err)
			}
			var m remoteMeta
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			for _, f := range m.fileObjects() {
				spFiles[f] = true
			}
			for _, row := range queryMaps(t, conn, "SHOW SAVEPOINTS") {
				if row["name"] == "sp1" && row["location"] != "nats-object://CKPT/savepoints/sp1.json" {
					t.Errorf("SHOW SAVEPOINTS: sp1's location %q", row["location"])
				}
			}
		}
		publishEvents(t, js, gen.generate(2000))
		testutil.MustExec(t, conn, "FLUSH")
		before := bucketObjects(t, st)
		c := takeCheckpoint(t, conn)
		taken = append(taken, c)
		loc := testutil.Scalar(t, conn, fmt.Sprintf("SELECT location FROM streamdb_checkpoints WHERE id = %d", c.ID))
		if want := fmt.Sprintf("nats-object://CKPT/meta/chk-%010d.json", c.ID); loc != want {
			t.Fatalf("checkpoint %d: location %q, want %q", c.ID, loc, want)
		}
		metas := bucketCheckpoints(t, st)
		m, ok := metas[c.ID]
		if !ok {
			t.Fatalf("checkpoint %d is not in the bucket when CHECKPOINT returns", c.ID)
		}
		after := bucketObjects(t, st)
		var shared int
		for _, name := range m.fileObjects() {
			in, ok := after[name]
			if !ok {
				t.Fatalf("checkpoint %d's file %s is not in the bucket", c.ID, name)
			}
			if old, ok := before[name]; ok {
				shared++
				if old.NUID != in.NUID {
					t.Errorf("checkpoint %d: %s was uploaded again though the bucket held it", c.ID, name)
				}
			}
		}
		if round > 0 && shared == 0 {
			t.Errorf("checkpoint %d shares no file with the bucket's earlier checkpoints", c.ID)
		}
		// Retention (the CREATEs took checkpoints too): the two newest
		// checkpoints, and their files only.
		if ids := keys(metas); len(ids) != 2 || ids[1] != c.ID {
			t.Errorf("after checkpoint %d the bucket holds checkpoints %v, want the newest 2", c.ID, ids)
		}
		used := map[string]bool{}
		for f := range spFiles {
			if _, ok := after[f]; !ok {
				t.Errorf("after checkpoint %d the bucket lacks savepoint sp1's file %s", c.ID, f)
			}
			used[f] = true
		}
		for _, km := range metas {
			for _, f := range km.fileObjects() {
				used[f] = true
			}
		}
		for name := range after {
			if strings.HasPrefix(name, "files/") && !used[name] {
				t.Errorf("after checkpoint %d the bucket still holds %s, which no kept checkpoint lists", c.ID, name)
			}
		}
		t.Logf("checkpoint %d: %d files, %d already in the bucket", c.ID, len(m.Files), shared)
	}
	// RELEASE deletes the savepoint from the bucket, and the files only
	// it held.
	testutil.MustExec(t, conn, "RELEASE SAVEPOINT sp1")
	objs := bucketObjects(t, st)
	if _, ok := objs["savepoints/sp1.json"]; ok {
		t.Errorf("RELEASE SAVEPOINT left savepoints/sp1.json in the bucket")
	}
	used := map[string]bool{}
	for _, km := range bucketCheckpoints(t, st) {
		for _, f := range km.fileObjects() {
			used[f] = true
		}
	}
	for name := range objs {
		if strings.HasPrefix(name, "files/") && !used[name] {
			t.Errorf("after RELEASE the bucket still holds %s, which no checkpoint lists", name)
		}
	}
}

func keys[V any](m map[int64]V) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// TestRemoteCheckpointRestore: the machine is lost (kill -9, and a new
// data directory); a server started there with the same NATS and bucket
// restores the newest whole checkpoint from the bucket and replays the
// input after it: every view equals PostgreSQL. A newer checkpoint whose
// metadata lists a file the bucket lacks (an upload that went wrong) and
// files without metadata (an upload cut short) are never used.
// --restore-from nats-object://CKPT/<id> starts from an older one, and
// nats-object://CKPT/savepoints/NAME from a savepoint in the bucket.
func TestRemoteCheckpointRestore(t *testing.T) {
	seed := seedFor(t)
	natsURL := testutil.StartNATS(t)
	cfg := writeConfig(t, "execution.checkpointing.interval=0", "state.checkpoints.num-retained=5",
		"state.checkpoints.dir=nats-object://CKPT", "state.savepoints.dir=nats-object://CKPT")
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: cfg})
	conn := srv.Conn(t)
	createWorkload(t, conn)
	_, js := testutil.JetStream(t, natsURL)
	gen := newGenerator(seed)
	var events []event
	round := func(n int) {
		more := gen.generate(n)
		publishEvents(t, js, more)
		events = append(events, more...)
		testutil.MustExec(t, conn, "FLUSH")
	}
	round(3000)
	a := takeCheckpoint(t, conn)
	testutil.MustExec(t, conn, "SAVEPOINT sp_a")
	round(3000)
	b := takeCheckpoint(t, conn)
	round(2000) // after the last checkpoint: replayed from JetStream
	srv.Kill(t)

	// What a cut or botched upload leaves in the bucket.
	st, err := js.ObjectStore(testutil.Context(t, 10*time.Second), "CKPT")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testutil.Context(t, 30*time.Second)
	if _, err := st.PutBytes(ctx, "files/state/999999.sst.5.0000abcd", []byte("half!")); err != nil {
		t.Fatal(err)
	}
	data, err := st.GetBytes(ctx, fmt.Sprintf("meta/chk-%010d.json", b.ID))
	if err != nil {
		t.Fatalf("checkpoint %d is not in the bucket: %v", b.ID, err)
	}
	var bad map[string]any
	if err := json.Unmarshal(data, &bad); err != nil {
		t.Fatal(err)
	}
	badID := b.ID + 100
	bad["id"] = badID
	bad["files"] = append(bad["files"].([]any), map[string]any{"name": "state/999998.sst", "size": 7, "crc32c": 1})
	if data, err = json.Marshal(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutBytes(ctx, fmt.Sprintf("meta/chk-%010d.json", badID), data); err != nil {
		t.Fatal(err)
	}

	pg := testutil.StartPostgres(t)
	pgConn := pg.Conn(t)
	loadPostgres(t, pgConn, events)
	for _, tc := range []struct {
		name string
		args []string
		want int64
	}{
		{"fresh data dir, newest whole checkpoint", nil, b.ID},
		{"--restore-from an older checkpoint", []string{"--restore-from", fmt.Sprintf("nats-object://CKPT/%d", a.ID)}, a.ID},
		{"--restore-from a savepoint", []string{"--restore-from", "nats-object://CKPT/savepoints/sp_a"}, 0},
	} {
		s := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: cfg, Args: tc.args})
		rec := logLines(runLog(s), "recovering from checkpoint")
		if len(rec) != 1 || tc.want != 0 && logField(rec[0], "id") != fmt.Sprint(tc.want) {
			t.Errorf("%s: want recovery from checkpoint %d, log says %q", tc.name, tc.want, rec)
		}
		c := s.Conn(t)
		testutil.MustExec(t, c, "FLUSH")
		if !compareViews(t, c, pgConn, workloadViews) {
			t.Errorf("%s: views differ from PostgreSQL", tc.name)
		}
		// The restored server's checkpoints go on after the bucket's ids.
		if next := takeCheckpoint(t, c); next.ID <= badID {
			t.Errorf("%s: new checkpoint id %d, want more than the bucket's largest (%d)", tc.name, next.ID, badID)
		}
		s.Stop(t)
	}
}
