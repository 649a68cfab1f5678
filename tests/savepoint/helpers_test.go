package savepoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// seedFor returns the random source of a test's choices
// ($SAVEPOINT_SEED replays one), its seed logged as testutil.Seed does.
func seedFor(t *testing.T) *rand.Rand {
	seed := testutil.Seed(t, "SAVEPOINT_SEED")
	return rand.New(rand.NewPCG(seed, seed^0x5eed))
}

// ---- statements ----

const nullText = "NULL"

// queryText runs sql with the simple protocol and returns every value as
// text (NULL as "NULL").
func queryText(conn *pgx.Conn, timeout time.Duration, sql string) ([]string, [][]string, error) {
	return testutil.QueryText(conn, timeout, sql, nullText)
}

func mustQuery(t testing.TB, conn *pgx.Conn, sql string) [][]string {
	t.Helper()
	_, rows, err := queryText(conn, time.Minute, sql)
	if err != nil {
		t.Fatalf("%s: %v", testutil.OneLine(sql), err)
	}
	return rows
}

// sorted returns the rows of sql, each joined with "|", sorted.
func sorted(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, "|")
	}
	sort.Strings(out)
	return out
}

func mustRows(t testing.TB, conn *pgx.Conn, sql string) []string {
	t.Helper()
	return sorted(mustQuery(t, conn, sql))
}

func rowsErr(conn *pgx.Conn, sql string) ([]string, error) {
	_, rows, err := queryText(conn, time.Minute, sql)
	return sorted(rows), err
}

func diffRows(want, got []string) string {
	return fmt.Sprintf("want %d rows %q\n got %d rows %q", len(want), clip(want), len(got), clip(got))
}

func clip(r []string) []string {
	if len(r) > 12 {
		return append(append([]string(nil), r[:12]...), fmt.Sprintf("... %d more", len(r)-12))
	}
	return r
}

// pgCode is the SQLSTATE of err, "" for nil, "conn" for non-server errors.
func pgCode(err error) string {
	if err == nil {
		return ""
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return "conn"
}

func wantCode(t testing.TB, err error, code, what string) {
	t.Helper()
	if got := pgCode(err); got != code {
		t.Errorf("%s: want SQLSTATE %s, got %q (%v)", what, code, got, err)
	}
}

// ---- the workload: one stream ev(id, g, x) and views over it ----

type row struct {
	ID int64  `json:"id"`
	G  string `json:"g"`
	X  int64  `json:"x"`
}

func genRows(r *rand.Rand, firstID int64, n int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{ID: firstID + int64(i), G: string(rune('a' + r.IntN(5))), X: int64(r.IntN(100))}
	}
	return out
}

func streamDDL(name, subject string) string {
	return fmt.Sprintf("CREATE STREAM %s (id BIGINT, g VARCHAR, x BIGINT) WITH (subject = '%s', format = 'json')", name, subject)
}

// viewQueries are the views of most tests, over stream ev.
func viewQueries() map[string]string {
	return map[string]string{
		"totals":  "SELECT count(*) AS n, sum(x) AS s, min(x) AS lo, max(x) AS hi FROM ev",
		"per_g":   "SELECT g, count(*) AS n, sum(x) AS s FROM ev GROUP BY g",
		"big":     "SELECT id, g, x * 2 AS x2 FROM ev WHERE x >= 80",
		"g_max":   "SELECT g, max(x) AS m, count(DISTINCT x) AS d FROM ev GROUP BY g",
		"parity":  "SELECT x % 2 AS p, count(*) AS n FROM ev GROUP BY x % 2",
		"low_sum": "SELECT sum(x) AS s FROM (SELECT x FROM ev WHERE x < 30) AS l",
	}
}

func insertSQL(stream string, rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (id, g, x) VALUES ", stream)
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, '%s', %d)", r.ID, r.G, r.X)
	}
	return b.String()
}

// insert inserts rows in statements of at most 200 rows.
func insert(t testing.TB, conn *pgx.Conn, stream string, rows []row) {
	t.Helper()
	for len(rows) > 0 {
		n := min(200, len(rows))
		testutil.MustExec(t, conn, insertSQL(stream, rows[:n]))
		rows = rows[n:]
	}
}

// reference is PostgreSQL holding a table with some rows, to compute the
// expected answer of view queries.
type reference struct {
	t    testing.TB
	conn *pgx.Conn
}

func newReference(t testing.TB) *reference {
	pg := testutil.StartPostgres(t)
	conn := pg.Conn(t)
	return &reference{t: t, conn: conn}
}

// answer returns the sorted rows of query (over table named table) when
// the table holds exactly rows.
func (r *reference) answer(table string, rows []row, queries map[string]string) map[string][]string {
	r.t.Helper()
	testutil.MustExec(r.t, r.conn, "DROP TABLE IF EXISTS "+table, fmt.Sprintf("CREATE TABLE %s (id BIGINT, g TEXT, x BIGINT)", table))
	if len(rows) > 0 {
		insert(r.t, r.conn, table, rows)
	}
	out := map[string][]string{}
	for name, q := range queries {
		out[name] = mustRows(r.t, r.conn, q)
	}
	return out
}

// viewRows reads every named view (with an optional suffix such as
// " AS OF SAVEPOINT sp").
func viewRows(t testing.TB, conn *pgx.Conn, names []string, suffix string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, n := range names {
		out[n] = mustRows(t, conn, "SELECT * FROM "+n+suffix)
	}
	return out
}

