package pgcatalog

import (
	"sort"

	"streamdb/config"
	"streamdb/types"
)

// Catalogs of the server itself: its one database, its settings and its
// extensions, as tools (pgAdmin, DBeaver, Grafana, Metabase) read them
// on connect.

// DatabaseOID is the OID of the one database, streamdb.
const DatabaseOID = 16383

func init() {
	register("pg_catalog.pg_database", cols("oid", types.Int8, "datname", types.Text, "datdba", types.Int8, "encoding", types.Int4,
		"datlocprovider", types.Text, "datistemplate", types.Bool, "datallowconn", types.Bool,
		"datconnlimit", types.Int4, "datfrozenxid", types.Int8, "datminmxid", types.Int8,
		"dattablespace", types.Int8, "datcollate", types.Text, "datctype", types.Text,
		"daticulocale", types.Text, "datcollversion", types.Text, "datacl", types.Text),
		func(e Engine) []types.Row {
			return []types.Row{{intD(DatabaseOID), str(DatabaseName), intD(10), types.NewInt(6), str("c"),
				b(false), b(true), types.NewInt(-1), intD(0), intD(1), intD(1663),
				str("C"), str("C.utf8"), types.Null, types.Null, types.Null}}
		})
	register("pg_catalog.pg_settings", cols("name", types.Text, "setting", types.Text, "unit", types.Text, "category", types.Text,
		"short_desc", types.Text, "extra_desc", types.Text, "context", types.Text, "vartype", types.Text,
		"source", types.Text, "min_val", types.Text, "max_val", types.Text, "enumvals", types.Text,
		"boot_val", types.Text, "reset_val", types.Text, "sourcefile", types.Text, "sourceline", types.Int4,
		"pending_restart", types.Bool),
		func(e Engine) []types.Row {
			defaults := config.Defaults()
			var out []types.Row
			seen := map[string]bool{}
			for _, s := range config.Settings {
				seen[s.Key] = true
				value, restart := e.Setting(s.Key)
				context := "superuser"
				if restart {
					context = "postmaster"
				}
				source := "default"
				if value != defaults.Values[s.Key] {
					source = "configuration file"
				}
				out = append(out, types.Row{str(s.Key), str(value), types.Null, str("streamdb"), str(s.Description), types.Null,
					str(context), str("string"), str(source), types.Null, types.Null, types.Null,
					str(defaults.Values[s.Key]), str(value), types.Null, types.Null, b(false)})
			}
			// Session parameters, at their defaults (SHOW gives a
			// session's own value).
			for name, value := range e.SessionDefaults() {
				if seen[name] {
					continue
				}
				out = append(out, types.Row{str(name), str(value), types.Null, str("Client Connection Defaults"), types.Null, types.Null,
					str("user"), str("string"), str("default"), types.Null, types.Null, types.Null,
					str(value), str(value), types.Null, types.Null, b(false)})
			}
			out = append(out, presetSettingRows()...)
			sort.Slice(out, func(i, j int) bool { return out[i][0].S < out[j][0].S })
			return out
		})
}

// pg_extension: the one extension every PostgreSQL database has, plpgsql
// (Grafana looks for timescaledb here).
func init() {
	register("pg_catalog.pg_extension", cols("oid", types.Int8, "extname", types.Text, "extowner", types.Int8, "extnamespace", types.Int8,
		"extrelocatable", types.Bool, "extversion", types.Text, "extconfig", types.Text, "extcondition", types.Text),
		func(Engine) []types.Row {
			return []types.Row{{intD(13540), str("plpgsql"), intD(10), intD(NamespacePgCatalog), types.NewBool(false),
				str("1.0"), types.Null, types.Null}}
		})
}

// presetSettings are PostgreSQL's read-only settings that describe how
// the server was built, with PostgreSQL 15's values; drivers read some
// (pgjdbc's getImportedKeys reads max_index_keys).
var presetSettings = map[string]string{
	"block_size": "8192", "max_function_args": "100", "max_index_keys": "32", "segment_size": "131072",
	"wal_block_size": "8192", "data_checksums": "off", "server_version_num": "150000",
}

// presetSettingRows are pg_settings' rows of presetSettings.
func presetSettingRows() []types.Row {
	var out []types.Row
	for name, value := range presetSettings {
		out = append(out, types.Row{str(name), str(value), types.Null, str("Preset Options"), types.Null, types.Null,
			str("internal"), str("integer"), str("default"), types.Null, types.Null, types.Null,
			str(value), str(value), types.Null, types.Null, b(false)})
	}
	return out
}
