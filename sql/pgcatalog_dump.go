package sql

import (
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The catalogs pg_dump reads besides the relation catalogs. Most hold
// objects streamdb does not have (operators, text search, publications,
// triggers, policies, foreign servers, rules, large objects): they are
// empty, with PostgreSQL 15's columns, so that pg_dump's queries over
// them bind and find nothing to dump. pg_tablespace has PostgreSQL's two
// tablespaces and pg_sequence one row per sequence.

var (
	textArrayType = types.ArrayOf(types.Text)
	oidArrayType  = types.ArrayOf(types.Int8)
)

// emptyCatalogs are the catalogs of objects streamdb does not have.
var emptyCatalogs = map[string][]types.Column{
	"pg_init_privs":            cols("objoid", types.Int8, "classoid", types.Int8, "objsubid", types.Int4, "privtype", types.Text, "initprivs", types.Text),
	"pg_operator":              cols("oid", types.Int8, "oprname", types.Text, "oprnamespace", types.Int8, "oprowner", types.Int8, "oprkind", types.Text, "oprcanmerge", types.Bool, "oprcanhash", types.Bool, "oprleft", types.Int8, "oprright", types.Int8, "oprresult", types.Int8, "oprcom", types.Int8, "oprnegate", types.Int8, "oprcode", types.Int8, "oprrest", types.Int8, "oprjoin", types.Int8),
	"pg_opclass":               cols("oid", types.Int8, "opcmethod", types.Int8, "opcname", types.Text, "opcnamespace", types.Int8, "opcowner", types.Int8, "opcfamily", types.Int8, "opcintype", types.Int8, "opcdefault", types.Bool, "opckeytype", types.Int8),
	"pg_opfamily":              cols("oid", types.Int8, "opfmethod", types.Int8, "opfname", types.Text, "opfnamespace", types.Int8, "opfowner", types.Int8),
	"pg_ts_parser":             cols("oid", types.Int8, "prsname", types.Text, "prsnamespace", types.Int8, "prsstart", types.Int8, "prstoken", types.Int8, "prsend", types.Int8, "prsheadline", types.Int8, "prslextype", types.Int8),
	"pg_ts_template":           cols("oid", types.Int8, "tmplname", types.Text, "tmplnamespace", types.Int8, "tmplinit", types.Int8, "tmpllexize", types.Int8),
	"pg_ts_dict":               cols("oid", types.Int8, "dictname", types.Text, "dictnamespace", types.Int8, "dictowner", types.Int8, "dicttemplate", types.Int8, "dictinitoption", types.Text),
	"pg_ts_config":             cols("oid", types.Int8, "cfgname", types.Text, "cfgnamespace", types.Int8, "cfgowner", types.Int8, "cfgparser", types.Int8),
	"pg_default_acl":           cols("oid", types.Int8, "defaclrole", types.Int8, "defaclnamespace", types.Int8, "defaclobjtype", types.Text, "defaclacl", types.Text),
	"pg_conversion":            cols("oid", types.Int8, "conname", types.Text, "connamespace", types.Int8, "conowner", types.Int8, "conforencoding", types.Int4, "contoencoding", types.Int4, "conproc", types.Int8, "condefault", types.Bool),
	"pg_cast":                  cols("oid", types.Int8, "castsource", types.Int8, "casttarget", types.Int8, "castfunc", types.Int8, "castcontext", types.Text, "castmethod", types.Text),
	"pg_transform":             cols("oid", types.Int8, "trftype", types.Int8, "trflang", types.Int8, "trffromsql", types.Int8, "trftosql", types.Int8),
	"pg_inherits":              cols("inhrelid", types.Int8, "inhparent", types.Int8, "inhseqno", types.Int4, "inhdetachpending", types.Bool),
	"pg_partitioned_table":     cols("partrelid", types.Int8, "partstrat", types.Text, "partnatts", types.Int2, "partdefid", types.Int8, "partattrs", types.Text, "partclass", types.Text, "partcollation", types.Text, "partexprs", types.Text),
	"pg_statistic_ext":         cols("oid", types.Int8, "stxrelid", types.Int8, "stxname", types.Text, "stxnamespace", types.Int8, "stxowner", types.Int8, "stxstattarget", types.Int4, "stxkeys", types.Text, "stxkind", textArrayType, "stxexprs", types.Text),
	"pg_rewrite":               cols("oid", types.Int8, "rulename", types.Text, "ev_class", types.Int8, "ev_type", types.Text, "ev_enabled", types.Text, "is_instead", types.Bool, "ev_qual", types.Text, "ev_action", types.Text),
	"pg_publication":           cols("oid", types.Int8, "pubname", types.Text, "pubowner", types.Int8, "puballtables", types.Bool, "pubinsert", types.Bool, "pubupdate", types.Bool, "pubdelete", types.Bool, "pubtruncate", types.Bool, "pubviaroot", types.Bool),
	"pg_publication_rel":       cols("oid", types.Int8, "prpubid", types.Int8, "prrelid", types.Int8, "prqual", types.Text, "prattrs", types.ArrayOf(types.Int2)),
	"pg_publication_namespace": cols("oid", types.Int8, "pnpubid", types.Int8, "pnnspid", types.Int8),
	"pg_subscription":          cols("oid", types.Int8, "subdbid", types.Int8, "subskiplsn", types.Text, "subname", types.Text, "subowner", types.Int8, "subenabled", types.Bool, "subbinary", types.Bool, "substream", types.Bool, "subtwophasestate", types.Text, "subdisableonerr", types.Bool, "subconninfo", types.Text, "subslotname", types.Text, "subsynccommit", types.Text, "subpublications", textArrayType),
	"pg_largeobject_metadata":  cols("oid", types.Int8, "lomowner", types.Int8, "lomacl", types.Text),
	"pg_seclabels":             cols("objoid", types.Int8, "classoid", types.Int8, "objsubid", types.Int4, "objtype", types.Text, "objnamespace", types.Int8, "objname", types.Text, "provider", types.Text, "label", types.Text),
	"pg_event_trigger":         cols("oid", types.Int8, "evtname", types.Text, "evtevent", types.Text, "evtowner", types.Int8, "evtfoid", types.Int8, "evtenabled", types.Text, "evttags", textArrayType),
	"pg_trigger":               cols("oid", types.Int8, "tgrelid", types.Int8, "tgparentid", types.Int8, "tgname", types.Text, "tgfoid", types.Int8, "tgtype", types.Int2, "tgenabled", types.Text, "tgisinternal", types.Bool, "tgconstrrelid", types.Int8, "tgconstrindid", types.Int8, "tgconstraint", types.Int8, "tgdeferrable", types.Bool, "tginitdeferred", types.Bool, "tgnargs", types.Int2, "tgattr", types.Text, "tgargs", types.Bytea, "tgqual", types.Text, "tgoldtable", types.Text, "tgnewtable", types.Text),
	"pg_policy":                cols("oid", types.Int8, "polname", types.Text, "polrelid", types.Int8, "polcmd", types.Text, "polpermissive", types.Bool, "polroles", oidArrayType, "polqual", types.Text, "polwithcheck", types.Text),
	"pg_foreign_data_wrapper":  cols("oid", types.Int8, "fdwname", types.Text, "fdwowner", types.Int8, "fdwhandler", types.Int8, "fdwvalidator", types.Int8, "fdwacl", types.Text, "fdwoptions", textArrayType),
	"pg_foreign_server":        cols("oid", types.Int8, "srvname", types.Text, "srvowner", types.Int8, "srvfdw", types.Int8, "srvtype", types.Text, "srvversion", types.Text, "srvacl", types.Text, "srvoptions", textArrayType),
	"pg_amop":                  cols("oid", types.Int8, "amopfamily", types.Int8, "amoplefttype", types.Int8, "amoprighttype", types.Int8, "amopstrategy", types.Int2, "amoppurpose", types.Text, "amopopr", types.Int8, "amopmethod", types.Int8, "amopsortfamily", types.Int8),
	"pg_amproc":                cols("oid", types.Int8, "amprocfamily", types.Int8, "amproclefttype", types.Int8, "amprocrighttype", types.Int8, "amprocnum", types.Int2, "amproc", types.Int8),
	"pg_foreign_table":         cols("ftrelid", types.Int8, "ftserver", types.Int8, "ftoptions", textArrayType),
}

func init() {
	for name, c := range emptyCatalogs {
		pgSystemTables["pg_catalog."+name] = pgSystemTableDef{cols: c, rows: func(*Engine) []types.Row { return nil }}
	}
	pgSystemTables["pg_catalog.pg_tablespace"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "spcname", types.Text, "spcowner", types.Int8, "spcacl", types.Text, "spcoptions", textArrayType),
		rows: func(*Engine) []types.Row {
			return []types.Row{
				{intD(1663), str("pg_default"), intD(10), types.Null, types.Null},
				{intD(1664), str("pg_global"), intD(10), types.Null, types.Null},
			}
		},
	}
	pgSystemTables["pg_catalog.pg_rewrite"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "rulename", types.Text, "ev_class", types.Int8, "ev_type", types.Text,
			"ev_enabled", types.Text, "is_instead", types.Bool, "ev_qual", types.Text, "ev_action", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgRelations() {
				if r.relkind != "v" && r.relkind != "m" {
					continue
				}
				rows = append(rows, types.Row{intD(viewRuleOID(r)), str("_RETURN"), intD(int64(r.oid)), str("1"),
					str("O"), types.NewBool(true), types.Null, types.Null})
			}
			return rows
		},
	}
	pgSystemTables["pg_catalog.pg_sequence"] = pgSystemTableDef{
		cols: cols("seqrelid", types.Int8, "seqtypid", types.Int8, "seqstart", types.Int8, "seqincrement", types.Int8,
			"seqmax", types.Int8, "seqmin", types.Int8, "seqcache", types.Int8, "seqcycle", types.Bool),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, d := range e.objects(catalog.KindSequence) {
				q := d.Sequence
				typ := map[string]int64{"smallint": 21, "integer": 23}[q.Type]
				if typ == 0 {
					typ = 20
				}
				rows = append(rows, types.Row{intD(int64(firstUserOID + d.ID)), intD(typ), intD(q.Start), intD(q.Increment),
					intD(q.Max), intD(q.Min), intD(q.Cache), types.NewBool(q.Cycle)})
			}
			return rows
		},
	}
	for name, oid := range map[string]int64{
		"pg_tablespace": 1213, "pg_sequence": 2224, "pg_cast": 2605, "pg_depend": 2608, "pg_inherits": 2611,
		"pg_language": 2612, "pg_opclass": 2616, "pg_operator": 2617, "pg_rewrite": 2618, "pg_trigger": 2620,
		"pg_opfamily": 2753, "pg_policy": 3256, "pg_init_privs": 3394, "pg_collation": 3456, "pg_event_trigger": 3466,
		"pg_default_acl": 826, "pg_foreign_data_wrapper": 2328, "pg_foreign_server": 1417, "pg_publication": 6104,
		"pg_subscription": 6100, "pg_largeobject_metadata": 2995, "pg_transform": 3576, "pg_conversion": 2607,
	} {
		pgSystemRelOIDs[name] = oid
	}
}

