package sql

import (
	"context"

	"streamdb/front"
	"streamdb/sqlerr"
)

// LOCK TABLE, which pg_dump sends for every table it dumps (IN ACCESS
// SHARE MODE) so that no DDL changes them while it reads. streamdb has no
// table locks: LOCK checks what PostgreSQL checks (a transaction block,
// tables that exist) and takes none, so DDL of other sessions is not
// held back while a dump runs.
func (s *session) prepareLock(n *front.Lock) (*prepared, error) {
	return command(func(context.Context) (string, error) {
		if s.tx == nil {
			return "", sqlerr.New(sqlerr.NoActiveSQLTransaction, "LOCK TABLE can only be used in transaction blocks")
		}
		for _, t := range n.Tables {
			name := t.Name
			if t.Schema != "" && t.Schema != "public" {
				name = t.Schema + "." + t.Name
			}
			if _, ok := s.e.lookup(name); !ok {
				if _, _, ok := s.e.pgSystemTable(name); !ok {
					return "", sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", name)
				}
			}
		}
		return "LOCK TABLE", nil
	}), nil
}
