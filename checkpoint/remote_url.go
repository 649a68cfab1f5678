package checkpoint

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// RemoteURL is a checkpoint or savepoint location in a JetStream object
// store bucket, written nats-object://BUCKET[/NAME][?replicas=N]: the
// bucket on the server's own NATS connection, created with N replicas
// (1 to 5, default 1) when it does not exist yet. NAME, in --restore-from
// only, picks one point in the bucket: a checkpoint id (42 or
// chk-0000000042) or savepoints/NAME.
type RemoteURL struct {
	Bucket   string
	Name     string
	Replicas int
}

// IsRemote reports whether a checkpoint or savepoint directory setting
// names an object store bucket rather than a local directory.
func IsRemote(dir string) bool { return strings.HasPrefix(dir, RemoteScheme) }

// String writes u back in its URL form.
func (u RemoteURL) String() string {
	s := RemoteScheme + u.Bucket
	if u.Name != "" {
		s += "/" + u.Name
	}
	if u.Replicas > 1 {
		s += "?replicas=" + strconv.Itoa(u.Replicas)
	}
	return s
}

// ParseRemoteURL reads a nats-object:// location. Errors say what to
// change.
func ParseRemoteURL(s string) (RemoteURL, error) {
	if !IsRemote(s) {
		return RemoteURL{}, fmt.Errorf("%q is not an object store location: write %sBUCKET", s, RemoteScheme)
	}
	rest := strings.TrimPrefix(s, RemoteScheme)
	u := RemoteURL{Replicas: 1}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		q, err := url.ParseQuery(rest[i+1:])
		if err != nil {
			return RemoteURL{}, fmt.Errorf("%q: the part after ? must be replicas=N", s)
		}
		for k, vs := range q {
			if k != "replicas" || len(vs) != 1 {
				return RemoteURL{}, fmt.Errorf("%q: unknown option %q; the only option is replicas=N (1 to 5)", s, k)
			}
			n, err := strconv.Atoi(vs[0])
			if err != nil || n < 1 || n > 5 {
				return RemoteURL{}, fmt.Errorf("%q: replicas must be a number from 1 to 5 (a NATS cluster keeps at most 5 copies)", s)
			}
			u.Replicas = n
		}
		rest = rest[:i]
	}
	u.Bucket, u.Name, _ = strings.Cut(rest, "/")
	u.Name = strings.Trim(u.Name, "/")
	if u.Bucket == "" {
		return RemoteURL{}, fmt.Errorf("%q names no bucket: write %sBUCKET", s, RemoteScheme)
	}
	for _, r := range u.Bucket {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return RemoteURL{}, fmt.Errorf("%q: a bucket name may hold only letters, digits, '-' and '_'", s)
		}
	}
	return u, nil
}
