package sql

// The session parameters client tools set when they connect (pg_dump's
// scripts); the catalog functions they call are package rewrite's
// (pgcatalog/rewrite/tools.go).

func init() {
	// Parameters pg_dump sets (they change nothing in streamdb).
	for _, n := range []string{"synchronize_seqscans", "quote_all_identifiers", "lock_timeout", "row_security",
		"transaction_deferrable", "default_transaction_deferrable"} {
		sessionParams[n] = true
	}
	// Parameters a pg_dump script sets before its statements, with
	// PostgreSQL's defaults: streamdb has no function bodies to check,
	// no xml type, tablespaces or table access methods, so they change
	// nothing either.
	for name, def := range map[string]string{"check_function_bodies": "on", "xmloption": "content",
		"default_tablespace": "", "default_table_access_method": "heap"} {
		sessionParams[name] = true
		defaultSessionSettings[name] = def
	}
	// What SHOW says of SET TRANSACTION's modes outside a transaction
	// that set them.
	defaultSessionSettings["transaction_read_only"] = "off"
	defaultSessionSettings["transaction_deferrable"] = "off"
}
