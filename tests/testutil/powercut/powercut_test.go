package powercut

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// setup mounts an empty filesystem and returns it with a fresh path for
// a power cut's image.
func setup(t *testing.T) (*FS, string) {
	t.Helper()
	f := Mount(t, filepath.Join(t.TempDir(), "mnt"), "")
	return f, filepath.Join(t.TempDir(), "image")
}

func cut(t *testing.T, f *FS, image string) []string {
	t.Helper()
	lost, err := f.PowerCut(image)
	if err != nil {
		t.Fatal(err)
	}
	return lost
}

// writeFile creates (or truncates) path and writes data, fsyncing the file
// when sync is set.
func writeFile(t *testing.T, path string, data []byte, sync bool) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.Write(data); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := fh.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

func appendFile(t *testing.T, path string, data []byte, sync bool) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.Write(data); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := fh.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

func syncDir(t *testing.T, path string) {
	t.Helper()
	d, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// want checks that path in the image holds data; nil data: absent.
func want(t *testing.T, path string, data []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	switch {
	case data == nil && errors.Is(err, os.ErrNotExist):
	case data == nil && err == nil:
		t.Errorf("%s: survived the power cut with %q, want absent", path, got)
	case err != nil:
		t.Errorf("%s: %v, want %q", path, err, data)
	case !bytes.Equal(got, data):
		t.Errorf("%s: %q after the power cut, want %q", path, got, data)
	}
}

func TestUnsyncedFileIsLost(t *testing.T) {
	f, img := setup(t)
	writeFile(t, filepath.Join(f.Dir, "a"), []byte("hello"), false)
	// Reads see the write before the cut.
	if got, _ := os.ReadFile(filepath.Join(f.Dir, "a")); string(got) != "hello" {
		t.Fatalf("read %q before the cut", got)
	}
	lost := cut(t, f, img)
	want(t, filepath.Join(img, "a"), nil)
	if len(lost) != 1 || !strings.HasPrefix(lost[0], "/a: file not in the durable image") {
		t.Errorf("lost = %q", lost)
	}
}

func TestSyncedFileInUnsyncedDirIsLost(t *testing.T) {
	f, img := setup(t)
	writeFile(t, filepath.Join(f.Dir, "a"), []byte("hello"), true)
	cut(t, f, img)
	want(t, filepath.Join(img, "a"), nil)
}

func TestUnsyncedDataInSyncedDirComesBackEmpty(t *testing.T) {
	f, img := setup(t)
	writeFile(t, filepath.Join(f.Dir, "a"), []byte("hello"), false)
	syncDir(t, f.Dir)
	lost := cut(t, f, img)
	want(t, filepath.Join(img, "a"), []byte{})
	if !slices.Equal(lost, []string{"/a: file not fsynced since its last change: 0 bytes durable of 5"}) {
		t.Errorf("lost = %q", lost)
	}
}

func TestSyncedFileAndDirSurvive(t *testing.T) {
	f, img := setup(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 5000) // several blocks
	writeFile(t, filepath.Join(f.Dir, "a"), big, true)
	syncDir(t, f.Dir)
	// Writes after the fsync are lost: an append, then an overwrite in
	// the middle of the file.
	appendFile(t, filepath.Join(f.Dir, "a"), []byte("tail"), false)
	fh, err := os.OpenFile(filepath.Join(f.Dir, "a"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteAt([]byte("XXXX"), 40000); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	lost := cut(t, f, img)
	want(t, filepath.Join(img, "a"), big)
	if len(lost) != 1 {
		t.Errorf("lost = %q", lost)
	}
}

func TestFdatasyncAndTruncate(t *testing.T) {
	f, img := setup(t)
	p := filepath.Join(f.Dir, "a")
	writeFile(t, p, []byte("0123456789"), false)
	fh, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fdatasync(int(fh.Fd())); err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(3); err != nil {
		t.Fatal(err)
	}
	// Extending again reads zeros where the truncate cut.
	if err := fh.Truncate(6); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if got, _ := os.ReadFile(p); string(got) != "012\x00\x00\x00" {
		t.Errorf("read %q after truncate and extend", got)
	}
	syncDir(t, f.Dir)
	cut(t, f, img)
	want(t, filepath.Join(img, "a"), []byte("0123456789"))
}

func TestRename(t *testing.T) {
	f, img := setup(t)
	for _, name := range []string{"old", "target"} {
		writeFile(t, filepath.Join(f.Dir, name), []byte(name), true)
	}
	syncDir(t, f.Dir)
	// The atomic-replace pattern without the final directory fsync: the
	// rename is lost, so the old contents of both names come back.
	writeFile(t, filepath.Join(f.Dir, "tmp"), []byte("new"), true)
	if err := os.Rename(filepath.Join(f.Dir, "tmp"), filepath.Join(f.Dir, "target")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(f.Dir, "old"), filepath.Join(f.Dir, "renamed")); err != nil {
		t.Fatal(err)
	}
	lost := cut(t, f, img)
	want(t, filepath.Join(img, "target"), []byte("target"))
	want(t, filepath.Join(img, "old"), []byte("old"))
	want(t, filepath.Join(img, "renamed"), nil)
	want(t, filepath.Join(img, "tmp"), nil)
	if len(lost) != 3 {
		t.Errorf("lost = %q", lost)
	}
}

func TestRenameSynced(t *testing.T) {
	f, img := setup(t)
	writeFile(t, filepath.Join(f.Dir, "target"), []byte("old"), true)
	syncDir(t, f.Dir)
	writeFile(t, filepath.Join(f.Dir, "tmp"), []byte("new"), true)
	if err := os.Rename(filepath.Join(f.Dir, "tmp"), filepath.Join(f.Dir, "target")); err != nil {
		t.Fatal(err)
	}
	syncDir(t, f.Dir)
	if lost := cut(t, f, img); len(lost) != 0 {
		t.Errorf("lost = %q", lost)
	}
	want(t, filepath.Join(img, "target"), []byte("new"))
	want(t, filepath.Join(img, "tmp"), nil)
}

func TestRenameAcrossDirs(t *testing.T) {
	f, img := setup(t)
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(f.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	syncDir(t, f.Dir)
	writeFile(t, filepath.Join(f.Dir, "a", "x"), []byte("x"), true)
	writeFile(t, filepath.Join(f.Dir, "a", "y"), []byte("y"), true)
	syncDir(t, filepath.Join(f.Dir, "a"))
	for _, n := range []string{"x", "y"} {
		if err := os.Rename(filepath.Join(f.Dir, "a", n), filepath.Join(f.Dir, "b", n)); err != nil {
			t.Fatal(err)
		}
	}
	// Only the target directory is fsynced: x and y are in both.
	syncDir(t, filepath.Join(f.Dir, "b"))
	cut(t, f, img)
	for _, p := range []string{"a/x", "b/x"} {
		want(t, filepath.Join(img, p), []byte("x"))
	}
	// One file under two names: a hard link in the image.
	a, _ := os.Stat(filepath.Join(img, "a", "x"))
	b, _ := os.Stat(filepath.Join(img, "b", "x"))
	if !os.SameFile(a, b) {
		t.Errorf("a/x and b/x are not one file in the image")
	}
}

func TestUnlinkAndRmdir(t *testing.T) {
	f, img := setup(t)
	if err := os.Mkdir(filepath.Join(f.Dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.Dir, "a"), []byte("a"), true)
	writeFile(t, filepath.Join(f.Dir, "b"), []byte("b"), true)
	syncDir(t, f.Dir)
	for _, p := range []string{"a", "b"} {
		if err := os.Remove(filepath.Join(f.Dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(f.Dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(f.Dir, "d")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("second rmdir: %v", err)
	}
	cut(t, f, img)
	want(t, filepath.Join(img, "a"), []byte("a"))
	want(t, filepath.Join(img, "b"), []byte("b"))
	if fi, err := os.Stat(filepath.Join(img, "d")); err != nil || !fi.IsDir() {
		t.Errorf("d after the cut: %v", err)
	}
}

func TestMkdirNeedsParentSync(t *testing.T) {
	f, img := setup(t)
	if err := os.MkdirAll(filepath.Join(f.Dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.Dir, "a", "b", "f"), []byte("f"), true)
	syncDir(t, filepath.Join(f.Dir, "a", "b"))
	syncDir(t, f.Dir)
	// a is durable in the root, but b never was in a.
	cut(t, f, img)
	des, err := os.ReadDir(filepath.Join(img, "a"))
	if err != nil || len(des) != 0 {
		t.Errorf("a after the cut: %v %v, want an empty directory", des, err)
	}
}

func TestHardLink(t *testing.T) {
	f, img := setup(t)
	if err := os.Mkdir(filepath.Join(f.Dir, "ckpt"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.Dir, "000001.sst"), []byte("sst"), true)
	syncDir(t, f.Dir)
	if err := os.Link(filepath.Join(f.Dir, "000001.sst"), filepath.Join(f.Dir, "ckpt", "000001.sst")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(f.Dir, "000001.sst"), filepath.Join(f.Dir, "ckpt", "unsynced.sst")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(f.Dir, "000001.sst"))
	if err != nil || fi.Sys().(*syscall.Stat_t).Nlink != 3 {
		t.Errorf("nlink: %v %v", fi.Sys(), err)
	}
	syncDir(t, f.Dir)
	d, err := os.Open(filepath.Join(f.Dir, "ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := os.Remove(filepath.Join(f.Dir, "ckpt", "unsynced.sst")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(f.Dir, "000001.sst"), filepath.Join(f.Dir, "ckpt", "late.sst")); err != nil {
		t.Fatal(err)
	}
	cut(t, f, img)
	want(t, filepath.Join(img, "ckpt", "000001.sst"), []byte("sst"))
	want(t, filepath.Join(img, "ckpt", "unsynced.sst"), []byte("sst"))
	want(t, filepath.Join(img, "ckpt", "late.sst"), nil)
}

// TestRemountImage mounts the image of one power cut again: all of it is
// durable, so a second cut right away loses nothing; operations after a
// cut fail.
func TestRemountImage(t *testing.T) {
	f, img := setup(t)
	if err := os.Mkdir(filepath.Join(f.Dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.Dir, "d", "a"), []byte("a"), true)
	syncDir(t, filepath.Join(f.Dir, "d"))
	syncDir(t, f.Dir)
	if err := os.Link(filepath.Join(f.Dir, "d", "a"), filepath.Join(f.Dir, "b")); err != nil {
		t.Fatal(err)
	}
	syncDir(t, f.Dir)
	cut(t, f, img)

	if err := f.Remount(img); err != nil {
		t.Fatal(err)
	}
	g := f
	want(t, filepath.Join(g.Dir, "d", "a"), []byte("a"))
	want(t, filepath.Join(g.Dir, "b"), []byte("a"))
	a, _ := os.Stat(filepath.Join(g.Dir, "d", "a"))
	b, _ := os.Stat(filepath.Join(g.Dir, "b"))
	if !os.SameFile(a, b) {
		t.Errorf("d/a and b are not one file after the remount")
	}
	writeFile(t, filepath.Join(g.Dir, "d", "new"), []byte("n"), false)
	img2 := filepath.Join(t.TempDir(), "image")
	if lost := cut(t, g, img2); len(lost) != 1 {
		t.Errorf("lost = %q", lost)
	}
	want(t, filepath.Join(img2, "d", "a"), []byte("a"))
	want(t, filepath.Join(img2, "b"), []byte("a"))
	want(t, filepath.Join(img2, "d", "new"), nil)
}

// TestCutFreezes: a process that still writes after the cut gets EIO and
// changes nothing in the image.
func TestCutFreezes(t *testing.T) {
	f, img := setup(t)
	p := filepath.Join(f.Dir, "a")
	writeFile(t, p, []byte("a"), true)
	syncDir(t, f.Dir)
	fh, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Cut(img); err != nil {
		t.Fatal(err)
	}
	if _, err := fh.Write([]byte("late")); !errors.Is(err, syscall.EIO) {
		t.Errorf("write after the cut: %v, want EIO", err)
	}
	fh.Close()
	if err := f.Unmount(); err != nil {
		t.Fatal(err)
	}
	want(t, filepath.Join(img, "a"), []byte("a"))
}

// TestPebble runs Pebble on the filesystem: what it acknowledged with Sync
// survives a cut, and the database opens again on the image.
func TestPebble(t *testing.T) {
	f, img := setup(t)
	db, err := pebble.Open(f.Dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		k := []byte{byte(i)}
		if err := db.Set(k, bytes.Repeat(k, 1000), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if i == 100 {
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A write Pebble did not sync may be lost; it must not break the
	// database.
	if err := db.Set([]byte("nosync"), []byte("x"), pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	// The cut happens with the database open, as a power cut would; the
	// handles left open keep the mount busy until Close.
	if _, err := f.Cut(img); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if err := f.Unmount(); err != nil {
		t.Fatal(err)
	}

	g := Mount(t, f.Dir, img)
	db, err = pebble.Open(g.Dir, &pebble.Options{})
	if err != nil {
		t.Fatalf("reopening Pebble after the power cut: %v", err)
	}
	defer db.Close()
	for i := range 200 {
		k := []byte{byte(i)}
		v, closer, err := db.Get(k)
		if err != nil {
			t.Fatalf("key %d acknowledged with Sync: %v", i, err)
		}
		if !bytes.Equal(v, bytes.Repeat(k, 1000)) {
			t.Errorf("key %d: wrong value", i)
		}
		closer.Close()
	}
}
