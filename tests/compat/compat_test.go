// Package compat checks that a data directory written by an earlier
// streamdb keeps working: its views read the rows they held and go on
// updating, in step with views created afresh over the same input. Each
// generation of data directory is committed under testdata as a tarball;
// a change to state formats, operator numbering or the plans the binder
// makes for stored queries shows here as a view that reads wrong rows,
// stops, or disagrees with its fresh twin.
//
// To add a generation (after a change that is meant to keep reading older
// state): STREAMDB_COMPAT_WRITE=<name> go test ./tests/compat -run TestCompatWrite
// writes testdata/<name>.tar.gz and testdata/<name>.json.
package compat

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// schema is what every generation holds: a stream with a watermark, a
// keyed table, and views of each kind of operator (aggregate, join with a
// table, top-N, window, view over a view).
var schema = []string{
	`CREATE STREAM ev (k int, v bigint, ts timestamp, s text, WATERMARK FOR ts AS ts - interval '1 minute') WITH (subject = 'compat.ev')`,
	`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric)`,
}

// views are the views every generation holds, by name.
var views = map[string]string{
	"per_k":     `SELECT k, count(*) AS n, sum(v) AS total, min(s) AS first_s, max(v) AS top FROM ev GROUP BY k`,
	"by_name":   `SELECT i.name, count(*) AS n, sum(e.v * i.price) AS revenue FROM ev e JOIN items i ON i.id = e.k GROUP BY i.name`,
	"top5":      `SELECT k, v FROM ev ORDER BY v DESC, k LIMIT 5`,
	"per_min":   `SELECT window_start, count(*) AS n, max(v) AS top FROM TUMBLE(ev, ts, interval '1 minute') GROUP BY window_start`,
	"over_view": `SELECT count(*) AS groups, sum(total) AS total FROM per_k`,
	"items_cnt": `SELECT count(*) AS n, sum(price) AS value FROM items`,
}

// formatViews are views whose state is in the formats added after the
// views above were first written: min and max over a retracting input
// kept by value (catalog.DataflowExtremaByValue), a top-N over one keyed
// by rank (DataflowTopNStateByKey), two scans of a stream with a
// watermark sharing its reader (DataflowSharedWatermarkScans) and
// intervals in group keys and extrema (DataflowIntervalSpans). A
// generation records the ones it holds (Generation.Views, from gen6 on).
var formatViews = map[string]string{
	"price_range": `SELECT name, count(*) AS n, min(price) AS low, max(price) AS high FROM items GROUP BY name`,
	"top_items":   `SELECT id, name, price FROM items ORDER BY price DESC, id LIMIT 3`,
	"hi_lo":       `SELECT 'hi' AS side, count(*) AS n, max(v) AS top FROM ev WHERE v >= 500 UNION ALL SELECT 'lo' AS side, count(*) AS n, max(v) AS top FROM ev WHERE v < 500`,
	"per_span":    `SELECT CASE k % 3 WHEN 0 THEN interval '1 day' WHEN 1 THEN interval '24 hours' ELSE interval '36 hours' END AS span, count(*) AS n, min(ts - timestamp '2026-01-01 00:00:00') AS first_at, max(ts - timestamp '2026-01-01 00:00:00') AS last_at FROM ev GROUP BY 1`,
}

// genViews is every view of generation gen by name: views and the
// generation's own (Generation.Views).
func genViews(gen Generation) map[string]string {
	out := maps.Clone(views)
	maps.Copy(out, gen.Views)
	return out
}

// viewOrder creates per_k before the view over it.
func viewOrder() []string {
	names := make([]string, 0, len(views))
	for n := range views {
		if n != "over_view" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return append(names, "over_view")
}

// event i of the deterministic input; batches start at different i.
func event(i int) string {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 7 * time.Second)
	return fmt.Sprintf(`{"k": %d, "v": %d, "ts": "%s", "s": "s%03d"}`, i%13, (i*7919)%1000, ts.Format("2006-01-02T15:04:05"), i%97)
}

