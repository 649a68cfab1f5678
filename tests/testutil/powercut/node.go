package powercut

import (
	"context"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a file or a directory. Every node is a persistent go-fuse inode:
// go-fuse's tree of children is the CURRENT namespace (what lookups and
// readdir see; go-fuse updates it after each of the operations below
// succeeds), and durEntries is the DURABLE one. Every field but the
// embedded inode and ino is guarded by FS.mu.
type node struct {
	fs.Inode
	fsys *FS
	ino  uint64
	dir  bool

	perm  uint32 // permission bits
	mtime time.Time
	nlink uint32 // current links (files); a directory reports 2

	// Files: the bytes reads see, and those as of the last fsync or
	// fdatasync.
	cur, dur content
	// Directories: the entries as of the last fsync of the directory.
	durEntries map[string]*node
}

var (
	_ fs.NodeGetattrer = (*node)(nil)
	_ fs.NodeSetattrer = (*node)(nil)
	_ fs.NodeOpener    = (*node)(nil)
	_ fs.NodeReader    = (*node)(nil)
	_ fs.NodeWriter    = (*node)(nil)
	_ fs.NodeFlusher   = (*node)(nil)
	_ fs.NodeFsyncer   = (*node)(nil)
	_ fs.NodeAllocater = (*node)(nil)
	_ fs.NodeCreater   = (*node)(nil)
	_ fs.NodeMkdirer   = (*node)(nil)
	_ fs.NodeUnlinker  = (*node)(nil)
	_ fs.NodeRmdirer   = (*node)(nil)
	_ fs.NodeRenamer   = (*node)(nil)
	_ fs.NodeLinker    = (*node)(nil)
	_ fs.NodeStatfser  = (*node)(nil)
	_ fs.NodeOnAdder   = (*node)(nil)
)

func (n *node) stable() fs.StableAttr {
	mode := uint32(syscall.S_IFREG)
	if n.dir {
		mode = syscall.S_IFDIR
	}
	return fs.StableAttr{Mode: mode, Ino: n.ino}
}

// OnAdd builds the tree loaded by Mount under the root. go-fuse calls it
// for every node as it is added, the root's from fs.Mount in the goroutine
// of FS.start, before the filesystem serves any request.
func (n *node) OnAdd(ctx context.Context) {
	if n.ino == 1 {
		n.fsys.attach(ctx, n)
	}
}

// child returns the current entry name of n.
func (n *node) child(name string) *node {
	c := n.GetChild(name)
	if c == nil {
		return nil
	}
	return c.Operations().(*node)
}

// currentEntries returns n's current entries.
func (n *node) currentEntries() map[string]*node {
	out := map[string]*node{}
	for name, c := range n.Children() {
		out[name] = c.Operations().(*node)
	}
	return out
}

func (n *node) fill(a *fuse.Attr) {
	a.Ino = n.ino
	a.Mode = n.perm
	if n.dir {
		a.Mode |= syscall.S_IFDIR
		a.Nlink = 2
		a.Size = 4096
	} else {
		a.Mode |= syscall.S_IFREG
		a.Nlink = n.nlink
		a.Size = uint64(n.cur.size)
	}
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = 4096
	a.SetTimes(nil, &n.mtime, &n.mtime)
}

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return syscall.EIO
	}
	n.fill(&out.Attr)
	return 0
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return syscall.EIO
	}
	if sz, ok := in.GetSize(); ok {
		if n.dir {
			return syscall.EISDIR
		}
		n.cur.resize(int64(sz), &n.dur)
		n.mtime = time.Now()
	}
	if m, ok := in.GetMode(); ok {
		n.perm = m & 0o7777
	}
	if mt, ok := in.GetMTime(); ok {
		n.mtime = mt
	}
	n.fill(&out.Attr)
	return 0
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return nil, 0, syscall.EIO
	}
	if flags&syscall.O_TRUNC != 0 && !n.dir {
		n.cur.resize(0, &n.dur)
		n.mtime = time.Now()
	}
	return nil, 0, 0
}

func (n *node) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return nil, syscall.EIO
	}
	return fuse.ReadResultData(dest[:n.cur.read(dest, off)]), 0
}

func (n *node) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return 0, syscall.EIO
	}
	n.cur.write(data, off, &n.dur)
	n.mtime = time.Now()
	return uint32(len(data)), 0
}

func (n *node) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno { return 0 }

// Fsync makes a file's bytes durable, or a directory's entries: each
// entry then names, in the durable image, the node it names now (whose
// own bytes or entries are durable as of that node's own last fsync).
// fdatasync does the same as fsync.
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return syscall.EIO
	}
	if n.dir {
		n.durEntries = n.currentEntries()
	} else {
		n.dur = n.cur.clone()
	}
	return 0
}

