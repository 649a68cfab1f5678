package pgwire_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// FuzzServerConn drives the server's connection handling with arbitrary
// client bytes over an in-memory connection, against the fake engine. With
// raw set, data is everything the client sends, from the startup packet
// on (SSLRequest, GSSEncRequest, CancelRequest, StartupMessage, garbage);
// otherwise a valid StartupMessage comes first and data is the message
// stream after it (Query, Parse, Bind, Describe, Execute, Close, Sync,
// Flush, ... well-formed or not). The connection reads until data is
// exhausted, then sees the client hang up.
//
// No input may panic the connection handler (the server contains such a
// panic and logs it at ERROR: any ERROR record fails the input) or hang it;
// the session is closed exactly once; and after a valid startup everything
// the server writes is a well-formed sequence of backend messages (the
// last one may be cut short: what was still buffered when the client hung
// up is never flushed).
func FuzzServerConn(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s.data, s.raw)
	}
	logs := &errorRecorder{}
	eng := newFakeEngine()
	srv := pgwire.NewServer(fuzzEngine{eng}, slog.New(logs))
	ln := newChanListener()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		srv.Shutdown(ctx)
		<-served
	})

	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		defer fuzzWatchdog(10 * time.Second)()
		in := data
		if !raw {
			in = append(startupPacket(), data...)
		}
		fc := newFuzzConn(in)
		ln.conns <- fc
		select {
		case <-fc.closed:
		case <-time.After(8 * time.Second):
			t.Fatalf("the server did not end a connection whose client hung up")
		}
		if msg := logs.take(); msg != "" {
			t.Fatalf("server logged an error: %s", msg)
		}
		// The session (if any) is closed before the socket.
		if n := eng.openSessions(); n != 0 {
			t.Fatalf("%d sessions still open after the connection ended", n)
		}
		if raw {
			return
		}
		for out := fc.output(); len(out) > 0; {
			if len(out) < 5 {
				t.Fatalf("server wrote %d bytes that are no message", len(out))
			}
			n := int(binary.BigEndian.Uint32(out[1:5]))
			if n < 4 {
				t.Fatalf("server wrote a %q message of length %d", out[0], n)
			}
			if n+1 > len(out) {
				// The rest was still in the server's write buffer when
				// the client hung up: nothing flushed it.
				break
			}
			fe := pgproto3.NewFrontend(bytes.NewReader(out[:n+1]), io.Discard)
			if _, err := fe.Receive(); err != nil {
				t.Fatalf("server wrote a malformed %q message: %v", out[0], err)
			}
			out = out[n+1:]
		}
	})
}

type fuzzSeed struct {
	data []byte
	raw  bool
}

// encode concatenates the wire form of frontend messages.
func encode(msgs ...pgproto3.FrontendMessage) []byte {
	var out []byte
	for _, m := range msgs {
		var err error
		if out, err = m.Encode(out); err != nil {
			panic(err)
		}
	}
	return out
}

func startupPacket() []byte {
	return encode(&pgproto3.StartupMessage{
		ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters:      map[string]string{"user": "fuzz", "database": "db"},
	})
}

func fuzzSeeds() []fuzzSeed {
	i8 := func(v int64) []byte { return strconv.AppendInt(nil, v, 10) }
	be := func(n int, v uint64) []byte {
		b := make([]byte, n)
		for i := n - 1; i >= 0; i-- {
			b[i], v = byte(v), v>>8
		}
		return b
	}
	return []fuzzSeed{
		// Startup phase.
		{startupPacket(), true},
		{append(encode(&pgproto3.SSLRequest{}), startupPacket()...), true},
		{append(encode(&pgproto3.GSSEncRequest{}, &pgproto3.SSLRequest{}), startupPacket()...), true},
		{encode(&pgproto3.SSLRequest{}, &pgproto3.SSLRequest{}, &pgproto3.SSLRequest{}), true},
		{encode(&pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}}), true},
		{encode(&pgproto3.StartupMessage{ProtocolVersion: 196610, Parameters: map[string]string{"user": "u", "_pq_.x": "1"}}), true},
		{encode(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"database": "db"}}), true},
		{[]byte("\x00\x00\x00\x08\x00\x02\x00\x00"), true},
		{[]byte("GET / HTTP/1.1\r\n\r\n"), true},
		{[]byte("\x00\x00\x00\x03"), true},
		{[]byte("\x7f\xff\xff\xff\x00\x03\x00\x00"), true},

		// After startup: simple protocol.
		{encode(&pgproto3.Query{String: "select 1; series 3; insert"}, &pgproto3.Terminate{}), false},
		{encode(&pgproto3.Query{String: "begin"}, &pgproto3.Query{String: "fail"}, &pgproto3.Query{String: "select 2"}, &pgproto3.Query{String: "commit"}), false},
		{encode(&pgproto3.Query{String: ""}, &pgproto3.Query{String: "alltypes"}), false},
		// Extended protocol: Parse/Bind/Describe/Execute/Sync in text and
		// binary, named objects, row limits, errors skipping to Sync.
		{encode(
			&pgproto3.Parse{Name: "s", Query: "echo $1 $2::int8 $3::numeric", ParameterOIDs: []uint32{types.OIDInt4}},
			&pgproto3.Describe{ObjectType: 'S', Name: "s"},
			&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s", ParameterFormatCodes: []int16{1, 0, 0},
				Parameters: [][]byte{be(4, 42), i8(-7), []byte("1.50")}, ResultFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P', Name: "p"},
			&pgproto3.Execute{Portal: "p"},
			&pgproto3.Close{ObjectType: 'P', Name: "p"},
			&pgproto3.Close{ObjectType: 'S', Name: "s"},
			&pgproto3.Sync{}), false},
		{encode(
			&pgproto3.Parse{Query: "series 10"},
			&pgproto3.Bind{ResultFormatCodes: []int16{1}},
			&pgproto3.Execute{MaxRows: 3},
			&pgproto3.Execute{MaxRows: 3},
			&pgproto3.Flush{},
			&pgproto3.Execute{},
			&pgproto3.Sync{}), false},
		{encode(
			&pgproto3.Parse{Query: "echo $1::timestamp $2::interval $3::date $4::float8 $5::bool"},
			&pgproto3.Bind{ParameterFormatCodes: []int16{1},
				Parameters: [][]byte{be(8, 1), be(16, 3), be(4, 1<<31), be(8, 0x7ff8000000000001), {1}}},
			&pgproto3.Execute{},
			&pgproto3.Sync{}), false},
		{encode(
			&pgproto3.Parse{Query: "echo $1::numeric"},
			&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 1, 0, 0, 0x40, 0, 0, 2, 0, 1}}},
			&pgproto3.Execute{},
			&pgproto3.Sync{}), false},
		{encode(
			&pgproto3.Parse{Query: "bad"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Parse{Query: "select 1; select 2"},
			&pgproto3.Parse{Query: "select 1", ParameterOIDs: []uint32{0, 705, 9999}},
			&pgproto3.Bind{PreparedStatement: "nope"},
			&pgproto3.Describe{ObjectType: 'X'},
			&pgproto3.Sync{}), false},
		{encode(
			&pgproto3.Parse{Query: "alltypes"},
			&pgproto3.Bind{ResultFormatCodes: []int16{1}},
			&pgproto3.Execute{},
			&pgproto3.Bind{ResultFormatCodes: []int16{0, 1, 2}},
			&pgproto3.Sync{},
			&pgproto3.FunctionCall{},
			&pgproto3.CopyData{Data: []byte("x")}), false},
		{[]byte("B\x00\x00\x00\x06ab"), false},
		{[]byte("\x01\x00\x00\x00\x08junk"), false},
		{encode(&pgproto3.PasswordMessage{Password: "secret"}), false},
	}
}

