package recovery

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"streamdb/tests/testutil"
)

const aggAvroSchema = `{"type": "record", "name": "Agg", "namespace": "crash", "fields": [
	{"name": "k", "type": ["null", "long"]},
	{"name": "n", "type": ["null", "long"]},
	{"name": "total", "type": ["null", "long"]}]}`

func aggProtoFile() *descriptorpb.FileDescriptorProto {
	f := func(name string, num int32) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num),
			Type: descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), JsonName: proto.String(name)}
	}
	return &descriptorpb.FileDescriptorProto{Name: proto.String("crash/agg.proto"), Package: proto.String("crash"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Agg"), Field: []*descriptorpb.FieldDescriptorProto{f("k", 1), f("n", 2), f("total", 3)}}}}
}

// TestSinkFormatsCrashLoop: as TestSinkCrashLoop, for a Protobuf and an
// Avro sink of one keyed aggregate: after SIGKILLs at random moments (from
// the seed) under load, a consumer decoding every message with the schema
// and applying its Streamdb-Op holds exactly the view's rows, and no
// Nats-Msg-Id occurs twice.
func TestSinkFormatsCrashLoop(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, 0x5f0a))
	natsURL := testutil.StartNATS(t)
	cfg := writeConfig(t, "execution.checkpointing.interval=100ms")
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: cfg})
	dir := filepath.Join(srv.DataDir, "schemas")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	set := testutil.ProtoDescriptorSet(t, aggProtoFile())
	if err := os.WriteFile(filepath.Join(dir, "agg.pb"), set, 0o644); err != nil {
		t.Fatal(err)
	}
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE STREAM ev (k bigint, v bigint) WITH (subject = 'fmtcrash.ev')",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, count(*) AS n, sum(v)::bigint AS total FROM ev GROUP BY k",
		"CREATE SINK agg_pb FROM agg INTO 'fmtcrash.pb' WITH (format = 'protobuf', schema_file = 'agg.pb', message = 'crash.Agg')",
		"CREATE SINK agg_avro FROM agg INTO 'fmtcrash.avro' WITH (format = 'avro', schema = '"+aggAvroSchema+"')")

	_, js := testutil.JetStream(t, natsURL)
	var sent atomic.Int64
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; {
			select {
			case <-stop:
				select {
				case <-js.PublishAsyncComplete():
					done <- nil
				case <-time.After(time.Minute):
					done <- fmt.Errorf("publishes not acknowledged within a minute")
				}
				return
			case <-tick.C:
			}
			for range 10 {
				if _, err := js.PublishAsync("fmtcrash.ev", fmt.Appendf(nil, `{"k": %d, "v": %d}`, i%40, i)); err != nil {
					done <- err
					return
				}
				i++
				sent.Add(1)
			}
		}
	}()

	const kills = 8
	for i := 1; i <= kills; i++ {
		time.Sleep(time.Duration(200+rng.IntN(900)) * time.Millisecond) // the kill moment, chosen by the seed
		if !srv.Running() {
			t.Fatalf("seed %d kill %d: streamdb died on its own before it was killed", seed, i)
		}
		srv.Kill(t)
		srv.Restart(t)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "FLUSH")
	if got, want := testutil.Scalar(t, conn, "SELECT sum(n) FROM agg"), fmt.Sprint(sent.Load()); got != want {
		t.Fatalf("seed %d: agg counts %s events, %s were published", seed, got, want)
	}
	cols := []string{"k", "n", "total"}
	want := testutil.SortedRows(t, conn, "SELECT * FROM agg")
	for _, s := range []struct {
		subject string
		decode  func([]byte) (string, error)
	}{
		{"fmtcrash.pb", testutil.ProtoSinkDecoder(t, set, "crash.Agg", cols)},
		{"fmtcrash.avro", testutil.AvroSinkDecoder(t, aggAvroSchema, cols)},
	} {
		var feed *testutil.SinkFeed
		testutil.Poll(t, time.Minute, "consumer of "+s.subject+" equals agg", func() error {
			f, err := testutil.ReadFormatSink(js, s.subject, s.decode)
			if err != nil {
				return err
			}
			if id := f.DuplicateID(); id != "" {
				t.Fatalf("seed %d: %s: Nats-Msg-Id %s published twice", seed, s.subject, id)
			}
			if got := f.Sorted(); !slices.Equal(got, want) {
				return fmt.Errorf("seed %d: consumer has %d rows %v, view has %d %v", seed, len(got), got, len(want), want)
			}
			feed = f
			return nil
		})
		t.Logf("%s: %d messages rebuild agg (%d rows)", s.subject, len(feed.Msgs), len(want))
	}
}
