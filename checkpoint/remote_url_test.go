package checkpoint

import (
	"strings"
	"testing"
)

func TestParseRemoteURL(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    RemoteURL
		wantErr string
	}{
		{in: "nats-object://CKPT", want: RemoteURL{Bucket: "CKPT", Replicas: 1}},
		{in: "nats-object://ckpt_1-a?replicas=3", want: RemoteURL{Bucket: "ckpt_1-a", Replicas: 3}},
		{in: "nats-object://CKPT/savepoints/before", want: RemoteURL{Bucket: "CKPT", Name: "savepoints/before", Replicas: 1}},
		{in: "nats-object://CKPT/42?replicas=1", want: RemoteURL{Bucket: "CKPT", Name: "42", Replicas: 1}},
		{in: "/var/lib/chk", wantErr: "not an object store location"},
		{in: "nats-object://", wantErr: "names no bucket"},
		{in: "nats-object://a.b", wantErr: "only letters, digits"},
		{in: "nats-object://../x", wantErr: "only letters, digits"},
		{in: "nats-object://B?replicas=0", wantErr: "from 1 to 5"},
		{in: "nats-object://B?replicas=six", wantErr: "from 1 to 5"},
		{in: "nats-object://B?copies=2", wantErr: "unknown option"},
	} {
		got, err := ParseRemoteURL(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseRemoteURL(%q) = %+v, %v; want an error saying %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseRemoteURL(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}
