package catalog

// FormatCSV is the stream format of CSV records, with its options.
const (
	FormatCSV       = "csv"
	OptCSVHeader    = "header"
	OptCSVDelimiter = "delimiter"
	OptCSVQuote     = "quote"
	OptCSVNull      = "null"
)
