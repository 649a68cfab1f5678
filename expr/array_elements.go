package expr

import "streamdb/types"

// ArrayElements returns the elements of an array in its text form (as
// ARRAY[...] and the array functions carry it), each a text datum or NULL.
func ArrayElements(s string) ([]types.Datum, error) { return parseTextArray(s) }
