// Package powercut is a FUSE filesystem for tests that keeps, besides what
// reads see, what a strict disk would still hold after a power cut, and
// can cut the power: unmount and leave on disk only that durable image.
//
// The rules (strict, but those of real filesystems at their weakest):
//
//   - A file's bytes (and size) are durable as of its last fsync or
//     fdatasync; writes, truncates and fallocate since then are lost.
//   - A directory's entries are durable as of that directory's last fsync:
//     a created file, a new directory (mkdir), a hard link, either side of
//     a rename, an unlink and an rmdir all count only once the directory
//     holding the entry is fsynced. A rename between two directories
//     needs both fsynced: until then the durable image may hold the file
//     in neither or in both.
//   - A file whose entry is durable but whose bytes never were comes back
//     empty; a new directory whose entry is durable comes back with the
//     entries of its own last fsync (none if never).
//
// Everything is kept in memory. Mount loads a plain directory (the image
// of an earlier power cut, say) as wholly durable; PowerCut freezes the
// filesystem (every later operation fails with EIO), writes the durable
// image to a plain directory, reports what the cut lost and unmounts.
// File locks (flock, fcntl) are left to the kernel, which keeps them
// locally for a FUSE filesystem that does not implement them.
//
// Mounting needs /dev/fuse, and root (mount(2)) or fusermount.
package powercut

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// FS is a mounted power-cut filesystem.
type FS struct {
	// Dir is the mount point.
	Dir string

	server *fuse.Server

	mu      sync.Mutex
	root    *node
	nodes   []*node // every node ever made, for used()
	nextIno uint64
	cut     bool // the power is off: every operation fails with EIO
	load    *loaded
	lost    []string
}

// loaded is the tree Mount read from a plain directory, attached to the
// root when go-fuse adds it.
type loaded struct {
	entries map[string]*node
	kids    map[*node]map[string]*node // a loaded directory's entries
}

// Mount mounts a new filesystem at dir (created if missing), holding a
// copy of the plain directory image ("" for an empty filesystem), all of
// it durable. The filesystem is unmounted when the test ends, unless
// PowerCut or Unmount did so first; call Mount before starting the
// processes that use the filesystem, so that their cleanups (which stop
// them) run before this one.
func Mount(t testing.TB, dir, image string) *FS {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Fatalf("powercut: this test needs FUSE and %v: load the kernel module (modprobe fuse), or give the container the device (docker run --device /dev/fuse --cap-add SYS_ADMIN)", err)
	}
	f := &FS{Dir: dir}
	if err := f.start(image); err != nil {
		t.Fatalf("powercut: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Errorf("powercut: %v", err)
		}
	})
	return f
}

// Remount mounts the filesystem again at the same directory after
// PowerCut or Unmount, holding a copy of the plain directory image (""
// for an empty filesystem), all of it durable: the machine is back on.
func (f *FS) Remount(image string) error {
	f.mu.Lock()
	mounted := f.server != nil
	f.mu.Unlock()
	if mounted {
		return fmt.Errorf("powercut: %s is still mounted", f.Dir)
	}
	return f.start(image)
}

func (f *FS) start(image string) error {
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return err
	}
	f.mu.Lock()
	f.nextIno = 2
	f.root = &node{fsys: f, ino: 1, dir: true, perm: 0o755, mtime: time.Now(), durEntries: map[string]*node{}}
	f.nodes = []*node{f.root}
	f.cut, f.load, f.lost = false, nil, nil
	if image != "" {
		l, err := f.readImage(image)
		if err != nil {
			f.mu.Unlock()
			return fmt.Errorf("loading %s: %w", image, err)
		}
		f.load = l
		f.root.durEntries = l.entries
	}
	root := f.root
	f.mu.Unlock()
	zero := time.Duration(0)
	second := time.Second
	opts := &fs.Options{
		MountOptions: fuse.MountOptions{
			FsName:        "powercut",
			Name:          "powercut",
			DirectMount:   true, // mount(2) as root; fusermount otherwise
			DisableXAttrs: true,
		},
		// The kernel is the only writer, so what it caches stays true.
		EntryTimeout:    &second,
		AttrTimeout:     &second,
		NegativeTimeout: &zero,
		RootStableAttr:  &fs.StableAttr{Mode: syscall.S_IFDIR, Ino: 1},
	}
	server, err := fs.Mount(f.Dir, root, opts)
	if err != nil {
		return fmt.Errorf("mounting a FUSE filesystem on %s (as root, or with fusermount installed): %w", f.Dir, err)
	}
	f.mu.Lock()
	f.server = server
	f.mu.Unlock()
	return nil
}

