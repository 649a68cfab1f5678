package bench

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/tests/testutil"
	"streamdb/types"
)

// BenchmarkFormatDecode (issue 41): the decode rate of the same order
// events as JSON, Protobuf and Avro, in process (the stream readers'
// decoder: message to row), and Protobuf's and Avro's as ratios to
// JSON's. Two column sets: "flat" reads the scalar fields and the
// timestamp (the Protobuf decoder reads them straight off the wire);
// "all" reads every field kind, the nested message, map and repeated
// message as jsonb (which the Protobuf decoder reads through dynamicpb).
func BenchmarkFormatDecode(b *testing.B) {
	const events = 2000
	minTime := time.Second
	if report.Mode == "full" {
		minTime = 5 * time.Second
	}
	report.Configf("FormatDecode: %d distinct order events, passes over them alternating the formats for at least %s per format and case, one goroutine; each rate is the fastest pass's", events, minTime)
	orders := testutil.RandomOrders(rand.New(rand.NewSource(1)), 1, events)
	set := testutil.ProtoDescriptorSet(b, testutil.OrderProtoFile())
	msgs := map[string][][]byte{}
	for _, o := range orders {
		msgs[exec.FormatJSON] = append(msgs[exec.FormatJSON], o.JSON())
		msgs[exec.FormatProtobuf] = append(msgs[exec.FormatProtobuf], o.Proto(b, set))
		msgs[exec.FormatAvro] = append(msgs[exec.FormatAvro], o.Avro(b))
	}
	cases := []struct{ name, cols string }{
		{"flat", "id bigint, qty integer, price double precision, paid boolean, note text, status text, created_at timestamptz, delta bigint"},
		{"all", testutil.OrderColumns},
	}
	formats := []string{exec.FormatJSON, exec.FormatProtobuf, exec.FormatAvro}
	for _, c := range cases {
		decs := map[string]*exec.RowDecoder{}
		for _, format := range formats {
			decs[format] = formatDecoder(b, format, c.cols, set)
		}
		// Rounds alternate the formats, and each format's rate is that of
		// its fastest pass over the events: on a shared machine the
		// passes that ran with the CPU to themselves.
		best := map[string]time.Duration{}
		start := time.Now()
		for round := 0; round < 5 || time.Since(start) < minTime*time.Duration(len(formats)); round++ {
			for _, format := range formats {
				t0 := time.Now()
				for _, m := range msgs[format] {
					if _, err := decs[format].Decode(m); err != nil {
						b.Fatalf("%s %s: %v", c.name, format, err)
					}
				}
				if dt := time.Since(t0); best[format] == 0 || dt < best[format] {
					best[format] = dt
				}
			}
		}
		rates := map[string]float64{}
		for _, format := range formats {
			rates[format] = float64(events) / best[format].Seconds()
			report.Add("FormatDecode", c.name, format+" decode", rates[format], "msgs/s")
		}
		for _, format := range formats[1:] {
			report.Add("FormatDecode", c.name, format+" / json", rates[format]/rates[exec.FormatJSON], "x")
		}
	}
}

// formatDecoder is the decoder a stream reader of format with columns
// cols uses.
func formatDecoder(b *testing.B, format, cols string, set []byte) *exec.RowDecoder {
	var tc []types.Column
	for _, def := range strings.Split(cols, ",") {
		name, typ, _ := strings.Cut(strings.TrimSpace(def), " ")
		t, mod, err := types.ParseWithModifier(typ)
		if err != nil {
			b.Fatal(err)
		}
		tc = append(tc, types.Column{Name: name, Type: t, Mod: mod})
	}
	d := &catalog.Descriptor{ID: 1, Name: "orders", Kind: catalog.KindStream, Columns: catalog.ColumnsFrom(tc), Format: format, Options: map[string]string{}}
	switch format {
	case exec.FormatProtobuf:
		d.FormatSchema, d.Options["message"] = set, "shop.Order"
	case exec.FormatAvro:
		d.FormatSchema = []byte(testutil.OrderAvroSchema)
	}
	if err := exec.CheckStreamFormat(d); err != nil {
		b.Fatal(fmt.Errorf("%s: %w", format, err))
	}
	mcols, missing, err := exec.DescriptorMessageColumns(d)
	if err != nil {
		b.Fatal(err)
	}
	return exec.NewMessageDecoder(mcols, missing).WithMetadata(d)
}
