package sql

import (
	"sort"

	"streamdb/config"
	"streamdb/node"
	"streamdb/types"
)

// Catalogs of the server itself: its one database and its settings, as
// tools (pgAdmin, DBeaver, Grafana, Metabase) read them on connect.

// databaseOID is the OID of the one database, streamdb.
const databaseOID = 16383

func init() {
	boolD := types.NewBool
	pgSystemTables["pg_catalog.pg_database"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "datname", types.Text, "datdba", types.Int8, "encoding", types.Int4,
			"datlocprovider", types.Text, "datistemplate", types.Bool, "datallowconn", types.Bool,
			"datconnlimit", types.Int4, "datfrozenxid", types.Int8, "datminmxid", types.Int8,
			"dattablespace", types.Int8, "datcollate", types.Text, "datctype", types.Text,
			"daticulocale", types.Text, "datcollversion", types.Text, "datacl", types.Text),
		rows: func(e *Engine) []types.Row {
			return []types.Row{{intD(databaseOID), str(infoSchemaCatalog), intD(10), types.NewInt(6), str("c"),
				boolD(false), boolD(true), types.NewInt(-1), intD(0), intD(1), intD(1663),
				str("C"), str("C.utf8"), types.Null, types.Null, types.Null}}
		},
	}
	pgSystemTables["pg_catalog.pg_settings"] = pgSystemTableDef{
		cols: cols("name", types.Text, "setting", types.Text, "unit", types.Text, "category", types.Text,
			"short_desc", types.Text, "extra_desc", types.Text, "context", types.Text, "vartype", types.Text,
			"source", types.Text, "min_val", types.Text, "max_val", types.Text, "enumvals", types.Text,
			"boot_val", types.Text, "reset_val", types.Text, "sourcefile", types.Text, "sourceline", types.Int4,
			"pending_restart", types.Bool),
		rows: func(e *Engine) []types.Row {
			defaults := config.Defaults()
			var out []types.Row
			seen := map[string]bool{}
			for _, s := range config.Settings {
				seen[s.Key] = true
				context := "superuser"
				if node.RestartSetting(s.Key) {
					context = "postmaster"
				}
				value := e.setting(s.Key)
				source := "default"
				if value != defaults.Values[s.Key] {
					source = "configuration file"
				}
				out = append(out, types.Row{str(s.Key), str(value), types.Null, str("streamdb"), str(s.Description), types.Null,
					str(context), str("string"), str(source), types.Null, types.Null, types.Null,
					str(defaults.Values[s.Key]), str(value), types.Null, types.Null, boolD(false)})
			}
			// Session parameters, at their defaults (SHOW gives a
			// session's own value).
			for name, value := range defaultSessionSettings {
				if seen[name] {
					continue
				}
				out = append(out, types.Row{str(name), str(value), types.Null, str("Client Connection Defaults"), types.Null, types.Null,
					str("user"), str("string"), str("default"), types.Null, types.Null, types.Null,
					str(value), str(value), types.Null, types.Null, boolD(false)})
			}
			out = append(out, presetSettingRows()...)
			sort.Slice(out, func(i, j int) bool { return out[i][0].S < out[j][0].S })
			return out
		},
	}
}

// pg_extension: the one extension every PostgreSQL database has, plpgsql
// (Grafana looks for timescaledb here).
func init() {
	pgSystemTables["pg_catalog.pg_extension"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "extname", types.Text, "extowner", types.Int8, "extnamespace", types.Int8,
			"extrelocatable", types.Bool, "extversion", types.Text, "extconfig", types.Text, "extcondition", types.Text),
		rows: func(*Engine) []types.Row {
			return []types.Row{{intD(13540), str("plpgsql"), intD(10), intD(oidPgCatalog), types.NewBool(false),
				str("1.0"), types.Null, types.Null}}
		},
	}
}
