package console

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestConsoleRefusesOtherHosts: a page of another site whose DNS name is
// rebound to 127.0.0.1 reaches the console as the trusted loopback
// superuser. It must not read the pages (which carry the form token) nor
// post a form, even with a valid token; a page of another origin must not
// post either. Names the console answers to: IP addresses and localhost
// with its port, and --http-public-host.
func TestConsoleRefusesOtherHosts(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{Args: []string{"--http-public-host", "console.example"}})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, "SAVEPOINT keep_me")
	port := strconv.Itoa(srv.HTTPPort)
	do := func(method, host, origin, form string) (int, string) {
		t.Helper()
		var body io.Reader
		if form != "" {
			body = strings.NewReader(form)
		}
		req, err := http.NewRequest(method, srv.HTTPURL()+"/savepoints", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	code, page := do("GET", "127.0.0.1:"+port, "", "")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(page)
	if code != 200 || m == nil {
		t.Fatalf("GET /savepoints at 127.0.0.1: %d, form token found %v; want 200 with a token", code, m != nil)
	}
	release := url.Values{"action": {"release"}, "name": {"keep_me"}, "csrf": {m[1]}}.Encode()

	for _, host := range []string{"rebind.example:" + port, "rebind.example", "localhost:1", "127.0.0.1:1"} {
		code, body := do("GET", host, "", "")
		if code != http.StatusMisdirectedRequest || !strings.Contains(body, "http.public-host") {
			t.Errorf("GET with Host %s: %d %q, want 421 naming the setting http.public-host", host, code, short(body))
		}
	}
	code, body := do("POST", "rebind.example:"+port, "http://rebind.example:"+port, release)
	if code != http.StatusMisdirectedRequest {
		t.Errorf("POST release from a rebound name with the token: %d %q, want 421", code, short(body))
	}
	code, body = do("POST", "127.0.0.1:"+port, "http://evil.example:"+port, release)
	if code != http.StatusForbidden || !strings.Contains(body, "http.public-host") {
		t.Errorf("POST release from another origin with the token: %d %q, want 403 naming http.public-host", code, short(body))
	}
	code, body = do("POST", "127.0.0.1:"+port, "null", release)
	if code != http.StatusForbidden {
		t.Errorf("POST release from an opaque origin with the token: %d %q, want 403", code, short(body))
	}
	if !slices.Contains(savepoints(t, conn), "keep_me") {
		t.Fatalf("savepoint keep_me is gone after refused requests: %v", savepoints(t, conn))
	}

	for _, host := range []string{"localhost:" + port, "[::1]:" + port, "console.example", "console.example:8443"} {
		if code, body := do("GET", host, "", ""); code != 200 {
			t.Errorf("GET with Host %s: %d %q, want 200", host, code, short(body))
		}
	}
	code, body = do("POST", "console.example", "https://console.example", release)
	if code != 200 || slices.Contains(savepoints(t, conn), "keep_me") {
		t.Errorf("POST release through the public name: %d %q, savepoints %v; want 200 and keep_me released", code, body, savepoints(t, conn))
	}
}

// short is the start of a response body, for a failure message.
func short(body string) string {
	if len(body) > 200 {
		return body[:200] + "..."
	}
	return body
}
