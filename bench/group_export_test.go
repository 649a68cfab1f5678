package bench

import (
	"fmt"
	"slices"
	"testing"
)

const groupExportBench = "group-export"

// BenchmarkGroupExport measures what state.checkpoints.view-groups costs a
// checkpoint: one server, two views of N keys each (two view-groups),
// CHECKPOINTs taken alternately with the export off and on, side by side
// in one run, with no other load. The export rewrites every group's keys
// into span files at each checkpoint, so it grows with the state, not
// with the changes since the last checkpoint.
func BenchmarkGroupExport(b *testing.B) {
	keys := currentSizes(b).ckptKeys[:1]
	const rounds = 5
	report.Configf("group-export: views of %v keys (2 view-groups, one GROUP BY each); %d CHECKPOINTs with state.checkpoints.view-groups off and %d on, alternating; periodic checkpoints off; no load meanwhile", keys, rounds, rounds)
	for _, n := range keys {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			cas := fmt.Sprintf("%s keys per view", humanCount(n))
			s := startServer(b, "", map[string]string{"execution.checkpointing.interval": "0"})
			conn := s.Conn(b)
			execTimed(b, conn, "CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = 'bench.grp')")
			publishAll(b, s.NATSURL(), "bench.grp", n, 4, func(i int) []byte { return event(int64(i), 1) })
			execTimed(b, conn, "CREATE MATERIALIZED VIEW a AS SELECT k, count(*) AS n FROM ev GROUP BY k")
			execTimed(b, conn, "CREATE MATERIALIZED VIEW b AS SELECT k, sum(v) AS s FROM ev GROUP BY k")
			execTimed(b, conn, "FLUSH")
			var off, on []float64
			var sizeOff, sizeOn int64
			for range rounds {
				for _, v := range []string{"false", "true"} {
					execTimed(b, conn, "SET state.checkpoints.view-groups = "+v)
					d := execTimed(b, conn, "CHECKPOINT")
					r := newestCheckpoint(b, conn)
					if v == "true" {
						on, sizeOn = append(on, ms(d)), r.sizeBytes
					} else {
						off, sizeOff = append(off, ms(d)), r.sizeBytes
					}
				}
			}
			slices.Sort(off)
			slices.Sort(on)
			report.Add(groupExportBench, cas, "CHECKPOINT, export off (median)", off[len(off)/2], "ms")
			report.Add(groupExportBench, cas, "CHECKPOINT, export on (median)", on[len(on)/2], "ms")
			report.Add(groupExportBench, cas, "on / off", on[len(on)/2]/off[len(off)/2], "x")
			report.Add(groupExportBench, cas, "checkpoint size, export off", float64(sizeOff)/(1<<20), "MiB")
			report.Add(groupExportBench, cas, "checkpoint size, export on", float64(sizeOn)/(1<<20), "MiB")
		})
	}
}
