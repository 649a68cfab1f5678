package differential

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Tables with random changes. accounts has a primary key and takes
// INSERT, UPDATE (of any column, the key included) and DELETE; notes has
// none and takes the same, with equal rows allowed. The same statement
// text runs in streamdb and in PostgreSQL, one at a time, and both must
// report the same command tag; views over the tables then have to follow
// every change as retractions.

var tableDDL = []string{
	`CREATE TABLE accounts (user_id BIGINT PRIMARY KEY, name VARCHAR, region VARCHAR, tier INT, balance BIGINT)`,
	`CREATE TABLE notes (user_id BIGINT, note VARCHAR, weight INT)`,
}

var (
	regions = []string{"'eu'", "'us'", "'apac'", "'Ünï'", "NULL"}
	names   = []string{"'ann'", "'bob'", "'o''brien'", "'日本'", "''", "NULL", "'zoë'"}
	notesV  = []string{"'vip'", "'late payer'", "'new'", "'x'", "NULL", "'100%'"}
)

// tableGen makes table statements from a seed. It needs the live keys of
// accounts (read from PostgreSQL before each statement) to insert new keys
// and to move existing ones without violating the primary key.
type tableGen struct{ r *rand.Rand }

func newTableGen(seed uint64) *tableGen {
	return &tableGen{r: rand.New(rand.NewPCG(seed^0x5bd1e995, seed+17))}
}

func (g *tableGen) pick(vals []string) string { return vals[g.r.IntN(len(vals))] }

// userID is drawn from the same range as the events' user ids, so that
// joins match.
func (g *tableGen) userID() int64 { return int64(g.r.IntN(425)) - 25 }

func (g *tableGen) freeID(live map[int64]bool) (int64, bool) {
	for range 50 {
		if id := g.userID(); !live[id] {
			return id, true
		}
	}
	return 0, false
}

func (g *tableGen) liveID(live map[int64]bool, ids []int64) (int64, bool) {
	if len(ids) == 0 {
		return 0, false
	}
	return ids[g.r.IntN(len(ids))], true
}

func (g *tableGen) nullable(v string) string {
	if g.r.IntN(10) == 0 {
		return "NULL"
	}
	return v
}

// next returns one statement. ids lists live accounts keys in a fixed order.
func (g *tableGen) next(live map[int64]bool, ids []int64) string {
	r := g.r
	switch n := r.IntN(100); {
	case n < 30 || len(ids) < 20: // insert new accounts
		var rows []string
		used := map[int64]bool{}
		for range 1 + r.IntN(5) {
			id, ok := g.freeID(live)
			if !ok || used[id] {
				continue
			}
			used[id] = true
			rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s, %s)", id, g.pick(names), g.pick(regions),
				g.nullable(fmt.Sprint(r.IntN(4))), g.nullable(fmt.Sprint(r.IntN(1200)-150))))
		}
		if len(rows) == 0 {
			return "DELETE FROM accounts WHERE balance < 0"
		}
		return "INSERT INTO accounts VALUES " + strings.Join(rows, ", ")
	case n < 42:
		return fmt.Sprintf("UPDATE accounts SET balance = balance + %d WHERE region = %s AND tier %s %d",
			r.IntN(200)-80, g.pick(regions), []string{"=", "<", ">="}[r.IntN(3)], r.IntN(4))
	case n < 52:
		id, _ := g.liveID(live, ids)
		return fmt.Sprintf("UPDATE accounts SET region = %s, tier = %s WHERE user_id = %d", g.pick(regions), g.nullable(fmt.Sprint(r.IntN(4))), id)
	case n < 58: // move a key
		from, _ := g.liveID(live, ids)
		to, ok := g.freeID(live)
		if !ok {
			return fmt.Sprintf("DELETE FROM accounts WHERE user_id = %d", from)
		}
		return fmt.Sprintf("UPDATE accounts SET user_id = %d, name = %s WHERE user_id = %d", to, g.pick(names), from)
	case n < 66:
		id, _ := g.liveID(live, ids)
		return fmt.Sprintf("DELETE FROM accounts WHERE user_id = %d", id)
	case n < 70:
		return fmt.Sprintf("DELETE FROM accounts WHERE balance < %d AND region IS NOT DISTINCT FROM %s", r.IntN(300), g.pick(regions))
	case n < 85: // notes: equal rows are common
		var rows []string
		for range 1 + r.IntN(4) {
			rows = append(rows, fmt.Sprintf("(%d, %s, %s)", g.userID(), g.pick(notesV), g.nullable(fmt.Sprint(r.IntN(5)))))
		}
		return "INSERT INTO notes VALUES " + strings.Join(rows, ", ")
	case n < 92:
		return fmt.Sprintf("UPDATE notes SET weight = weight * 2 + 1, note = %s WHERE user_id %% 7 = %d AND note IS NOT NULL", g.pick(notesV), r.IntN(7))
	default:
		return fmt.Sprintf("DELETE FROM notes WHERE note IS NOT DISTINCT FROM %s AND coalesce(weight, 0) <= %d", g.pick(notesV), r.IntN(5))
	}
}

// setupTables creates the tables on both sides.
func (d *diffTest) setupTables() {
	d.t.Helper()
	for _, sql := range tableDDL {
		d.exec(d.sdb, "streamdb", sql)
		d.exec(d.pg, "postgres", sql)
	}
}

// changeTables runs n generated statements on both sides and checks that
// they affect the same number of rows.
func (d *diffTest) changeTables(g *tableGen, n int) {
	d.t.Helper()
	for range n {
		live := map[int64]bool{}
		var ids []int64
		rows, err := d.pg.Query(d.ctx, "SELECT user_id FROM accounts ORDER BY user_id")
		if err != nil {
			d.fatalf("postgres: reading accounts keys: %v", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				d.fatalf("postgres: %v", err)
			}
			live[id] = true
			ids = append(ids, id)
		}
		rows.Close()
		sql := g.next(live, ids)
		pgTag, err := d.pg.Exec(d.ctx, sql)
		if err != nil {
			d.fatalf("postgres: %s: %v", sql, err)
		}
		sdbTag, err := d.sdb.Exec(d.ctx, sql)
		if err != nil {
			d.fatalf("streamdb: %s: %v", sql, err)
		}
		if pgTag.String() != sdbTag.String() {
			d.errorf("%s: streamdb says %q, PostgreSQL %q", sql, sdbTag, pgTag)
		}
		d.tableStatements++
	}
}