// viewRuleOID is the OID of a view's _RETURN rule in pg_rewrite.
func viewRuleOID(r pgRelation) int64 { return int64(r.oid) + ruleOIDBase }

// ruleOIDBase offsets a view's OID to its rule's OID (below pkOIDBase).
const ruleOIDBase = 1 << 29

// pgRewriteOID is pg_rewrite's OID, the classid of a rule.
const pgRewriteOID = 2618

// viewDepends are pg_depend's rows of the views' rules, as PostgreSQL
// records them: the rule is part of its view ('i') and depends on each
// relation its query reads ('n'). pg_dump orders a view after what it
// reads by them.
func (e *Engine) viewDepends() []types.Row {
	var rows []types.Row
	for _, r := range e.pgRelations() {
		if r.relkind != "v" && r.relkind != "m" {
			continue
		}
		rule := intD(viewRuleOID(r))
		rows = append(rows, types.Row{intD(pgRewriteOID), rule, intD(0), intD(pgClassOID), intD(int64(r.oid)), intD(0), str("i")})
		for _, in := range r.d.DependsOn {
			if d, ok := e.lookup(in); ok {
				rows = append(rows, types.Row{intD(pgRewriteOID), rule, intD(0), intD(pgClassOID),
					intD(int64(firstUserOID + d.ID)), intD(0), str("n")})
			}
		}
	}
	return rows
}

