package front

// tidbReserved are words the TiDB parser reserves that PostgreSQL lets users
// write as plain identifiers (key, rank, index, ...). Outside the
// positions where they are keywords, they are quoted for the TiDB parser.
var tidbReserved = setOf(
	"key", "keys", "index", "rank", "read", "write", "match", "option", "usage",
	"lock", "load", "show", "release", "force", "ignore", "out", "lines",
	"long", "trigger", "use", "call", "drop", "alter", "add", "change",
	"rename", "explain", "describe", "database", "databases", "cascade",
	"restrict", "kill", "exit", "continue", "leave", "until", "while",
	"cursor", "procedure", "require", "terminated", "starting", "optimize",
	"linear", "unlock", "unsigned", "zerofill", "dual", "delayed", "enclosed",
	"escaped", "elseif", "iterate", "inout", "infile", "outfile", "maxvalue",
	"middleint", "sqlexception", "sqlstate", "sqlwarning", "sql_big_result",
	"sql_calc_found_rows", "sql_small_result", "straight_join",
	"high_priority", "low_priority", "no_write_to_binlog", "ssl", "sql",
	"xor", "div", "rlike", "distinctrow", "optionally", "fulltext", "spatial",
	"stored", "virtual", "generated", "int1", "int2", "int3", "int4", "int8",
	"tinyint", "mediumint", "smallint", "bigint", "int", "integer", "real",
	"float", "float4", "float8", "double", "decimal", "numeric", "precision",
	"varchar", "varcharacter", "varying", "character", "char", "binary",
	"varbinary", "blob", "tinyblob", "mediumblob", "longblob", "tinytext",
	"mediumtext", "longtext", "year_month", "day_hour", "day_microsecond",
	"day_minute", "day_second", "hour_microsecond", "hour_minute",
	"hour_second", "minute_microsecond", "minute_second",
	"second_microsecond", "cume_dist", "dense_rank", "first_value", "lag",
	"last_value", "lead", "nth_value", "ntile", "percent_rank", "row_number",
	"utc_date", "utc_time", "utc_timestamp", "tidb_current_tso", "mod",
	"replace", "repeat", "convert", "if", "row", "interval", "rows", "range",
	"groups", "partition")

// contextKeywords are words the TiDB parser reserves that PostgreSQL
// takes as column names (dec, over, schema, values, set, ...) but which
// are also keywords of the statements handed to it: nameInContext tells
// the two apart.
var contextKeywords = setOf("dec", "of", "over", "schema", "schemas", "recursive", "revoke",
	"exists", "values", "by", "set", "insert", "update", "delete", "between")

// betweenNameAfter are the words after which BETWEEN starts an operand,
// so is a name: the operator BETWEEN follows an operand.
var betweenNameAfter = setOf("select", "distinct", "all", "where", "by", "set", "on", "having", "and", "or", "as",
	"when", "then", "else", "returning", "from", "join")

// nameInContext reports whether the context keyword at toks[i] stands for
// a name.
func (r *rewriter) nameInContext(i int) bool {
	t := r.toks[i]
	next := tokenOrEOF(r.src, r.toks, i+1)
	prev := token{}
	if i > 0 {
		prev = r.toks[i-1]
	}
	if next.isOp("(") && !t.isWord("dec", "of", "by", "set") {
		return false // a call, or VALUES (...), EXISTS (...), OVER (...)
	}
	switch t.val {
	case "over":
		return !prev.isOp(")") // f(x) OVER w
	case "recursive":
		return !prev.isWord("with")
	case "values":
		return !prev.isWord("default") // INSERT ... DEFAULT VALUES
	case "by":
		return !prev.isWord("group", "order", "partition")
	case "set":
		// UPDATE t [AS a] SET: the word before is the table or its alias.
		return !(prev.kind == tkIdent || prev.kind == tkWord && !reserved[prev.val] && !prev.isWord("by", "set"))
	case "between":
		// x BETWEEN a AND b, ROWS BETWEEN ...: the operator follows an
		// operand; a name starts one.
		return i == 0 || prev.isOp(",", "(", ".", "=", "<>", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "%", "||") ||
			prev.kind == tkWord && betweenNameAfter[prev.val]
	case "insert", "update", "delete":
		// A statement's first word, or FOR UPDATE, ON DELETE, DO UPDATE.
		return i > 0 && !prev.isOp("(", ")", ";") && !prev.isWord("for", "on", "do", "no", "key")
	}
	return true
}

// frameWords may follow ROWS / RANGE / GROUPS in a window frame.
var frameWords = setOf("between", "unbounded", "current")

// quotePass turns TiDB-reserved words into quoted identifiers where they
// stand for names: not before '(' (a function call) and not in the places
// where they are keywords (PARTITION BY, ROWS BETWEEN, FETCH ... ROWS).
func (r *rewriter) quotePass() error {
	for i, t := range r.toks {
		if t.kind == tkWord && contextKeywords[t.val] && !t.keyword && r.nameInContext(i) {
			r.toks[i].kind = tkIdent
			continue
		}
		if t.kind != tkWord || !tidbReserved[t.val] {
			continue
		}
		next := tokenOrEOF(r.src, r.toks, i+1)
		prev := token{}
		if i > 0 {
			prev = r.toks[i-1]
		}
		switch {
		case t.isWord("div") && next.isOp("("):
			// div(a, b) is PostgreSQL's function; TiDB reads DIV as an
			// operator, so the name is quoted to make it a call.
		case next.isOp("("):
			continue
		case t.isWord("partition") && next.isWord("by"):
			continue
		case t.isWord("key") && prev.isWord("duplicate") && next.isWord("update"):
			continue // ON DUPLICATE KEY UPDATE, from ON CONFLICT DO UPDATE
		case t.isWord("rows", "range", "groups") && (frameWords[next.val] || next.kind == tkNumber || next.kind == tkParam ||
			prev.kind == tkNumber || prev.kind == tkParam || prev.isWord("first", "next")):
			continue
		case t.isWord("row") && prev.isWord("current", "first", "next"):
			continue
		}
		r.toks[i].kind = tkIdent
	}
	r.quoteKeywordLabels()
	return nil
}

// quoteKeywordLabels turns a keyword written as a column label after AS
// (SELECT ... AS schema, ... AS select FROM ...) into a quoted
// identifier, as PostgreSQL takes any keyword there. It is a label only
// where a select item ends: before ',', FROM, ';' or the end (not before
// ')', where CAST(x AS type) ends).
func (r *rewriter) quoteKeywordLabels() {
	for i := 1; i < len(r.toks); i++ {
		t := r.toks[i]
		if t.kind != tkWord || !r.toks[i-1].isWord("as") {
			continue
		}
		next := tokenOrEOF(r.src, r.toks, i+1)
		if next.isOp(",") || next.isOp(";") || next.isWord("from") || next.kind == tkEOF {
			if reserved[t.val] || tidbReserved[t.val] || labelKeywords[t.val] {
				r.toks[i].kind = tkIdent
			}
		}
	}
}

// labelKeywords are words the TiDB parser refuses as a label that are
// neither in reserved nor in tidbReserved.
var labelKeywords = setOf("schema", "table", "column", "default", "select", "insert", "update", "delete",
	"user", "key", "index", "check", "references", "primary", "foreign", "order", "group", "from", "to", "on", "limit", "option")
