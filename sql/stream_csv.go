package sql

import (
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/sqlerr"
)

// A stream of format = 'csv' reads one CSV record per message
// (exec/decode_csv.go), with the options header, delimiter, quote and
// null of PostgreSQL's COPY ... (FORMAT csv).

func init() {
	for _, k := range []string{catalog.OptCSVHeader, catalog.OptCSVDelimiter, catalog.OptCSVQuote, catalog.OptCSVNull} {
		streamOptions[k] = true
	}
}

// checkCSV checks the CSV options of CREATE STREAM n (descriptor d).
func checkCSV(n *front.CreateSource, isTable bool, d *catalog.Descriptor) error {
	var given []string
	for _, k := range []string{catalog.OptCSVHeader, catalog.OptCSVDelimiter, catalog.OptCSVQuote, catalog.OptCSVNull} {
		if _, ok := n.Options[k]; ok {
			given = append(given, k)
		}
	}
	if d.Format != catalog.FormatCSV {
		if len(given) > 0 {
			return sqlerr.New(sqlerr.InvalidParameterValue, "option %s needs format = 'csv'", given[0]).
				WithHint("header, delimiter, quote and null describe CSV messages; add format = 'csv' or leave them out.")
		}
		return nil
	}
	if isTable {
		return sqlerr.New(sqlerr.FeatureNotSupported, "a table's changelog is JSON: format = 'csv' is for streams").
			WithHint("Use CREATE STREAM ... WITH (format = 'csv').")
	}
	if n.Options[catalog.OptWholeMessage] != "" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "whole_message reads JSON messages, not format 'csv'").
			WithHint("Declare the record's columns in order, or use header = true.")
	}
	if _, _, _, _, err := exec.CSVOptions(n.Options); err != nil {
		return sqlerr.New(sqlerr.InvalidParameterValue, "%v", err).
			WithHint("For example WITH (format = 'csv', header = false, delimiter = ',', quote = '\"', null = '').")
	}
	return nil
}
