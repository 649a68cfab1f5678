package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// localCheckpoint writes a completed checkpoint directory holding files
// (name -> content) and returns its metadata, as the coordinator does.
func localCheckpoint(t *testing.T, parent string, id uint64, files map[string]string) *Meta {
	t.Helper()
	dir := filepath.Join(parent, fmt.Sprintf("chk-%010d", id))
	m := &Meta{FormatVersion: FormatVersion, Kind: KindCheckpoint, ID: id, Status: StatusCompleted, Dir: dir}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		crc, size, err := fileCRC(path)
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, File{Name: name, Size: size, CRC32C: crc})
	}
	if err := writeMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func openTestRemote(t *testing.T) (*Remote, jetstream.ObjectStore) {
	t.Helper()
	nc, err := nats.Connect(testutil.StartNATS(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := OpenRemote(ctx, js, "CHK", 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.ObjectStore(ctx, "CHK")
	if err != nil {
		t.Fatal(err)
	}
	return r, st
}

func objectNames(t *testing.T, st jetstream.ObjectStore, prefix string) []string {
	t.Helper()
	infos, err := st.List(context.Background())
	if err != nil && err != jetstream.ErrNoObjectsFound {
		t.Fatal(err)
	}
	var out []string
	for _, in := range infos {
		if strings.HasPrefix(in.Name, prefix) && !in.Deleted {
			out = append(out, in.Name)
		}
	}
	return out
}

// TestRemoteIncrementalUploadAndRestore: a file shared with the previous
// checkpoint is not uploaded again, and the newest checkpoint downloads
// whole and verified.
func TestRemoteIncrementalUploadAndRestore(t *testing.T) {
	r, _ := openTestRemote(t)
	ctx := context.Background()
	local := t.TempDir()
	m1 := localCheckpoint(t, local, 1, map[string]string{"state/000001.sst": strings.Repeat("a", 5000), "state/MANIFEST-1": "m1"})
	sent, err := r.Upload(ctx, m1, nil)
	if err != nil || sent != 5002 {
		t.Fatalf("first upload: sent %d, err %v; want 5002 bytes", sent, err)
	}
	m2 := localCheckpoint(t, local, 2, map[string]string{"state/000001.sst": strings.Repeat("a", 5000), "state/000002.sst": "bb", "state/MANIFEST-1": "m2"})
	sent, err = r.Upload(ctx, m2, nil)
	if err != nil || sent != 4 {
		t.Fatalf("second upload: sent %d, err %v; want 4 bytes (the shared sstable is not sent again)", sent, err)
	}
	got, err := r.DownloadNewest(ctx, t.TempDir())
	if err != nil || got == nil || got.ID != 2 {
		t.Fatalf("DownloadNewest = %+v, %v; want checkpoint 2", got, err)
	}
	data, err := os.ReadFile(filepath.Join(got.Dir, "state/MANIFEST-1"))
	if err != nil || string(data) != "m2" {
		t.Fatalf("downloaded MANIFEST = %q, %v; want m2", data, err)
	}
	if _, err := Verify(got.Dir); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteHalfUploadNeverUsed: files without metadata (an upload cut
// short) are invisible, a checkpoint whose fence fails is not committed,
// and a committed checkpoint with a missing file is skipped for an older
// whole one.
func TestRemoteHalfUploadNeverUsed(t *testing.T) {
	r, st := openTestRemote(t)
	ctx := context.Background()
	local := t.TempDir()
	m1 := localCheckpoint(t, local, 1, map[string]string{"state/000001.sst": "one"})
	if _, err := r.Upload(ctx, m1, nil); err != nil {
		t.Fatal(err)
	}
	m2 := localCheckpoint(t, local, 2, map[string]string{"state/000002.sst": "two"})
	fenced := fmt.Errorf("lease lost")
	if _, err := r.Upload(ctx, m2, func() error { return fenced }); err != fenced {
		t.Fatalf("fenced upload returned %v, want the fence's error", err)
	}
	metas, err := r.List(ctx)
	if err != nil || len(metas) != 1 || metas[0].ID != 1 {
		t.Fatalf("List after a fenced upload = %v, %v; want only checkpoint 1", metas, err)
	}
	m3 := localCheckpoint(t, local, 3, map[string]string{"state/000003.sst": "three"})
	if _, err := r.Upload(ctx, m3, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, fileObject(m3.Files[0])); err != nil {
		t.Fatal(err)
	}
	got, err := r.DownloadNewest(ctx, t.TempDir())
	if err != nil || got == nil || got.ID != 1 {
		t.Fatalf("DownloadNewest = %+v, %v; want checkpoint 1 (3 lacks a file)", got, err)
	}
}

// TestRemoteRetain: retention keeps the newest checkpoints and deletes
// every file object none of them lists, leftovers of cut uploads too.
func TestRemoteRetain(t *testing.T) {
	r, st := openTestRemote(t)
	ctx := context.Background()
	local := t.TempDir()
	for id := uint64(1); id <= 4; id++ {
		m := localCheckpoint(t, local, id, map[string]string{
			"state/shared.sst": "shared", fmt.Sprintf("state/%06d.sst", id): fmt.Sprint("own", id)})
		if _, err := r.Upload(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.PutBytes(ctx, "files/state/orphan.sst.1.00000000", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := r.Retain(ctx, 2); err != nil {
		t.Fatal(err)
	}
	metas, err := r.List(ctx)
	if err != nil || len(metas) != 2 || metas[0].ID != 3 || metas[1].ID != 4 {
		t.Fatalf("after Retain(2): %v, %v; want checkpoints 3 and 4", metas, err)
	}
	files := objectNames(t, st, "files/")
	if len(files) != 3 {
		t.Fatalf("file objects after Retain(2): %v; want shared, 000003 and 000004", files)
	}
	for _, m := range metas {
		if _, err := r.Download(ctx, m, filepath.Join(t.TempDir(), "c")); err != nil {
			t.Fatalf("checkpoint %d after retention: %v", m.ID, err)
		}
	}
}
