package sql

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"streamdb/config"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// defaultSessionSettings are the session parameters drivers read or set.
var defaultSessionSettings = map[string]string{
	"server_version":              "15.0",
	"server_encoding":             "UTF8",
	"client_encoding":             "UTF8",
	"datestyle":                   "ISO, MDY",
	"timezone":                    "UTC",
	"intervalstyle":               "postgres",
	"integer_datetimes":           "on",
	"standard_conforming_strings": "on",
	"application_name":            "",
	"extra_float_digits":          "1",
	"search_path":                 "public",
	"transaction_isolation":       "serializable",
	"max_identifier_length":       "63",
}

func textCols(names ...string) []types.Column {
	cols := make([]types.Column, len(names))
	for i, n := range names {
		cols[i] = types.Column{Name: n, Type: types.Text}
	}
	return cols
}

func textRow(vals ...string) types.Row {
	row := make(types.Row, len(vals))
	for i, v := range vals {
		row[i] = types.NewString(v)
	}
	return row
}

func (s *session) prepareShow(n *front.Show) (*prepared, error) {
	switch n.Target {
	case "streams", "sources":
		cols := []types.Column{
			{Name: "name", Type: types.Text}, {Name: "subject", Type: types.Text},
			{Name: "jetstream_stream", Type: types.Text}, {Name: "format", Type: types.Text},
			{Name: "columns", Type: types.Text}, {Name: "skipped_messages", Type: types.Int8},
		}
		return rowsResult(cols, func(context.Context) ([]types.Row, error) {
			skipped := s.e.rt.SkippedMessages()
			var rows []types.Row
			for _, d := range s.e.objects(storage.KindStream) {
				colText := make([]string, len(d.Columns))
				for i, c := range d.Columns {
					colText[i] = c.Name + " " + c.Type
				}
				rows = append(rows, types.Row{
					types.NewString(d.Name), types.NewString(d.Subject), types.NewString(d.JSStream),
					types.NewString(d.Format), types.NewString(strings.Join(colText, ", ")),
					types.NewInt(int64(skipped[d.Name])),
				})
			}
			return rows, nil
		}), nil
	case "materialized views", "views":
		return rowsResult(textCols("name", "definition", "status"), func(context.Context) ([]types.Row, error) {
			var rows []types.Row
			for _, d := range s.e.objects(storage.KindView) {
				rows = append(rows, textRow(d.Name, d.Query, s.e.rt.ViewStatus(d.ID)))
			}
			return rows, nil
		}), nil
	case "tables":
		return rowsResult(textCols("name"), func(context.Context) ([]types.Row, error) {
			var rows []types.Row
			for _, d := range s.e.objects(storage.KindTable) {
				rows = append(rows, textRow(d.Name))
			}
			return rows, nil
		}), nil
	case "checkpoints":
		return rowsResult(checkpointColumns, func(context.Context) ([]types.Row, error) {
			return s.e.checkpointRows(), nil
		}), nil
	case "health":
		return rowsResult(textCols("status", "detail"), func(context.Context) ([]types.Row, error) {
			ok, failures := s.e.coord.Healthy()
			if ok {
				return []types.Row{textRow("healthy", fmt.Sprintf("%d consecutive checkpoint failures", failures))}, nil
			}
			return []types.Row{textRow("unhealthy", fmt.Sprintf("%d consecutive checkpoint failures exceed execution.checkpointing.tolerable-failed-checkpoints", failures))}, nil
		}), nil
	case "savepoints":
		return rowsResult(savepointColumns, func(context.Context) ([]types.Row, error) { return s.e.savepointRows() }), nil
	case "all":
		return rowsResult(textCols("name", "setting", "description"), func(context.Context) ([]types.Row, error) {
			var rows []types.Row
			for _, st := range config.Settings {
				rows = append(rows, textRow(st.Key, s.e.setting(st.Key), st.Description))
			}
			keys := make([]string, 0, len(s.settings))
			for k := range s.settings {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				rows = append(rows, textRow(k, s.settings[k], "session parameter"))
			}
			return rows, nil
		}), nil
	}
	name := n.Target
	if config.Known(name) {
		return rowsResult(textCols(name), func(context.Context) ([]types.Row, error) {
			return []types.Row{textRow(s.e.setting(name))}, nil
		}), nil
	}
	if _, ok := s.settings[name]; !ok {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	return rowsResult(textCols(name), func(context.Context) ([]types.Row, error) {
		return []types.Row{textRow(s.settings[name])}, nil
	}), nil
}

func (s *session) prepareSet(n *front.Set) (*prepared, error) {
	if n.System || config.Known(n.Name) {
		if !config.Known(n.Name) {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", n.Name).
				WithHint("SHOW ALL lists the server settings.")
		}
		tag := "SET"
		if n.System {
			tag = "ALTER SYSTEM"
		}
		return command(func(context.Context) (string, error) { return tag, s.e.setServerSetting(n) }), nil
	}
	tag := "SET"
	if n.Reset {
		tag = "RESET"
	}
	return command(func(context.Context) (string, error) {
		switch {
		case n.Reset && n.Name == "all":
			for k, v := range defaultSessionSettings {
				s.settings[k] = v
			}
		case n.Reset:
			s.settings[n.Name] = defaultSessionSettings[n.Name]
		case n.Name == "timezone" && !strings.EqualFold(n.Value, "utc") && n.Value != "UTC" && n.Value != "Etc/UTC" && n.Value != "GMT":
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "time zone %q is not supported; streamdb runs in UTC", n.Value)
		default:
			s.settings[n.Name] = n.Value
		}
		return tag, nil
	}), nil
}