func compareViews(t testing.TB, what string, want, got map[string][]string) bool {
	t.Helper()
	ok := true
	for name, w := range want {
		g, present := got[name]
		if !present {
			t.Errorf("%s: view %s not read", what, name)
			ok = false
			continue
		}
		if !slices.Equal(w, g) {
			t.Errorf("%s: view %s differs:\n%s", what, name, diffRows(w, g))
			ok = false
		}
	}
	return ok
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func subset(m map[string]string, names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		out[n] = m[n]
	}
	return out
}

// viewNames lists SHOW MATERIALIZED VIEWS, sorted.
func viewNames(t testing.TB, conn *pgx.Conn) []string {
	t.Helper()
	var out []string
	for _, r := range mustQuery(t, conn, "SHOW MATERIALIZED VIEWS") {
		out = append(out, r[0])
	}
	sort.Strings(out)
	return out
}

// savepointNames lists SHOW SAVEPOINTS names, sorted.
func savepointNames(t testing.TB, conn *pgx.Conn) []string {
	t.Helper()
	var out []string
	for _, r := range mustQuery(t, conn, "SHOW SAVEPOINTS") {
		out = append(out, r[0])
	}
	sort.Strings(out)
	return out
}

// ---- NATS ----

// streamMessages reads every message retained on subject, in sequence
// order, with an ordered consumer.
func streamMessages(t testing.TB, js jetstream.JetStream, subject string) []row {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []row
	if info.State.Msgs == 0 {
		return out
	}
	cons, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ci, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ci.NumPending == 0 && len(out) > 0 {
			return out
		}
		batch, err := cons.FetchNoWait(1000)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			var r row
			if err := json.Unmarshal(m.Data(), &r); err != nil {
				t.Fatalf("message %q: %v", m.Data(), err)
			}
			out = append(out, r)
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			if ctx.Err() != nil {
				t.Fatalf("reading %s: %v after %d messages", subject, ctx.Err(), len(out))
			}
			time.Sleep(10 * time.Millisecond) // poll interval; ctx is the deadline
		}
	}
}

// ---- files ----

// goAnswer computes a view of viewQueries over rows in Go, in PostgreSQL's
// text format, sorted.
func goAnswer(view string, rows []row) []string {
	var out []string
	switch view {
	case "totals":
		if len(rows) == 0 {
			return []string{"0|NULL|NULL|NULL"}
		}
		var s, lo, hi int64 = 0, rows[0].X, rows[0].X
		for _, r := range rows {
			s += r.X
			lo, hi = min(lo, r.X), max(hi, r.X)
		}
		out = []string{fmt.Sprintf("%d|%d|%d|%d", len(rows), s, lo, hi)}
	case "per_g", "g_max":
		n, s, m := map[string]int64{}, map[string]int64{}, map[string]int64{}
		d := map[string]map[int64]bool{}
		for _, r := range rows {
			if d[r.G] == nil {
				d[r.G] = map[int64]bool{}
				m[r.G] = r.X
			}
			n[r.G]++
			s[r.G] += r.X
			m[r.G] = max(m[r.G], r.X)
			d[r.G][r.X] = true
		}
		for g := range n {
			if view == "per_g" {
				out = append(out, fmt.Sprintf("%s|%d|%d", g, n[g], s[g]))
			} else {
				out = append(out, fmt.Sprintf("%s|%d|%d", g, m[g], len(d[g])))
			}
		}
	case "big":
		for _, r := range rows {
			if r.X >= 80 {
				out = append(out, fmt.Sprintf("%d|%s|%d", r.ID, r.G, 2*r.X))
			}
		}
	case "parity":
		n := map[int64]int64{}
		for _, r := range rows {
			n[r.X%2]++
		}
		for p, c := range n {
			out = append(out, fmt.Sprintf("%d|%d", p, c))
		}
	case "low_sum":
		var s int64
		any := false
		for _, r := range rows {
			if r.X < 30 {
				s += r.X
				any = true
			}
		}
		if !any {
			return []string{nullText}
		}
		out = []string{fmt.Sprint(s)}
	default:
		panic("goAnswer: unknown view " + view)
	}
	sort.Strings(out)
	return out
}

// prefixLen returns the P >= minP for which got is the view's answer over
// msgs[:P], or -1.
func prefixLen(view string, got []string, msgs []row, minP int) int {
	for p := minP; p <= len(msgs); p++ {
		if slices.Equal(goAnswer(view, msgs[:p]), got) {
			return p
		}
	}
	return -1
}

// logPanics logs, for each connection handler panic in the server's log,
// the panic value and the streamdb frames of its stack.
func logPanics(t testing.TB, srv *testutil.Server) {
	t.Helper()
	for _, line := range strings.Split(srv.Logs(), "\n") {
		if !strings.Contains(line, "connection handler panicked") {
			continue
		}
		var frames []string
		for _, f := range strings.Split(line, `\n`) {
			if strings.HasPrefix(f, "streamdb/") && !strings.HasPrefix(f, "streamdb/pgwire") {
				if i := strings.LastIndex(f, "("); i > 0 {
					f = f[:i]
				}
				frames = append(frames, strings.TrimPrefix(f, "streamdb/"))
			}
		}
		panicVal := line
		if i := strings.Index(line, `panic="`); i >= 0 {
			panicVal = line[i+7:]
			if j := strings.IndexAny(panicVal, "\"\\"); j >= 0 {
				panicVal = panicVal[:j]
			}
		}
		t.Logf("server panic %q in %s", panicVal, strings.Join(frames, " < "))
	}
}