// attach adds the loaded tree under the root, as go-fuse's current tree.
func (f *FS) attach(ctx context.Context, root *node) {
	if f.load == nil {
		return
	}
	added := map[*node]*fs.Inode{}
	var add func(parent *node, entries map[string]*node)
	add = func(parent *node, entries map[string]*node) {
		for name, c := range entries {
			in := added[c] // another link to a file already added
			if in == nil {
				in = parent.NewPersistentInode(ctx, c, c.stable())
				added[c] = in
			}
			parent.AddChild(name, in, false)
			if c.dir {
				add(c, f.load.kids[c])
			}
		}
	}
	add(root, f.load.entries)
	f.load = nil
}

// readImage reads a plain directory tree into nodes whose current and
// durable states are equal.
func (f *FS) readImage(dir string) (*loaded, error) {
	l := &loaded{kids: map[*node]map[string]*node{}}
	links := map[[2]uint64]*node{}
	var read func(path string) (map[string]*node, error)
	read = func(path string) (map[string]*node, error) {
		des, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		out := map[string]*node{}
		for _, de := range des {
			p := filepath.Join(path, de.Name())
			fi, err := os.Lstat(p)
			if err != nil {
				return nil, err
			}
			st := fi.Sys().(*syscall.Stat_t)
			id := [2]uint64{uint64(st.Dev), st.Ino}
			switch {
			case fi.IsDir():
				c := f.root.newNode(true, uint32(fi.Mode().Perm()))
				c.mtime = fi.ModTime()
				kids, err := read(p)
				if err != nil {
					return nil, err
				}
				c.durEntries = kids
				l.kids[c] = kids
				out[de.Name()] = c
			case fi.Mode().IsRegular():
				if c, ok := links[id]; ok {
					c.nlink++
					out[de.Name()] = c
					continue
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return nil, err
				}
				c := f.root.newNode(false, uint32(fi.Mode().Perm()))
				c.mtime = fi.ModTime()
				c.cur.write(data, 0, &c.dur)
				c.dur = c.cur.clone()
				links[id] = c
				out[de.Name()] = c
			default:
				return nil, fmt.Errorf("%s: only regular files and directories are supported, not %v", p, fi.Mode().Type())
			}
		}
		return out, nil
	}
	entries, err := read(dir)
	if err != nil {
		return nil, err
	}
	l.entries = entries
	return l, nil
}

// used returns the bytes held, for statfs; the caller holds f.mu.
func (f *FS) used() uint64 {
	var n uint64
	for _, c := range f.nodes {
		n += uint64(c.cur.size)
	}
	return n
}

// PowerCut cuts the power (as Cut does) and unmounts. Stop (SIGKILL) the
// processes using the filesystem first, or they keep files open and the
// unmount fails.
func (f *FS) PowerCut(image string) ([]string, error) {
	lost, err := f.Cut(image)
	if uerr := f.Unmount(); err == nil {
		err = uerr
	}
	return lost, err
}

// Cut cuts the power: from now on every operation on the filesystem fails
// with EIO. It writes the durable image into the plain directory image
// (created; it must not exist or be empty) and returns what the cut lost
// (as Lost does). The filesystem stays mounted, so that a program in the
// test's own process can close its files before Unmount.
func (f *FS) Cut(image string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut = true
	f.lost = f.losses()
	return f.lost, f.writeImage(image)
}

// Lost returns what the last PowerCut lost, one line per path: entries
// not in the durable image, entries that come back, and files whose bytes
// differ from what was read before the cut. Below a directory whose own
// entry is lost it goes on listing what that directory's fsyncs and its
// files' would not have kept either.
func (f *FS) Lost() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lost
}

