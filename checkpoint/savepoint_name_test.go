package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSavepointName(t *testing.T) {
	for _, ok := range []string{"sp", "Before Deploy", "a-b_c.d", "ünï", strings.Repeat("n", MaxSavepointNameLen), "a..b"} {
		if err := CheckSavepointName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", ".hidden", ".released-x", "a/b", "../x", `a\b`, "a\x00b", "a\x01b",
		"a\nb", "\xff", strings.Repeat("n", MaxSavepointNameLen+1)} {
		var ne *NameError
		if err := CheckSavepointName(bad); !errors.As(err, &ne) {
			t.Errorf("%q accepted (err %v)", bad, err)
		}
	}
}

func TestSavepointPathStaysInRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "savepoints")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "inner")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := SavepointPath(root, "sp"); err != nil || p != filepath.Join(root, "sp") {
		t.Errorf("SavepointPath(sp) = %q, %v", p, err)
	}
	// A link inside the root that leads out of it is not a savepoint.
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := SavepointPath(root, "link"); !errors.Is(err, ErrNoSuchPoint) {
		t.Errorf("link out of the root: %v, want ErrNoSuchPoint", err)
	}
	if err := ReleaseSavepoint(root, "link"); !errors.Is(err, ErrNoSuchPoint) {
		t.Errorf("ReleaseSavepoint(link out of the root): %v", err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("outside directory gone: %v", err)
	}
	// Not a savepoint: RELEASE leaves it alone.
	if err := ReleaseSavepoint(root, "inner"); !errors.Is(err, ErrNoSuchPoint) {
		t.Errorf("ReleaseSavepoint(plain directory): %v", err)
	}
	if _, err := FindCheckpoint(root, 1); !errors.Is(err, ErrNoSuchPoint) {
		t.Errorf("FindCheckpoint(missing): %v", err)
	}
}

func TestRemoveReleasedOnlyOwn(t *testing.T) {
	root := t.TempDir()
	sp := filepath.Join(root, "sp")
	if err := os.MkdirAll(sp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sp, OwnerFile), []byte("me"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What a crash right after the rename leaves: a marked tomb.
	tomb := filepath.Join(root, releasedPrefix+"sp-1")
	if err := os.WriteFile(filepath.Join(sp, ReleasedMarker), []byte(filepath.Base(tomb)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(sp, tomb); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(root, releasedPrefix+"foreign-2")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	// A marker naming another directory does not count either.
	copied := filepath.Join(root, releasedPrefix+"copied-3")
	if err := os.MkdirAll(copied, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(copied, ReleasedMarker), []byte(filepath.Base(tomb)), 0o644); err != nil {
		t.Fatal(err)
	}
	RemoveReleased(root)
	if _, err := os.Stat(tomb); !os.IsNotExist(err) {
		t.Errorf("the server's own released directory survived: %v", err)
	}
	for _, d := range []string{foreign, copied} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was deleted: %v", d, err)
		}
	}
}
