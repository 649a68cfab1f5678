package compat

import (
	"maps"
	"strings"
	"testing"

	"streamdb/catalog"
	"streamdb/tests/testutil"
)

// migratedFormats is the format each view of a generation is at once
// today's server has started on it (exec.MigrateView): a view moves
// through the format steps that leave its state as it is and those whose
// migration rewrites it (sums given their special counts on the step to
// DataflowSumSpecials, over_view's and per_k's alike in over_view's
// dataflow, top5's top-N re-keyed by rank on the step to
// DataflowTopNStateByKey, by_name's join state narrowed, re-keyed by id,
// paged and keyed by join key on the steps to DataflowJoinStateByKey),
// and stops before the first other one that changes it. No view stays
// below catalog.DataflowMinSupported.
var migratedFormats = map[string]map[string]catalog.FormatVersion{
	// Format 0, each scan with a reader of its own: scans of ev, which
	// has a WATERMARK, share none before DataflowSharedWatermarkScans, so
	// the steps to DataflowJoinStatePaged change only joins: by_name, a
	// join with a table (not append-only), has the rows its join keeps
	// narrowed, re-keyed by id and paged on the steps to
	// DataflowJoinStatePaged, its sum given special counts, and its join
	// state keyed by join key. over_view computes per_k's operators itself:
	// both aggregates' sums get their special counts. per_k's and
	// items_cnt's sums get theirs, and top5's top-N is re-keyed by rank.
	// The scans of the table or view stop by_name, over_view,
	// price_range, top_items and items_cnt before DataflowViewEdges;
	// hi_lo's two scans of ev stop it before DataflowSharedWatermarkScans.
	"gen0-2026-11-29": {
		"per_k": catalog.DataflowLatest, "by_name": 8, "items_cnt": 8, "over_view": 8,
		"top5": catalog.DataflowLatest, "per_min": catalog.DataflowLatest,
		"price_range": 8, "top_items": 8, "hi_lo": 11,
	},
	// Format 6, sums over numeric: per_k's, items_cnt's, by_name's and
	// over_view's (and per_k's in over_view's dataflow) get their special
	// counts; by_name's join state is keyed by join key. The scans of
	// the table or view stop by_name, items_cnt and over_view before
	// DataflowViewEdges.
	"gen1-2026-12-01": {
		"per_k": catalog.DataflowLatest, "by_name": 8, "items_cnt": 8, "over_view": 8,
		"top5": catalog.DataflowLatest, "per_min": catalog.DataflowLatest,
	},
	// Format 8: scans of tables and views (by_name, items_cnt, over_view)
	// stop before DataflowViewEdges.
	"gen2-2026-12-01": {
		"by_name": 8, "items_cnt": 8, "over_view": 8,
		"top5": catalog.DataflowLatest, "per_k": catalog.DataflowLatest, "per_min": catalog.DataflowLatest,
	},
	"gen3-2026-12-02": allViews(catalog.DataflowLatest),
	"gen4-2026-12-03": allViews(catalog.DataflowLatest),
	"gen5-2026-12-06": allViews(catalog.DataflowLatest),
	"gen6-2026-12-07": allViews(catalog.DataflowLatest),
	// Format 14 (DataflowVNodeKeys): by_name's join state gets the vnodes
	// of its join keys on the step to DataflowJoinVNodes.
	"gen7-2026-12-07": allViews(catalog.DataflowLatest),
}

// allViews puts every view a generation may hold (views and formatViews)
// at format f.
func allViews(f catalog.FormatVersion) map[string]catalog.FormatVersion {
	out := map[string]catalog.FormatVersion{}
	for n := range views {
		out[n] = f
	}
	for n := range formatViews {
		out[n] = f
	}
	return out
}

// movedLog is what the server logs for each view it moves to a newer
// format.
const movedLog = "moved materialized view to a newer format"

// TestCompatMigrate: at start, a generation's views move to the formats
// of migratedFormats, recorded in their descriptors and the directory's
// format, and read and update as before (readGenerationIn). A crash right
// after the first view moved leaves that view moved and the others as
// they were; the next start moves the rest, and a restart after that
// moves nothing.
func TestCompatMigrate(t *testing.T) {
	forEachGeneration(t, func(t *testing.T, name string) {
		all, ok := migratedFormats[name]
		if !ok {
			t.Fatalf("no migratedFormats entry for %s", name)
		}
		gen, dataDir := loadGeneration(t, name)
		before := viewFormats(t, dataDir)
		want := map[string]catalog.FormatVersion{}
		for n := range before {
			want[n] = all[n]
			if want[n] < catalog.DataflowMinSupported {
				t.Errorf("%s: view %s is to stay at format %d, older than this binary reads (%d)", name, n, want[n], catalog.DataflowMinSupported)
			}
		}
		moving := 0
		for n, f := range before {
			if want[n] != f {
				moving++
			}
		}

		// A generation of today's formats has no view to move, and so no
		// crash point is reached.
		moved := 0
		for n, f := range crashedFormats(t, dataDir, moving) {
			switch f {
			case before[n]:
			case want[n]:
				moved++
			default:
				t.Errorf("%s: view %s at format %d after the crash, want %d or %d", name, n, f, before[n], want[n])
			}
		}
		if moving > 0 && moved != 1 {
			t.Errorf("%s: %d views moved before the crash, want 1 (of %d)", name, moved, moving)
		}

		srv := readGenerationIn(t, gen, dataDir)
		logs := srv.Logs()
		srv.Stop(t)
		if got := viewFormats(t, dataDir); !maps.Equal(got, want) {
			t.Errorf("%s: view formats after the start %v, want %v", name, got, want)
		}
		if n := strings.Count(logs, movedLog); n != moving-moved {
			t.Errorf("%s: %d views moved after the crash, want %d:\n%s", name, n, moving-moved, logs)
		}
		st, _ := openCatalog(t, dataDir)
		dir, _, err := st.Format()
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		newest := catalog.FormatVersion(0)
		for _, f := range want {
			newest = max(newest, f)
		}
		if dir < newest {
			t.Errorf("%s: the directory records format %d, older than its newest view's, %d", name, dir, newest)
		}
	})
}

// crashedFormats starts the server on dataDir with a crash right after
// the first view moved to a newer format, and returns the view formats
// the crash left; with no view moving (moving 0) it returns them as they
// are.
func crashedFormats(t *testing.T, dataDir string, moving int) map[string]catalog.FormatVersion {
	t.Helper()
	if moving > 0 {
		out := startExits(t, testutil.BuildServer(t), dataDir, []string{"STREAMDB_FAULTS=view-format-moved"})
		t.Logf("the server crashed after moving a view:\n%s", out)
	}
	return viewFormats(t, dataDir)
}

// viewFormats reads the format of every view of a generation (views and
// formatViews, not the fresh twins) in a stopped server's data directory.
func viewFormats(t *testing.T, dataDir string) map[string]catalog.FormatVersion {
	t.Helper()
	st, descs := openCatalog(t, dataDir)
	defer st.Close()
	out := map[string]catalog.FormatVersion{}
	for _, d := range descs {
		_, known := views[d.Name]
		if _, ok := formatViews[d.Name]; ok {
			known = true
		}
		if known && d.Kind == catalog.KindView {
			out[d.Name] = d.Dataflow
		}
	}
	return out
}
