package pgcatalog

import "streamdb/types"

var (
	textArray = types.ArrayOf(types.Text)
	oidArray  = types.ArrayOf(types.Int8)
)

// EmptyCatalogs are the catalogs of objects streamdb does not have
// (operators, text search, publications, triggers, policies, foreign
// servers, large objects, ...), by name in pg_catalog, with PostgreSQL
// 15's columns: they have no rows, so pg_dump's queries over them bind
// and find nothing to dump. OID, regproc and name columns are bigint and
// text, as in the other catalogs.
var EmptyCatalogs = map[string][]types.Column{
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
	"pg_statistic_ext":         cols("oid", types.Int8, "stxrelid", types.Int8, "stxname", types.Text, "stxnamespace", types.Int8, "stxowner", types.Int8, "stxstattarget", types.Int4, "stxkeys", types.Text, "stxkind", textArray, "stxexprs", types.Text),
	"pg_rewrite":               cols("oid", types.Int8, "rulename", types.Text, "ev_class", types.Int8, "ev_type", types.Text, "ev_enabled", types.Text, "is_instead", types.Bool, "ev_qual", types.Text, "ev_action", types.Text),
	"pg_publication":           cols("oid", types.Int8, "pubname", types.Text, "pubowner", types.Int8, "puballtables", types.Bool, "pubinsert", types.Bool, "pubupdate", types.Bool, "pubdelete", types.Bool, "pubtruncate", types.Bool, "pubviaroot", types.Bool),
	"pg_publication_rel":       cols("oid", types.Int8, "prpubid", types.Int8, "prrelid", types.Int8, "prqual", types.Text, "prattrs", types.ArrayOf(types.Int2)),
	"pg_publication_namespace": cols("oid", types.Int8, "pnpubid", types.Int8, "pnnspid", types.Int8),
	"pg_subscription":          cols("oid", types.Int8, "subdbid", types.Int8, "subskiplsn", types.Text, "subname", types.Text, "subowner", types.Int8, "subenabled", types.Bool, "subbinary", types.Bool, "substream", types.Bool, "subtwophasestate", types.Text, "subdisableonerr", types.Bool, "subconninfo", types.Text, "subslotname", types.Text, "subsynccommit", types.Text, "subpublications", textArray),
	"pg_largeobject_metadata":  cols("oid", types.Int8, "lomowner", types.Int8, "lomacl", types.Text),
	"pg_seclabels":             cols("objoid", types.Int8, "classoid", types.Int8, "objsubid", types.Int4, "objtype", types.Text, "objnamespace", types.Int8, "objname", types.Text, "provider", types.Text, "label", types.Text),
	"pg_event_trigger":         cols("oid", types.Int8, "evtname", types.Text, "evtevent", types.Text, "evtowner", types.Int8, "evtfoid", types.Int8, "evtenabled", types.Text, "evttags", textArray),
	"pg_trigger":               cols("oid", types.Int8, "tgrelid", types.Int8, "tgparentid", types.Int8, "tgname", types.Text, "tgfoid", types.Int8, "tgtype", types.Int2, "tgenabled", types.Text, "tgisinternal", types.Bool, "tgconstrrelid", types.Int8, "tgconstrindid", types.Int8, "tgconstraint", types.Int8, "tgdeferrable", types.Bool, "tginitdeferred", types.Bool, "tgnargs", types.Int2, "tgattr", types.Text, "tgargs", types.Bytea, "tgqual", types.Text, "tgoldtable", types.Text, "tgnewtable", types.Text),
	"pg_policy":                cols("oid", types.Int8, "polname", types.Text, "polrelid", types.Int8, "polcmd", types.Text, "polpermissive", types.Bool, "polroles", oidArray, "polqual", types.Text, "polwithcheck", types.Text),
	"pg_foreign_data_wrapper":  cols("oid", types.Int8, "fdwname", types.Text, "fdwowner", types.Int8, "fdwhandler", types.Int8, "fdwvalidator", types.Int8, "fdwacl", types.Text, "fdwoptions", textArray),
	"pg_foreign_server":        cols("oid", types.Int8, "srvname", types.Text, "srvowner", types.Int8, "srvfdw", types.Int8, "srvtype", types.Text, "srvversion", types.Text, "srvacl", types.Text, "srvoptions", textArray),
	"pg_amop":                  cols("oid", types.Int8, "amopfamily", types.Int8, "amoplefttype", types.Int8, "amoprighttype", types.Int8, "amopstrategy", types.Int2, "amoppurpose", types.Text, "amopopr", types.Int8, "amopmethod", types.Int8, "amopsortfamily", types.Int8),
	"pg_amproc":                cols("oid", types.Int8, "amprocfamily", types.Int8, "amproclefttype", types.Int8, "amprocrighttype", types.Int8, "amprocnum", types.Int2, "amproc", types.Int8),
	"pg_foreign_table":         cols("ftrelid", types.Int8, "ftserver", types.Int8, "ftoptions", textArray),
}

func init() {
	for name, c := range EmptyCatalogs {
		register("pg_catalog."+name, c, func(Engine) []types.Row { return nil })
	}
	// streamdb has no enum types: pg_enum is empty (SQLAlchemy reads it
	// when it reflects columns).
	register("pg_catalog.pg_enum", cols("oid", types.Int8, "enumtypid", types.Int8, "enumsortorder", types.Float4, "enumlabel", types.Text),
		func(Engine) []types.Row { return nil })
}