// Allocate supports plain fallocate (which may extend the file) and
// FALLOC_FL_KEEP_SIZE (a no-op here: nothing is preallocated).
func (n *node) Allocate(ctx context.Context, f fs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	const keepSize = 0x1 // FALLOC_FL_KEEP_SIZE
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return syscall.EIO
	}
	switch mode {
	case 0:
		if end := int64(off + size); end > n.cur.size {
			n.cur.resize(end, &n.dur)
		}
		return 0
	case keepSize:
		return 0
	}
	return syscall.EOPNOTSUPP
}

// Statfs reports a large, mostly free filesystem.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	const blocks = 1 << 28 // 1 TiB of 4 KiB blocks
	n.fsys.mu.Lock()
	used := n.fsys.used() / 4096
	n.fsys.mu.Unlock()
	out.Bsize, out.Frsize, out.NameLen = 4096, 4096, 255
	out.Blocks = blocks
	out.Bfree = blocks - min(used, blocks)
	out.Bavail = out.Bfree
	out.Files, out.Ffree = 1<<24, 1<<24
	return 0
}

// newNode makes a node under n; the caller holds FS.mu.
func (n *node) newNode(dir bool, perm uint32) *node {
	c := &node{fsys: n.fsys, ino: n.fsys.nextIno, dir: dir, perm: perm & 0o7777, mtime: time.Now(), nlink: 1}
	n.fsys.nextIno++
	if dir {
		c.durEntries = map[string]*node{}
	}
	n.fsys.nodes = append(n.fsys.nodes, c)
	n.mtime = c.mtime
	return c
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	n.fsys.mu.Lock()
	if n.fsys.cut {
		n.fsys.mu.Unlock()
		return nil, nil, 0, syscall.EIO
	}
	if n.child(name) != nil {
		n.fsys.mu.Unlock()
		return nil, nil, 0, syscall.EEXIST
	}
	c := n.newNode(false, mode)
	c.fill(&out.Attr)
	n.fsys.mu.Unlock()
	return n.NewPersistentInode(ctx, c, c.stable()), nil, 0, 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.fsys.mu.Lock()
	if n.fsys.cut {
		n.fsys.mu.Unlock()
		return nil, syscall.EIO
	}
	if n.child(name) != nil {
		n.fsys.mu.Unlock()
		return nil, syscall.EEXIST
	}
	c := n.newNode(true, mode)
	c.fill(&out.Attr)
	n.fsys.mu.Unlock()
	return n.NewPersistentInode(ctx, c, c.stable()), 0
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t, ok := target.(*node)
	if !ok || t.dir {
		return nil, syscall.EPERM
	}
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return nil, syscall.EIO
	}
	if n.child(name) != nil {
		return nil, syscall.EEXIST
	}
	t.nlink++
	n.mtime = time.Now()
	t.fill(&out.Attr)
	return t.EmbeddedInode(), 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return syscall.EIO
	}
	c := n.child(name)
	switch {
	case c == nil:
		return syscall.ENOENT
	case c.dir:
		return syscall.EISDIR
	}
	c.nlink--
	n.mtime = time.Now()
	return 0
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return syscall.EIO
	}
	c := n.child(name)
	switch {
	case c == nil:
		return syscall.ENOENT
	case !c.dir:
		return syscall.ENOTDIR
	case len(c.Children()) > 0:
		return syscall.ENOTEMPTY
	}
	n.mtime = time.Now()
	return 0
}

// Rename checks a rename (go-fuse moves the entry once it returns 0). The
// kernel has already refused moving a directory below itself and renaming
// a file onto another link of itself.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	const noReplace = 0x1 // RENAME_NOREPLACE
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	n.fsys.mu.Lock()
	defer n.fsys.mu.Unlock()
	if n.fsys.cut {
		return syscall.EIO
	}
	src, dst := n.child(name), np.child(newName)
	if src == nil {
		return syscall.ENOENT
	}
	switch {
	case flags&fs.RENAME_EXCHANGE != 0:
		if dst == nil {
			return syscall.ENOENT
		}
	case dst == nil:
	case flags&noReplace != 0:
		return syscall.EEXIST
	case src.dir && !dst.dir:
		return syscall.ENOTDIR
	case !src.dir && dst.dir:
		return syscall.EISDIR
	case dst.dir && len(dst.Children()) > 0:
		return syscall.ENOTEMPTY
	case !dst.dir:
		dst.nlink--
	}
	now := time.Now()
	n.mtime, np.mtime = now, now
	return 0
}
