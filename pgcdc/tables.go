package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Table is a source table as its catalog describes it.
type Table struct {
	Schema, Name string
	Columns      []Column
	// Key lists the indexes in Columns of the primary key, in key order;
	// empty when the table has none.
	Key []int
	// ReplicaIdentity is pg_class.relreplident: 'd' (the primary key),
	// 'f' (full), 'i' (an index) or 'n' (nothing).
	ReplicaIdentity byte
}

// Column is one column of a source table.
type Column struct {
	Name string
	// Type is format_type's spelling (e.g. "numeric(12,2)",
	// "timestamp with time zone", "text[]").
	Type    string
	NotNull bool
}

// QualifiedName is schema.name, each part quoted when it needs to be.
func (t *Table) QualifiedName() string { return quoteIdent(t.Schema) + "." + quoteIdent(t.Name) }

// PublicationTables returns the schema and name of every table in
// publication pub, ordered.
func PublicationTables(ctx context.Context, ep Endpoint, pub string) ([][2]string, error) {
	conn, err := connectSQL(ctx, ep)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", pub).Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("publication %q does not exist in the source database", pub)
	}
	rows, err := conn.Query(ctx, "SELECT schemaname::text, tablename::text FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1, 2", pub)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var s, n string
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out = append(out, [2]string{s, n})
	}
	return out, rows.Err()
}

// DescribeTables reads the columns, primary key and replica identity of
// each named table, and checks that publication pub holds it.
func DescribeTables(ctx context.Context, ep Endpoint, pub string, names [][2]string) ([]*Table, error) {
	conn, err := connectSQL(ctx, ep)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var out []*Table
	for _, n := range names {
		t := &Table{Schema: n[0], Name: n[1]}
		var oid uint32
		var ident string
		var published bool
		err := conn.QueryRow(ctx, `SELECT c.oid, c.relreplident::text,
			EXISTS (SELECT 1 FROM pg_publication_tables p WHERE p.pubname = $3 AND p.schemaname = $1 AND p.tablename = $2)
			FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
			WHERE s.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')`, n[0], n[1], pub).Scan(&oid, &ident, &published)
		if err != nil {
			return nil, fmt.Errorf("table %s.%s: %w", n[0], n[1], notFound(err, "does not exist in the source database"))
		}
		if !published {
			return nil, fmt.Errorf("table %s.%s is not in publication %q; add it there with ALTER PUBLICATION %s ADD TABLE %s", n[0], n[1], pub, quoteIdent(pub), t.QualifiedName())
		}
		t.ReplicaIdentity = ident[0]
		rows, err := conn.Query(ctx, `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull,
			coalesce((SELECT k.n FROM unnest(i.indkey) WITH ORDINALITY k(att, n) WHERE k.att = a.attnum), 0)
			FROM pg_attribute a LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
			WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
		if err != nil {
			return nil, err
		}
		keyAt := map[int]int{} // position in the key -> column
		for rows.Next() {
			var c Column
			var pos int
			if err := rows.Scan(&c.Name, &c.Type, &c.NotNull, &pos); err != nil {
				rows.Close()
				return nil, err
			}
			if pos > 0 {
				keyAt[pos] = len(t.Columns)
			}
			t.Columns = append(t.Columns, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for i := 1; i <= len(keyAt); i++ {
			t.Key = append(t.Key, keyAt[i])
		}
		out = append(out, t)
	}
	return out, nil
}

func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return errors.New(what)
	}
	return err
}

// quoteIdent quotes a name, always: a keyword as a name needs it too.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
