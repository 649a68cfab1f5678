package pgwire

// PreparedStatements is implemented by the RowWriter that Prepared.Execute
// receives: it lets DEALLOCATE and DISCARD ALL remove the connection's
// named prepared statements (those made by Parse messages), which share
// one namespace with SQL-level ones in PostgreSQL. Portals already bound
// stay usable, as in PostgreSQL.
type PreparedStatements interface {
	// Deallocate removes the named statement and reports whether it
	// existed.
	Deallocate(name string) bool
	// DeallocateAll removes every prepared statement of the connection.
	DeallocateAll()
}

func (s *rowSink) Deallocate(name string) bool {
	if _, ok := s.c.stmts[name]; !ok || name == "" {
		return false
	}
	delete(s.c.stmts, name)
	return true
}

func (s *rowSink) DeallocateAll() {
	for name := range s.c.stmts {
		if name != "" {
			delete(s.c.stmts, name)
		}
	}
}