// Unmount unmounts the filesystem (without cutting the power); unmounting
// one already unmounted does nothing.
func (f *FS) Unmount() error {
	f.mu.Lock()
	s := f.server
	f.server = nil
	f.mu.Unlock()
	if s == nil {
		return nil
	}
	// Files closed by a process that has just exited may still be
	// released by the kernel: retry a busy mount for a while.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Unmount()
		if err == nil {
			s.Wait()
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("unmounting %s: %w", f.Dir, err)
		}
		time.Sleep(20 * time.Millisecond) // poll interval while the kernel releases files
	}
}

// writeImage writes the durable tree under dir; the caller holds f.mu.
// Links to one file become hard links; a directory that the durable
// entries place below itself (renames of directories whose parents were
// fsynced in an unlucky order) is written once on each path, down to the
// first repetition.
func (f *FS) writeImage(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if des, err := os.ReadDir(dir); err != nil || len(des) > 0 {
		return fmt.Errorf("power cut image %s must be a new or empty directory (%v)", dir, err)
	}
	written := map[*node]string{}
	var write func(path string, d *node, above map[*node]bool) error
	write = func(path string, d *node, above map[*node]bool) error {
		above[d] = true
		defer delete(above, d)
		for _, name := range sortedNames(d.durEntries) {
			c, p := d.durEntries[name], filepath.Join(path, name)
			switch {
			case c.dir && above[c]:
				continue
			case c.dir:
				if err := os.Mkdir(p, os.FileMode(c.perm)|0o700); err != nil {
					return err
				}
				if err := write(p, c, above); err != nil {
					return err
				}
			case written[c] != "":
				if err := os.Link(written[c], p); err != nil {
					return err
				}
			default:
				if err := os.WriteFile(p, c.dur.bytes(), os.FileMode(c.perm)|0o600); err != nil {
					return err
				}
				written[c] = p
			}
		}
		return nil
	}
	return write(dir, f.root, map[*node]bool{})
}

// losses compares the current tree with the durable one; the caller holds
// f.mu.
func (f *FS) losses() []string {
	var out []string
	var walk func(path string, d *node, above map[*node]bool)
	walk = func(path string, d *node, above map[*node]bool) {
		above[d] = true
		defer delete(above, d)
		cur := d.currentEntries()
		names := sortedNames(cur)
		for name := range d.durEntries {
			if cur[name] == nil {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			c, dc := cur[name], d.durEntries[name]
			p := path + "/" + name
			switch {
			case c != nil && dc == nil:
				out = append(out, fmt.Sprintf("%s: %s not in the durable image (its directory was not fsynced since the entry appeared)", p, kind(c)))
				if c.dir && !above[c] {
					// What it holds that would be lost even if its
					// own entry were synced.
					walk(p, c, above)
				}
			case c == nil:
				out = append(out, fmt.Sprintf("%s: %s comes back (removed or renamed away, but its directory was not fsynced since)", p, kind(dc)))
			case c != dc:
				out = append(out, fmt.Sprintf("%s: the %s it names before the cut is replaced by an older one (renamed over, its directory not fsynced since)", p, kind(c)))
			case c.dir && !above[c]:
				walk(p, c, above)
			case !c.dir && !c.cur.equal(&c.dur):
				out = append(out, fmt.Sprintf("%s: file not fsynced since its last change: %d bytes durable of %d", p, c.dur.size, c.cur.size))
			}
		}
	}
	walk("", f.root, map[*node]bool{})
	return out
}

func kind(n *node) string {
	if n.dir {
		return "directory"
	}
	return "file"
}

func sortedNames(m map[string]*node) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Summary shortens a loss report to at most n lines, saying how many more
// there were.
func Summary(lost []string, n int) string {
	if len(lost) <= n {
		return strings.Join(lost, "\n")
	}
	return strings.Join(lost[:n], "\n") + fmt.Sprintf("\n... and %d more", len(lost)-n)
}
