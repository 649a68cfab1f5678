package sql

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"streamdb/pgwire"
)

// fakeCopyConn is the client's end of a COPY for the datadriven tests:
// CopyIn reads data given to it, CopyOut collects what the COPY writes.
type fakeCopyConn struct {
	fakeRows
	in     []byte
	out    bytes.Buffer
	binary bool
	copied bool
}

func (c *fakeCopyConn) CopyIn(binary bool, columns int) io.Reader {
	c.copied, c.binary = true, binary
	return bytes.NewReader(c.in)
}

func (c *fakeCopyConn) CopyOut(binary bool, columns int) io.Writer {
	c.copied, c.binary = true, binary
	return &c.out
}

var _ pgwire.CopyConn = (*fakeCopyConn)(nil)

// runCopy runs one COPY statement (the input's first line) with the
// input's further lines as the client's data (hex-encoded when hexIn: a
// binary COPY's), and renders what the client saw: the data COPY TO
// wrote (as hex when binary), then the tag or the error.
func runCopy(s *session, input string, hexIn bool) string {
	stmt, data, _ := strings.Cut(input, "\n")
	c := &fakeCopyConn{}
	if hexIn {
		b, err := hex.DecodeString(strings.Join(strings.Fields(data), ""))
		if err != nil {
			return fmt.Sprintf("bad hex: %v\n", err)
		}
		c.in = b
	} else if data != "" {
		c.in = []byte(data + "\n")
	}
	var sb strings.Builder
	p, err := s.Prepare(context.Background(), stmt, nil)
	if err != nil {
		return errorLine(err)
	}
	tag, err := p.Execute(context.Background(), nil, c)
	switch {
	case c.binary && c.out.Len() > 0:
		sb.WriteString(hex.EncodeToString(c.out.Bytes()) + "\n")
	default:
		sb.Write(c.out.Bytes())
	}
	if err != nil {
		sb.WriteString(errorLine(err))
	} else {
		sb.WriteString(tag + "\n")
	}
	sb.WriteString("status " + string(s.TxStatus()) + "\n")
	return sb.String()
}
