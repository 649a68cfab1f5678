package admin

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// hostCheck says which names the console answers to. A page of another
// site whose DNS name is made to resolve to this server (DNS rebinding)
// reaches it from the browser as the same origin as the attacker's page:
// its requests carry the attacker's name in Host. Only names the server
// answers to on purpose are accepted: an IP address (no other site can
// serve a page from it), localhost, and the names of http.public-host; an
// address or localhost only with the port the console listens on.
type hostCheck struct {
	port string
	// public holds the http.public-host entries, lower case: "name"
	// (any port) or "name:port".
	public []string
}

func newHostCheck(listenAddr string, public []string) hostCheck {
	_, port, _ := net.SplitHostPort(listenAddr)
	h := hostCheck{port: port}
	for _, p := range public {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
			h.public = append(h.public, p)
		}
	}
	return h
}

// allowed reports whether hostport (a Host header, or an Origin's host)
// names this console.
func (h hostCheck) allowed(hostport string) bool {
	hostport = strings.ToLower(hostport)
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	for _, p := range h.public {
		if p == hostport || p == host {
			return true
		}
	}
	if port == "" {
		port = "80"
	}
	if port != h.port {
		return false
	}
	return host == "localhost" || net.ParseIP(host) != nil
}

// refuseHost answers a request whose Host is not the console's own and
// reports true; false lets the request through.
func (h hostCheck) refuseHost(w http.ResponseWriter, r *http.Request) bool {
	if h.allowed(r.Host) {
		return false
	}
	http.Error(w, "the console answers only to its own address (an IP address or localhost with port "+h.port+
		"), not to host "+r.Host+"; to reach it by that name, add the name to the setting http.public-host (flag --http-public-host)",
		http.StatusMisdirectedRequest)
	return true
}

// sameOrigin reports whether a state-changing request's Origin, when
// the browser sends one, is the console's own: a form of another page
// may not post here even with a valid token.
func (h hostCheck) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not from a browser, or one that sends no Origin
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false // includes "null": sandboxed and opaque origins
	}
	return h.allowed(u.Host)
}