// fuzzEngine is the fake engine without the statements that block, panic
// on purpose or make unbounded work (sleep, panic, series of millions,
// echo $1000000000).
type fuzzEngine struct{ e *fakeEngine }

func (f fuzzEngine) NewSession(ctx context.Context, params map[string]string) (pgwire.Session, error) {
	s, err := f.e.NewSession(ctx, params)
	if err != nil {
		return nil, err
	}
	return fuzzSession{s}, nil
}

type fuzzSession struct{ pgwire.Session }

func (s fuzzSession) Prepare(ctx context.Context, sql string, declared []types.Type) (pgwire.Prepared, error) {
	words := strings.Fields(sql)
	refuse := len(words) == 0
	if !refuse {
		switch strings.ToLower(words[0]) {
		case "sleep", "panic":
			refuse = true
		case "series":
			n, err := strconv.ParseInt(words[len(words)-1], 10, 64)
			refuse = err == nil && n > 1000
		case "echo":
			for _, w := range words[1:] {
				num, _, _ := strings.Cut(w, "::")
				k, err := strconv.Atoi(strings.TrimPrefix(num, "$"))
				refuse = refuse || (err == nil && k > 64)
			}
		}
	}
	if refuse {
		return nil, sqlerr.New(sqlerr.SyntaxError, "not for fuzzing: %q", sql)
	}
	return s.Session.Prepare(ctx, sql, declared)
}

// fuzzConn is a client connection whose bytes are data: reads return them
// and then io.EOF (the client hung up); writes are kept.
type fuzzConn struct {
	in     *bytes.Reader
	mu     sync.Mutex
	out    bytes.Buffer
	once   sync.Once
	closed chan struct{}
}

func newFuzzConn(data []byte) *fuzzConn {
	return &fuzzConn{in: bytes.NewReader(data), closed: make(chan struct{})}
}

func (c *fuzzConn) Read(p []byte) (int, error) {
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	return c.in.Read(p)
}

func (c *fuzzConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *fuzzConn) output() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.out.Bytes())
}

func (c *fuzzConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *fuzzConn) LocalAddr() net.Addr                { return pipeAddr{} }
func (c *fuzzConn) RemoteAddr() net.Addr               { return pipeAddr{} }
func (c *fuzzConn) SetDeadline(t time.Time) error      { return nil }
func (c *fuzzConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *fuzzConn) SetWriteDeadline(t time.Time) error { return nil }

// pipeAddr is the address of an in-memory connection, which the server
// counts as local (as net.Pipe's).
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// chanListener hands the server the connections sent on conns.
type chanListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newChanListener() *chanListener {
	return &chanListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return pipeAddr{} }

// errorRecorder is a slog handler that keeps the first ERROR record (a
// contained panic, a Session.Close that panicked) until take.
type errorRecorder struct {
	mu    sync.Mutex
	first string
}

func (h *errorRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *errorRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	if h.first == "" {
		h.first = b.String()
	}
	h.mu.Unlock()
	return nil
}

func (h *errorRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *errorRecorder) WithGroup(string) slog.Handler      { return h }

func (h *errorRecorder) take() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.first
	h.first = ""
	return s
}

// fuzzWatchdog crashes the process (with every goroutine's stack) if one
// input runs longer than d, so that the fuzzer records a hang as a failing
// input instead of stalling. Call the returned function when the input is
// done.
func fuzzWatchdog(d time.Duration) (stop func()) {
	timer := time.AfterFunc(d, func() {
		debug.SetTraceback("all")
		panic(fmt.Sprintf("input still running after %v", d))
	})
	return func() { timer.Stop() }
}
