package testutil

import (
	"fmt"
	"os"
	"strings"
)

// tailFile returns the last n lines of the file at path.
func tailFile(path string, n int) string {
	return tailFrom(path, 0, n)
}

// tailFrom returns the last n lines of the file at path from byte offset
// start on.
func tailFrom(path string, start int64, n int) string {
	out, err := readFrom(path, start)
	if err != nil {
		return err.Error()
	}
	return lastLines(out, n)
}

// readFrom returns the file at path from byte offset start on (all of it
// if the file is shorter).
func readFrom(path string, start int64) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("(cannot read %s: %v)", path, err)
	}
	if start > int64(len(data)) {
		start = 0
	}
	return string(data[start:]), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
