package jdbc

import (
	"fmt"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// typedSchema is a table with a column of every type streamdb has,
// arrays included.
const typedSchema = "CREATE TABLE typed (id int PRIMARY KEY, i2 smallint, i8 bigint, f4 real, f8 double precision, " +
	"n numeric(10,2), t text, v varchar(10), b boolean, d date, ts timestamp, tz timestamptz, iv interval, " +
	"tm time, by bytea, tags text[], ns int[])"

// TestTypesMatchPostgres: pgjdbc reads every type (getString, and
// getArray for arrays) from streamdb as from PostgreSQL 15; getColumns
// describes the array columns alike; setArray (createArrayOf) binds array
// parameters in a cast, = ANY (?) and an INSERT; transactions commit and
// roll back with autocommit off; setFetchSize reads through a portal;
// CopyManager copies rows in and out.
func TestTypesMatchPostgres(t *testing.T) {
	testutil.JDBCJar(t)
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	script := []string{
		typedSchema,
		`INSERT INTO typed VALUES (1, 2, 9007199254740993, 1.5, 2.25, 12.50, 'héllo', 'v', true, '2020-02-29', ` +
			`'2020-01-02 03:04:05.25', '2020-01-02 03:04:05+02', '1 day 02:03:04.5', '12:34:56.5', '\x00ff41', '{a,"b c",NULL,""}', '{1,NULL,3}')`,
		`SELECT * FROM typed`,
		`SELECT ARRAY[1.5, 2]::numeric[], '{t,f}'::bool[], '{2020-01-02}'::date[], '{"2020-01-02 03:04:05"}'::timestamp[], '{x}'::varchar[], '{}'::int8[]`,
		`\meta getColumns typed`,
		"\\prepare SELECT ?::int[]\tintarray:4,5,6",
		"\\prepare SELECT count(*) FROM typed WHERE id = ANY (?)\tintarray:1,2,3",
		"\\prepare INSERT INTO typed (id, tags, ns) VALUES (?, ?, ?)\tint:2\ttextarray:x,y z\tintarray:7",
		"\\prepare SELECT id, tags, ns FROM typed WHERE tags @> ?\ttextarray:y z",
		`\autocommit off`,
		`INSERT INTO typed (id) VALUES (3)`,
		`\rollback`,
		`INSERT INTO typed (id) VALUES (4)`,
		`\commit`,
		`\fetch 1 SELECT id, ns FROM typed ORDER BY id`,
		`\autocommit on`,
		`\copyout COPY (SELECT id, tags FROM typed ORDER BY id) TO STDOUT`,
		"\\copyin COPY typed (id, tags) FROM STDIN WITH (DELIMITER '|')\t5|{p,\"q r\"}\t6|\\N",
		`SELECT id, tags FROM typed WHERE id >= 5 ORDER BY id`,
	}
	pgURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/postgres?user=postgres", pg.Port)
	sdbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/streamdb?user=streamdb", srv.Port)
	want := publicOrData(testutil.RunJDBC(t, pgURL, script...))
	got := publicOrData(testutil.RunJDBC(t, sdbURL, script...))
	want = strings.ReplaceAll(want, "postgres\t", "streamdb\t")
	if got != want {
		t.Errorf("JDBC answers differ from PostgreSQL's\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	for _, w := range []string{"{a,\"b c\",NULL,\"\"} [a, b c, null, ]", "{4,5,6} [4, 5, 6]", "\ttags\t2003\t_text\t", "copied 2"} {
		if !strings.Contains(got, w) {
			t.Errorf("streamdb's answers lack %q:\n%s", w, got)
		}
	}
}

// publicOrData drops the \meta rows about schemas other than public (the
// system catalogs differ between the servers) and keeps every other line.
func publicOrData(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Count(l, "\t") > 3 && strings.HasPrefix(l, "streamdb\t") || strings.HasPrefix(l, "postgres\t") {
			if !strings.Contains(l, "\tpublic\t") {
				continue
			}
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}
