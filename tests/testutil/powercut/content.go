package powercut

import (
	"bytes"
	"slices"
)

// blockSize is the unit in which a file's bytes are kept. A file's current
// and durable contents share the blocks that no write has touched since the
// last fsync, so an fsync costs a copy of the block list, not of the data.
const blockSize = 16 << 10

type block = [blockSize]byte

// content is the bytes of a file at one moment. blocks[i] holds bytes
// [i*blockSize, (i+1)*blockSize) ∩ [0, size); a nil block reads as zeros
// (a hole, or the part of a file extended by truncate or fallocate).
// Invariant: len(blocks) == ceil(size/blockSize), and a block shared with
// another content is never written: writers copy it first (see own).
type content struct {
	size   int64
	blocks []*block
}

// clone returns a content sharing every block with c.
func (c content) clone() content {
	return content{size: c.size, blocks: slices.Clone(c.blocks)}
}

func nblocks(size int64) int { return int((size + blockSize - 1) / blockSize) }

// own returns block i of c for writing: a fresh one for a hole, a copy
// for a block shared with the durable content d (the only content blocks
// are ever shared with: a file's durable image at the same index).
func (c *content) own(i int, d *content) *block {
	b := c.blocks[i]
	switch {
	case b == nil:
		b = new(block)
	case i < len(d.blocks) && d.blocks[i] == b:
		nb := *b
		b = &nb
	default:
		return b
	}
	c.blocks[i] = b
	return b
}

// resize sets the size; bytes past a shrink are zeroed so that a later
// extension reads zeros there, as POSIX requires.
func (c *content) resize(size int64, d *content) {
	if size < c.size && size%blockSize != 0 {
		i := int(size / blockSize)
		if c.blocks[i] != nil {
			b := c.own(i, d)
			clear(b[size%blockSize:])
		}
	}
	n := nblocks(size)
	if n <= len(c.blocks) {
		clear(c.blocks[n:])
		c.blocks = c.blocks[:n]
	} else {
		c.blocks = append(c.blocks, make([]*block, n-len(c.blocks))...)
	}
	c.size = size
}

// write writes p at off, extending the file as needed.
func (c *content) write(p []byte, off int64, d *content) {
	if end := off + int64(len(p)); end > c.size {
		c.resize(end, d)
	}
	for len(p) > 0 {
		i := int(off / blockSize)
		b := c.own(i, d)
		n := copy(b[off%blockSize:], p)
		p = p[n:]
		off += int64(n)
	}
}

// read copies the bytes at off into p and returns how many there were.
func (c *content) read(p []byte, off int64) int {
	if off >= c.size {
		return 0
	}
	if rest := c.size - off; int64(len(p)) > rest {
		p = p[:rest]
	}
	total := len(p)
	for len(p) > 0 {
		i := int(off / blockSize)
		var n int
		if b := c.blocks[i]; b != nil {
			n = copy(p, b[off%blockSize:])
		} else {
			n = min(len(p), blockSize-int(off%blockSize))
			clear(p[:n])
		}
		p = p[n:]
		off += int64(n)
	}
	return total
}

// bytes returns the whole content.
func (c *content) bytes() []byte {
	p := make([]byte, c.size)
	c.read(p, 0)
	return p
}

// equal reports whether c and o hold the same bytes.
func (c *content) equal(o *content) bool {
	if c.size != o.size {
		return false
	}
	for i := range c.blocks {
		if c.blocks[i] == o.blocks[i] {
			continue
		}
		lo := int64(i) * blockSize
		n := min(c.size-lo, blockSize)
		a, b := make([]byte, n), make([]byte, n)
		c.read(a, lo)
		o.read(b, lo)
		if !bytes.Equal(a, b) {
			return false
		}
	}
	return true
}
