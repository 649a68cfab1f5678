package sqlerr

// SQL/JSON path errors (class 22).
const (
	SingletonSQLJSONItemRequired = "22038"
	NonNumericSQLJSONItem        = "22036"
	InvalidSQLJSONSubscript      = "22033"
	SQLJSONArrayNotFound         = "22039"
	SQLJSONMemberNotFound        = "2203A"
	SQLJSONNumberNotFound        = "2203B"
	SQLJSONObjectNotFound        = "2203C"
	SQLJSONScalarRequired        = "2203F"
)
