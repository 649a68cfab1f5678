package storage

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileSyncedReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, want := range []string{"first\n", "second, longer\n", ""} {
		if err := WriteFileSynced(path, []byte(want), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Fatalf("read back %q, %v; want %q", got, err, want)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("left %d entries, want only the file (no temporary file)", len(entries))
	}
	if err := WriteFileSynced(filepath.Join(dir, "missing", "f"), nil, 0o600); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}

func TestSyncTree(t *testing.T) {
	root := filepath.Join(t.TempDir(), "chk")
	if err := os.MkdirAll(filepath.Join(root, "state", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := SyncTree(root); err != nil {
		t.Fatal(err)
	}
	if err := SyncTree(filepath.Join(root, "gone")); err == nil {
		t.Fatal("SyncTree of a missing directory succeeded")
	}
}

// TestWriteFileSyncedModeDespiteStaleTemp: a temporary file left with
// wider permissions by an earlier attempt does not pass them on.
func TestWriteFileSyncedModeDespiteStaleTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path+".tmp", []byte("old"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path+".tmp", 0o666); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileSynced(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("mode %v: the stale temporary file's permissions were kept", st.Mode().Perm())
	}
}
