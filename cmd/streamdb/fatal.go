package main

import (
	"errors"
	"fmt"

	"streamdb/sqlerr"
)

// fatalText is how the server reports the error it stops on: an error
// with a SQLSTATE (a refused data directory, say) shows its code and the
// hint that tells the operator what to do, as a client would see them.
func fatalText(err error) string {
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code == sqlerr.InternalError {
		return err.Error()
	}
	s := fmt.Sprintf("%v (SQLSTATE %s)", err, se.Code)
	if se.Hint != "" {
		s += "\nHINT: " + se.Hint
	}
	return s
}