// Generation is what a committed generation records besides its data
// directory: each view's rows when the directory was written, and how many
// events the stream held.
type Generation struct {
	Commit string              `json:"commit"`
	Events int                 `json:"events"`
	Rows   map[string][]string `json:"rows"`
	// PlanRecords: every view stored the plan it was created with, and
	// starts from it (generations from gen2 on).
	PlanRecords bool `json:"plan_records,omitempty"`
	// Savepoint names a savepoint the generation took once its input was
	// read (so its views held Rows), before it altered the views in
	// Altered (generations from gen3 on).
	Savepoint string `json:"savepoint,omitempty"`
	// Altered lists the views altered (ALTER MATERIALIZED VIEW, keeping
	// their state) to the same query with HAVING count(*) > 0, which
	// keeps their rows.
	Altered []string `json:"altered,omitempty"`
	// Views are the generation's views besides those of views, by name
	// and query (formatViews; generations from gen6 on).
	Views map[string]string `json:"views,omitempty"`
}

// alteredSuffix is what a generation's ALTER adds to a view's query.
const alteredSuffix = " HAVING count(*) > 0"

// TestCompatWrite writes a generation; it runs only when asked to.
func TestCompatWrite(t *testing.T) {
	name := os.Getenv("STREAMDB_COMPAT_WRITE")
	if name == "" {
		t.Skip("set STREAMDB_COMPAT_WRITE=<name> to write testdata/<name>.tar.gz")
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	for _, q := range schema {
		exec(t, conn, q)
	}
	for _, n := range viewOrder() {
		exec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, views[n]))
	}
	for n, q := range formatViews {
		exec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, q))
	}
	const events = 400
	publish(t, srv, 0, events)
	for i := 0; i < 13; i++ {
		exec(t, conn, fmt.Sprintf("INSERT INTO items VALUES (%d, 'item%d', %d.25)", i, i%5, i+1))
	}
	gen := Generation{Commit: os.Getenv("STREAMDB_COMPAT_COMMIT"), Events: events, Rows: map[string][]string{},
		Savepoint: "gen_point", Altered: []string{"per_k"}, Views: formatViews}
	exec(t, conn, "UPDATE items SET price = price * 2 WHERE id < 4", "DELETE FROM items WHERE id = 12", "FLUSH",
		"SAVEPOINT "+gen.Savepoint)
	for _, n := range gen.Altered {
		exec(t, conn, fmt.Sprintf("ALTER MATERIALIZED VIEW %s AS %s%s", n, views[n], alteredSuffix))
	}
	exec(t, conn, "FLUSH", "CHECKPOINT")
	for n := range genViews(gen) {
		gen.Rows[n] = rows(t, conn, "SELECT * FROM "+n)
	}
	srv.Stop(t)
	gen.PlanRecords = len(viewsWithoutPlan(t, srv.DataDir)) == 0
	writeTarball(t, srv.DataDir, filepath.Join("testdata", name+".tar.gz"))
	data, err := json.MarshalIndent(gen, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompatRead starts today's server on each committed generation.
func TestCompatRead(t *testing.T) {
	forEachGeneration(t, readGeneration)
}

// forEachGeneration runs test, in parallel, on every generation committed
// under testdata.
func forEachGeneration(t *testing.T, test func(t *testing.T, name string)) {
	tarballs, err := filepath.Glob(filepath.Join("testdata", "*.tar.gz"))
	if err != nil || len(tarballs) == 0 {
		t.Fatalf("no generations under testdata (%v)", err)
	}
	for _, tb := range tarballs {
		name := strings.TrimSuffix(filepath.Base(tb), ".tar.gz")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, name)
		})
	}
}

// loadGeneration reads generation name's record and extracts its data
// directory into a fresh temporary directory.
func loadGeneration(t *testing.T, name string) (gen Generation, dataDir string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &gen); err != nil {
		t.Fatal(err)
	}
	dataDir = t.TempDir()
	extractTarball(t, filepath.Join("testdata", name+".tar.gz"), dataDir)
	return gen, dataDir
}

func readGeneration(t *testing.T, name string) {
	gen, dataDir := loadGeneration(t, name)
	if missing := viewsWithoutPlan(t, dataDir); gen.PlanRecords && len(missing) > 0 {
		t.Fatalf("views %v of %s have no plan record", missing, name)
	}
	readGenerationIn(t, gen, dataDir)
}

