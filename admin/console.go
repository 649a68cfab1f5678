package admin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"streamdb/pgwire"
)

// The web console is server-rendered HTML (html/template, no script
// needed): every page is built from SQL the console runs as the logged-in
// user, so it shows and may change exactly what that user could through
// psql. Charts are inline SVG drawn here.

// Result is one statement's result as text, NULL as "".
type Result struct {
	Columns []string
	Rows    [][]string
	Tag     string
	// Truncated: the query had more rows than were asked for.
	Truncated bool
}

// Backend is what the console needs from the engine.
type Backend interface {
	// ConsoleQuery runs one SQL statement as user.
	ConsoleQuery(ctx context.Context, user, sql string) (*Result, error)
	// ConsoleSelect runs one query (SELECT, VALUES, TABLE) as user and
	// keeps its first maxRows rows; any other statement is refused.
	ConsoleSelect(ctx context.Context, user, sql string, maxRows int) (*Result, error)
	// ConsoleDataflow renders the streaming dataflow of a view.
	ConsoleDataflow(ctx context.Context, user, view string) (string, error)
}

// ConsoleAccess says who may use the console.
type ConsoleAccess struct {
	// Auth, when set, makes every request log in with HTTP Basic
	// authentication as a user of the PostgreSQL port (same passwords).
	// When nil, loopback clients are trusted as TrustedUser and others
	// refused, as on the PostgreSQL port.
	Auth        pgwire.Authenticator
	TrustedUser string
	// PublicHosts are the names (or name:port) besides IP addresses and
	// localhost that the console answers to (setting http.public-host):
	// requests naming any other host are refused (see hostCheck).
	PublicHosts []string
}

//go:embed templates/*.html
var templateFiles embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"pathEscape": url.PathEscape,
	"count":      formatCount,
	"failedRows": failedRows,
}).ParseFS(templateFiles, "templates/*.html"))

// console serves the pages; backend and access are set once the engine
// is open (until then every page says the server is recovering).
type console struct {
	backend atomic.Pointer[Backend]
	access  atomic.Pointer[ConsoleAccess]
	hosts   atomic.Pointer[hostCheck]
	// csrfKey signs the per-user token that every form posts back, so a
	// page of another site cannot make a logged-in browser act.
	csrfKey []byte
	// history samples the views' figures for rates and charts.
	history  *history
	stopOnce sync.Once
	stop     chan struct{}
}

func newConsole() *console {
	c := &console{csrfKey: make([]byte, 32), history: &history{}, stop: make(chan struct{})}
	if _, err := rand.Read(c.csrfKey); err != nil {
		panic(err)
	}
	return c
}

// close stops the console's sampling.
func (c *console) close() { c.stopOnce.Do(func() { close(c.stop) }) }

// SetConsole makes the console serve backend's data to the users access
// admits.
func (s *Server) SetConsole(b Backend, access ConsoleAccess) {
	h := newHostCheck(s.Addr(), access.PublicHosts)
	s.console.hosts.Store(&h)
	s.console.backend.Store(&b)
	s.console.access.Store(&access)
}

func (c *console) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", c.page(c.overview))
	mux.HandleFunc("GET /graph", c.page(c.graph))
	mux.HandleFunc("GET /views/{name}", c.page(c.view))
	mux.HandleFunc("GET /query", c.page(c.queryPage))
	mux.HandleFunc("POST /query", c.page(c.queryPage))
	mux.HandleFunc("GET /checkpoints", c.page(c.checkpoints))
	mux.HandleFunc("GET /savepoints", c.page(c.savepoints))
	mux.HandleFunc("POST /savepoints", c.page(c.savepointAction))
}

// request is one authenticated page request.
type request struct {
	ctx     context.Context
	user    string
	backend Backend
	r       *http.Request
	csrf    string
}

// pageData is what every template receives.
type pageData struct {
	Title string
	User  string
	CSRF  string
	Tab   string
	Error string
	Flash string
	Body  any
	// Refresh is how often, in seconds, the page reloads itself (0:
	// never); Refreshable pages that a reader stopped offer to start again.
	Refresh     int
	Refreshable bool
}

// refreshSeconds is how often pages that show live numbers reload.
const refreshSeconds = 5

// autoRefresh makes data's page reload every refreshSeconds, unless the
// reader stopped it with ?refresh=0.
func autoRefresh(q *request, data *pageData) {
	data.Refreshable = true
	if q.r.URL.Query().Get("refresh") != "0" {
		data.Refresh = refreshSeconds
	}
}

// page wraps a handler with login and rendering: fn returns the template
// name and its body data.
func (c *console) page(fn func(*request) (string, pageData)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		bp, ap, hp := c.backend.Load(), c.access.Load(), c.hosts.Load()
		if bp == nil || ap == nil || hp == nil {
			http.Error(w, "streamdb is recovering; the console opens once it is done", http.StatusServiceUnavailable)
			return
		}
		// Every request, reads too: a rebound page could read the
		// form token, or the data the pages show.
		if hp.refuseHost(w, r) {
			return
		}
		user, ok := c.login(w, r, ap)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		req := &request{ctx: ctx, user: user, backend: *bp, r: r, csrf: c.token(user)}
		if r.Method == http.MethodPost && !hp.sameOrigin(r) {
			http.Error(w, "this form was sent by a page of "+r.Header.Get("Origin")+", not by the console's own page; open the console at its own address, or add the name you open it at to the setting http.public-host (flag --http-public-host)", http.StatusForbidden)
			return
		}
		if r.Method == http.MethodPost && !c.validPost(r, req) {
			http.Error(w, "this form was not sent by the console's own page; reload the page and try again", http.StatusForbidden)
			return
		}
		name, data := fn(req)
		data.User, data.CSRF = user, req.csrf
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Frame-Options", "DENY")
		if err := pages.ExecuteTemplate(w, name, data); err != nil {
			http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		}
	}
}

// login returns the request's user, or answers 401/403 and reports false.
func (c *console) login(w http.ResponseWriter, r *http.Request, a *ConsoleAccess) (string, bool) {
	if a.Auth == nil {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			http.Error(w, "the console trusts only loopback clients while the server has no password; set one (STREAMDB_PASSWORD or --password-file) to log in from elsewhere", http.StatusForbidden)
			return "", false
		}
		return a.TrustedUser, true
	}
	return basicLogin(w, r, a.Auth)
}

// basicLogin checks the request's HTTP Basic login against auth (the
// PostgreSQL port's users and passwords) and returns the user, or answers
// 401 and reports false.
func basicLogin(w http.ResponseWriter, r *http.Request, auth pgwire.Authenticator) (string, bool) {
	user, password, ok := r.BasicAuth()
	if ok {
		v, err := auth.SCRAMVerifier(r.Context(), user)
		if err == nil && v != nil && v.Verify(password) {
			return user, true
		}
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="streamdb", charset="UTF-8"`)
	http.Error(w, "log in with a user and password of the PostgreSQL port", http.StatusUnauthorized)
	return "", false
}

func (c *console) token(user string) string {
	m := hmac.New(sha256.New, c.csrfKey)
	m.Write([]byte(user))
	return hex.EncodeToString(m.Sum(nil))
}

// validPost checks a form's token.
func (c *console) validPost(r *http.Request, req *request) bool {
	return hmac.Equal([]byte(r.PostFormValue("csrf")), []byte(req.csrf))
}
