package pgcdc

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// FormatTypes returns format_type's spelling of each type oid with its
// modifier, as the source names them.
func FormatTypes(ctx context.Context, ep Endpoint, oids []uint32, mods []int32) ([]string, error) {
	conn, err := connectSQL(ctx, ep)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	out := make([]string, len(oids))
	for i := range oids {
		if err := conn.QueryRow(ctx, "SELECT format_type($1::oid, $2::int4)", oids[i], mods[i]).Scan(&out[i]); err != nil {
			return nil, fmt.Errorf("naming type %d: %w", oids[i], err)
		}
	}
	return out, nil
}

// LiveColumn is what the source's catalog says now of one column.
type LiveColumn struct {
	// Generated: a generated column (logical replication leaves it out).
	Generated bool
	// Missing is the value rows written before the column was added
	// hold (a constant DEFAULT of ADD COLUMN), when it has one.
	Missing *string
	// Default: the column has a default expression.
	Default bool
}

// LiveColumns returns, by name, the columns table schema.name has now.
func LiveColumns(ctx context.Context, ep Endpoint, schema, name string) (map[string]LiveColumn, error) {
	conn, err := connectSQL(ctx, ep)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT a.attname::text, a.attgenerated <> '',
			CASE WHEN a.atthasmissing THEN (a.attmissingval::text::text[])[1] END, a.atthasdef
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace s ON s.oid = c.relnamespace
		WHERE s.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped`, schema, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]LiveColumn{}
	for rows.Next() {
		var n string
		var c LiveColumn
		if err := rows.Scan(&n, &c.Generated, &c.Missing, &c.Default); err != nil {
			return nil, err
		}
		out[n] = c
	}
	return out, rows.Err()
}

// ReadColumns reads columns cols of every row of table schema.name as
// it is now, each value in PostgreSQL's text output (nil for NULL),
// calling row for each row.
func ReadColumns(ctx context.Context, ep Endpoint, schema, name string, cols []string, row func(values [][]byte) error) error {
	conn, err := connectSQL(ctx, ep)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	list := make([]string, len(cols))
	for i, c := range cols {
		list[i] = quoteIdent(c)
	}
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT %s FROM %s.%s", strings.Join(list, ", "), quoteIdent(schema), quoteIdent(name)), pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		raw := rows.RawValues()
		vals := make([][]byte, len(raw))
		for i, v := range raw {
			if v != nil {
				vals[i] = append([]byte{}, v...)
			}
		}
		if err := row(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}
