package expr

import "streamdb/types"

// DatumToJSONText is to_json's text of d, a value of type t: a json
// value as written, others as to_json renders them.
func DatumToJSONText(d types.Datum, t types.Type) (string, error) {
	return datumToJSONText(d, t)
}