// readGenerationIn starts today's server on dataDir, which holds
// generation gen, and checks its views: their rows, then in step with
// fresh twins after new input and after a restart. It returns the server,
// running.
func readGenerationIn(t *testing.T, gen Generation, dataDir string) *testutil.Server {
	srv := testutil.StartServer(t, testutil.ServerOptions{DataDir: dataDir})
	conn := srv.Conn(t)

	// The views read what they held when the directory was written.
	for n, want := range gen.Rows {
		if got := rows(t, conn, "SELECT * FROM "+n); !slices.Equal(got, want) {
			t.Errorf("view %s after the upgrade:\n got %v\nwant %v", n, got, want)
		}
	}
	checkPointLookups(t, conn, "per_k", "k", gen.Rows["per_k"])

	// Fresh twins over the same input; then more input for both.
	for _, n := range viewOrder() {
		q := views[n]
		if n == "over_view" {
			q = strings.ReplaceAll(q, "per_k", "per_k_fresh")
		}
		exec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s_fresh AS %s", n, q))
	}
	for n, q := range gen.Views {
		exec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s_fresh AS %s", n, q))
	}
	publish(t, srv, gen.Events, 250)
	exec(t, conn,
		"INSERT INTO items VALUES (12, 'item2', 99.5)",
		"UPDATE items SET name = 'renamed' WHERE id = 1",
		"DELETE FROM items WHERE id = 5",
		"FLUSH")
	for n := range genViews(gen) {
		got, fresh := rows(t, conn, "SELECT * FROM "+n), rows(t, conn, "SELECT * FROM "+n+"_fresh")
		if !slices.Equal(got, fresh) {
			t.Errorf("view %s from the old directory and its fresh twin differ after new input:\n old   %v\n fresh %v", n, got, fresh)
		}
		if slices.Equal(got, gen.Rows[n]) && n != "items_cnt" {
			t.Errorf("view %s did not change after new input: %v", n, got)
		}
	}
	// And once more after a restart.
	srv.Restart(t)
	conn = srv.Conn(t)
	for n := range genViews(gen) {
		if got, fresh := rows(t, conn, "SELECT * FROM "+n), rows(t, conn, "SELECT * FROM "+n+"_fresh"); !slices.Equal(got, fresh) {
			t.Errorf("view %s and its fresh twin differ after a restart:\n old   %v\n fresh %v", n, got, fresh)
		}
	}
	return srv
}

func exec(t *testing.T, conn *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, q := range sqls {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		_, err := conn.Exec(ctx, q)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// rows returns a query's rows as text, sorted.
func rows(t *testing.T, conn *pgx.Conn, q string) []string {
	t.Helper()
	return testutil.SortedRows(t, conn, q)
}

// publish sends events from..from+n-1 to the stream's subject.
func publish(t *testing.T, srv *testutil.Server, from, n int) {
	t.Helper()
	nc, js := testutil.JetStream(t, srv.NATSURL())
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := from; i < from+n; i++ {
		if _, err := js.Publish(ctx, "compat.ev", []byte(event(i))); err != nil {
			t.Fatalf("publish event %d: %v", i, err)
		}
	}
}

func writeTarball(t *testing.T, dir, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s: symlinks are not expected in a data directory", rel)
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = rel
		hdr.ModTime = time.Unix(0, 0)
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			src, err := os.Open(p)
			if err != nil {
				return err
			}
			defer src.Close()
			_, err = io.Copy(tw, src)
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
}

func extractTarball(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, filepath.Clean(hdr.Name))
		if !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			t.Fatalf("%s: entry %q leaves the directory", path, hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(hdr.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			out.Close()
		}
	}
}

// checkPointLookups reads each row of view (rows as text, sorted) by its
// key column key, the first, as one point read (WHERE key = value), and
// checks it finds that row alone: the keys the rows are stored under
// (their vnodes, catalog.DataflowViewRowVNodes) are the keys a lookup
// computes.
func checkPointLookups(t *testing.T, conn *pgx.Conn, view, key string, want []string) {
	t.Helper()
	for _, row := range want {
		k, _, _ := strings.Cut(row, "|")
		q := fmt.Sprintf("SELECT * FROM %s WHERE %s = %s", view, key, k)
		if got := rows(t, conn, q); !slices.Equal(got, []string{row}) {
			t.Errorf("%s: got %v, want [%s]", q, got, row)
		}
	}
}
