package types

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// zoneAbbrev is one time zone abbreviation (see zoneAbbrevs).
type zoneAbbrev struct {
	offset int    // seconds east of UTC, when zone is empty
	dst    bool   // a daylight-saving abbreviation (PostgreSQL's DTZ)
	zone   string // the zone whose offset applies (PostgreSQL's DYNTZ)
}

// zoneDirs are where the system's tzdata may live; time.LoadLocation reads
// the same places.
var zoneDirs = []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ"}

var (
	zoneIndexOnce sync.Once
	zoneIndex     map[string]string // lower-cased name -> name as in tzdata
)

// zonesFound keeps the zones loadZone has found, by the name asked: a
// lookup may read a tzdata file, and text and queries name few zones
// over many values. It holds at most zonesFoundMax of them.
var (
	zonesFoundMu sync.Mutex
	zonesFound   = map[string]*time.Location{}
)

const zonesFoundMax = 1024

// loadZone finds a time zone by name as PostgreSQL's pg_tzset does: any
// case, from the system's tzdata. Go-only names ("Local", "") are not zone
// names.
func loadZone(name string) (*time.Location, bool) {
	zonesFoundMu.Lock()
	loc, ok := zonesFound[name]
	zonesFoundMu.Unlock()
	if ok {
		return loc, true
	}
	loc, ok = findZone(name)
	if ok {
		zonesFoundMu.Lock()
		if len(zonesFound) < zonesFoundMax {
			zonesFound[name] = loc
		}
		zonesFoundMu.Unlock()
	}
	return loc, ok
}

// findZone is loadZone without its memory of names found.
func findZone(name string) (*time.Location, bool) {
	if name == "" || strings.EqualFold(name, "local") || len(name) > 255 || strings.Contains(name, "..") {
		return nil, false
	}
	if loc, err := time.LoadLocation(name); err == nil {
		return loc, true
	}
	if loc, ok := posixZone(name); ok {
		return loc, true
	}
	zoneIndexOnce.Do(buildZoneIndex)
	if real, ok := zoneIndex[strings.ToLower(name)]; ok {
		if loc, err := time.LoadLocation(real); err == nil {
			return loc, true
		}
	}
	return nil, false
}

// buildZoneIndex maps every zone file's lower-cased name to its name, so
// that 'america/new_york' finds America/New_York.
func buildZoneIndex() {
	zoneIndex = map[string]string{}
	if tz := os.Getenv("ZONEINFO"); tz != "" {
		zoneDirs = append([]string{tz}, zoneDirs...)
	}
	for _, dir := range zoneDirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return nil
			}
			rel = filepath.ToSlash(rel)
			if _, seen := zoneIndex[strings.ToLower(rel)]; !seen {
				zoneIndex[strings.ToLower(rel)] = rel
			}
			return nil
		})
	}
}

// zoneOffset returns the offset east of UTC, in seconds, that loc gives
// the local wall-clock time local (seconds since 1970 as if it were UTC).
// Around a transition it decides as PostgreSQL does: a time skipped by a
// spring-forward jump takes the offset from before it, a time repeated by
// a fall-back jump the offset from after it.
func zoneOffset(local int64, loc *time.Location) int {
	prev := time.Unix(local-86400, 0).In(loc)
	_, before := prev.Zone()
	_, boundary := prev.ZoneBounds()
	if boundary.IsZero() {
		return before
	}
	_, after := boundary.In(loc).Zone()
	bt, at, b := local-int64(before), local-int64(after), boundary.Unix()
	switch {
	case bt < b && at < b:
		return before
	case bt >= b && at >= b:
		return after
	case bt > at:
		return before
	}
	return after
}

// posixZone reads the fixed-offset POSIX form "abc[+-]hh[:mm[:ss]]" that
// PostgreSQL accepts as a zone name: the offset is hours WEST of UTC
// ("GMT+3" is three hours behind UTC).
func posixZone(name string) (*time.Location, bool) {
	i := 0
	for i < len(name) && isAlpha(name[i]) {
		i++
	}
	if i < 3 || i == len(name) {
		return nil, false
	}
	sign := 1
	rest := name[i:]
	switch rest[0] {
	case '-':
		sign, rest = -1, rest[1:]
	case '+':
		rest = rest[1:]
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return nil, false
	}
	secs := 0
	for k, p := range parts {
		if p == "" || len(p) > 2 {
			return nil, false
		}
		n := 0
		for j := 0; j < len(p); j++ {
			if !isDigit(p[j]) {
				return nil, false
			}
			n = n*10 + int(p[j]-'0')
		}
		if (k == 0 && n > 24) || (k > 0 && n > 59) {
			return nil, false
		}
		secs += n * []int{3600, 60, 1}[k]
	}
	return time.FixedZone(strings.ToUpper(name[:i]), -sign*secs), true
}