// pgAttrdefOID is pg_attrdef's OID, the classid of a column default.
const pgAttrdefOID = 2604

// defaultSequence finds the sequence a DEFAULT nextval('name') names.
var defaultSequence = regexp.MustCompile(`nextval\('(?:public\.)?"?([^'"]+)"?'`)

// defaultDepends are pg_depend's rows of the column defaults that call
// nextval on a sequence ('n', as PostgreSQL records them): pg_dump then
// creates the sequence before it sets the default.
func (e *Engine) defaultDepends() []types.Row {
	var rows []types.Row
	for _, r := range e.pgRelations() {
		for i, c := range r.cols {
			m := defaultSequence.FindStringSubmatch(c.def)
			if m == nil {
				continue
			}
			q, ok := e.lookup(m[1])
			if !ok || q.Kind != catalog.KindSequence {
				continue
			}
			rows = append(rows, types.Row{intD(pgAttrdefOID), intD(attrdefOIDBase + int64(r.oid)<<10 + int64(i)), intD(0),
				intD(pgClassOID), intD(int64(firstUserOID + q.ID)), intD(0), str("n")})
		}
	}
	return rows
}

// sequenceDepends are pg_depend's rows of the sequences owned by a
// table column: deptype 'i' for an identity column's sequence, 'a' for
// a serial column's or one set by OWNED BY, as PostgreSQL records them
// (pg_dump dumps an identity sequence with its column, and an owned
// sequence with ALTER SEQUENCE ... OWNED BY).
func (e *Engine) sequenceDepends() []types.Row {
	var rows []types.Row
	for _, t := range e.objects(catalog.KindTable) {
		for _, q := range e.ownedSequences(t) {
			col := q.Sequence.OwnedByColumn
			attnum, deptype := int64(0), "a"
			for i, c := range t.Columns {
				if c.Name == col {
					attnum = int64(i + 1)
				}
				if c.IdentitySequence == q.Name {
					attnum, deptype = int64(i+1), "i"
				}
			}
			rows = append(rows, types.Row{intD(pgClassOID), intD(int64(firstUserOID + q.ID)), intD(0),
				intD(pgClassOID), intD(int64(firstUserOID + t.ID)), intD(attnum), str(deptype)})
		}
	}
	return rows
}

