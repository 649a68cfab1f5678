// Package sqllogic runs sqllogictest (.slt) files against a PostgreSQL wire
// protocol server, reading the format as the sqllogictest-rs runner does.
//
// Records are separated by blank lines. Supported directives:
//
//	statement ok | statement count N | statement error [regex|SQLSTATE]
//	query <types> [nosort|rowsort|valuesort] [label]  ... ----  results
//	query error [regex|SQLSTATE]
//	  (all of the above may end in `retry N backoff <duration>`: the record
//	  is run up to N times, sleeping the backoff after each failed attempt;
//	  unlike sqllogictest-rs, an inline error may precede the retry clause)
//	skipif <label> | onlyif <label>        (for the next record)
//	connection <name>                      (the next record runs on it)
//	include <glob>                         (relative to the including file)
//	sleep <duration> | halt | subtest <name>
//	control sortmode <mode> | control resultmode rowwise|valuewise
//	control substitution on|off            (accepted, no substitution done)
//	hash-threshold N                       (ignored)
//	system ok                              (a bash command that must succeed)
//	# comment
//
// Statements run with the simple query protocol, so every value comes back
// as PostgreSQL's text: NULL is printed as NULL, the empty string as
// (empty), booleans as t and f. Rows are compared with whitespace
// normalised, so values may be separated by spaces or tabs in the file.
// <slt:ignore> in expected results matches any text.
//
// An expected error that is a single five-character token with a digit in
// it, such as 42P01 or XX000, is compared with the SQLSTATE code; otherwise
// it is a regular expression searched for in the error text
// ("ERROR: message (SQLSTATE code)" plus DETAIL and HINT lines) and in the
// bare message. A multi-line expected error under ---- (ended by two blank
// lines) must equal the message.
//
// The runner's engine labels default to "streamdb"; runs against
// PostgreSQL use "postgres".
package sqllogic