// pgClassOID is pg_class's own OID, the classid of a relation.
const pgClassOID = 1259

// bindOptionsToTable binds pg_options_to_table(options) in FROM: the
// rows (option_name, option_value) of a text[] of "name=value" items,
// none for NULL. pg_dump reads the options of foreign-data wrappers,
// servers and columns through it; streamdb has none of those options,
// but the function works on any array.
func bindOptionsToTable(b *binder, fc *ast.FuncCallExpr) ([]srfCall, error) {
	if fc.FnName.L != "pg_options_to_table" {
		return nil, nil
	}
	if len(fc.Args) != 1 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function pg_options_to_table takes one text[] argument")
	}
	arg, err := b.bindExpr(fc.Args[0], &scope{})
	if err != nil {
		return nil, err
	}
	if arg, err = expr.Cast(arg, textArrayType); err != nil {
		return nil, err
	}
	part := func(value bool) func([]types.Datum) ([]types.Datum, error) {
		return func(v []types.Datum) ([]types.Datum, error) {
			if v[0].IsNull() {
				return nil, nil
			}
			items, err := types.SplitArray(v[0].S)
			if err != nil {
				return nil, err
			}
			out := make([]types.Datum, len(items))
			for i, it := range items {
				if it.IsNull() {
					out[i] = types.Null
					continue
				}
				name, val, ok := strings.Cut(it.S, "=")
				switch {
				case !value:
					out[i] = str(name)
				case ok:
					out[i] = str(val)
				default:
					out[i] = types.Null
				}
			}
			return out, nil
		}
	}
	args := []expr.Expr{arg}
	return []srfCall{
		{Name: "option_name", Args: args, T: types.Text, rows: part(false)},
		{Name: "option_value", Args: args, T: types.Text, rows: part(true)},
	}, nil
}
