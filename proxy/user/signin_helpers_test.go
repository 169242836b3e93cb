package user

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

const (
	adminEmail    = "admin@example.com"
	adminPassword = "admin-password-1"
	userEmail     = "jane.doe@example.com"
	userPassword  = "jane-password-1"
)

// clock is an injectable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// mailbox is a Mailer that keeps what it is given.
type mailbox struct {
	mu   sync.Mutex
	sent []identity.Mail
	err  error
}

func (m *mailbox) SendMail(_ context.Context, msg identity.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.sent = append(m.sent, msg)
	return nil
}

func (m *mailbox) last(t *testing.T) identity.Mail {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sent) == 0 {
		t.Fatal("no mail was sent")
	}
	return m.sent[len(m.sent)-1]
}

func (m *mailbox) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

// syncBuffer collects log output from concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is an identity engine and its sign-in resources on a fresh, initialised store with an administrator and
// a user.
type env struct {
	t     *testing.T
	st    *store.Store
	svc   *signIns
	clock *clock
	mail  *mailbox
	logs  *syncBuffer
	snap  *store.Snapshot
	admin *store.User
	user  *store.User
	appID int64 // the admin app
}

func newEnv(t *testing.T, cfg dialects.Config, adjust func(*identity.Options)) *env {
	_ = store.SetPasswordCost(bcrypt.MinCost)
	t.Helper()
	ctx := t.Context()
	st, err := store.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Init(ctx, store.InitOptions{Email: adminEmail, Password: adminPassword, Name: "Ada Admin"}); err != nil {
		t.Fatalf("init: %v", err)
	}
	e := &env{t: t, st: st, clock: newClock(), mail: &mailbox{}, logs: &syncBuffer{}}
	// Fixtures use bcrypt's lowest cost: the race detector makes cost 10
	// take a second per hash. Passwords set through the handlers still use
	// store.HashPassword.
	if _, err := st.DB.NewUpdate().Model((*store.User)(nil)).Set("password = ?", fastHash(t, adminPassword)).
		Where("email = ?", adminEmail).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	hash := fastHash(t, userPassword)
	u := &store.User{Name: "Jane Doe", FirstName: "Jane", LastName: "Doe", Email: userEmail, Password: hash, IsActive: true}
	if _, err := st.DB.NewInsert().Model(u).Exec(ctx); err != nil {
		t.Fatalf("insert user: %v", err)
	}
	e.reload()
	for _, a := range e.snap.Apps {
		if a.Name == "admin" {
			e.appID = a.ID
		}
	}
	opts := identity.Options{
		Logger:   slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:      e.clock.Now,
		Snapshot: func() *store.Snapshot { return e.snap },
		Mailer:   e.mail,
		CacheTTL: -1,
		Throttle: identity.NewThrottle(identity.ThrottleOptions{Now: e.clock.Now}),
	}
	if adjust != nil {
		adjust(&opts)
	}
	eng, err := identity.New(st, opts)
	if err != nil {
		t.Fatalf("identity.New: %v", err)
	}
	e.svc = &signIns{e: eng, st: st, user: NewSignIn(eng, false), admin: NewSignIn(eng, true)}
	e.admin = e.userByEmail(adminEmail)
	e.user = e.userByEmail(userEmail)
	return e
}

// fastHash is a bcrypt hash of password at the lowest cost.
func fastHash(t testing.TB, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// reload re-reads the configuration snapshot.
func (e *env) reload() {
	e.t.Helper()
	snap, err := e.st.Load(e.t.Context())
	if err != nil {
		e.t.Fatalf("load snapshot: %v", err)
	}
	e.snap = snap
}

func (e *env) userByEmail(email string) *store.User {
	e.t.Helper()
	u := new(store.User)
	if err := e.st.DB.NewSelect().Model(u).Where("email = ?", email).Scan(e.t.Context()); err != nil {
		e.t.Fatalf("user %s: %v", email, err)
	}
	return u
}

// req describes one call to a handler.
type req struct {
	method string
	target string // path and query
	body   any    // nil, string (raw) or a value encoded as JSON
	form   url.Values
	token  string
	header map[string]string
	addr   string
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r *resp) m(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return m
}

func (r *resp) msg(t *testing.T) string {
	t.Helper()
	e, ok := r.m(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("not an error: %d %s", r.status, r.body)
	}
	return e["message"].(string)
}

// do calls h as the admin app's client.
func (e *env) do(h apierr.HandlerFunc, q req) *resp {
	e.t.Helper()
	if q.method == "" {
		q.method = http.MethodPost
	}
	if q.target == "" {
		q.target = "/"
	}
	var rd io.Reader
	ctype := ""
	switch b := q.body.(type) {
	case nil:
	case string:
		rd, ctype = strings.NewReader(b), "application/json"
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd, ctype = bytes.NewReader(data), "application/json"
	}
	if q.form != nil {
		rd, ctype = strings.NewReader(q.form.Encode()), "application/x-www-form-urlencoded"
	}
	r := httptest.NewRequestWithContext(e.t.Context(), q.method, q.target, rd)
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	if q.token != "" {
		r.Header.Set(service.HeaderSessionToken, q.token)
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	if q.addr != "" {
		r.RemoteAddr = q.addr
	}
	r = r.WithContext(caller.WithIdentity(r.Context(), &caller.Identity{AppID: e.appID, AppName: "admin", Requestor: caller.API}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return &resp{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// login signs in and returns the token, failing the test otherwise.
func (e *env) login(admin bool, email, password string, extra map[string]any) string {
	e.t.Helper()
	body := map[string]any{"email": email, "password": password}
	for k, v := range extra {
		body[k] = v
	}
	r := e.do(e.svc.Login(admin), req{body: body})
	if r.status != http.StatusOK {
		e.t.Fatalf("login %s = %d %s", email, r.status, r.body)
	}
	return r.m(e.t)["session_token"].(string)
}

// verifyMsg returns "" when tok verifies, else the error message.
func (e *env) verifyMsg(tok string) string {
	e.t.Helper()
	_, err := e.svc.Verify(e.t.Context(), tok)
	if err != nil {
		return apierr.As(err).Message
	}
	return ""
}

// signIns holds the users' and administrators' sign-in resources over one
// engine, with the handlers by the names the tests use.
type signIns struct {
	e           *identity.Engine
	st          *store.Store
	user, admin *SignIn
}

func (s *signIns) pick(admin bool) *SignIn {
	if admin {
		return s.admin
	}
	return s.user
}

func (s *signIns) Session(admin bool) apierr.HandlerFunc     { return s.pick(admin).Session() }
func (s *signIns) Login(admin bool) apierr.HandlerFunc       { return s.pick(admin).Login() }
func (s *signIns) SessionInfo(admin bool) apierr.HandlerFunc { return s.pick(admin).SessionInfo() }
func (s *signIns) Refresh(admin bool) apierr.HandlerFunc     { return s.pick(admin).Refresh() }
func (s *signIns) Logout(admin bool) apierr.HandlerFunc      { return s.pick(admin).Logout() }
func (s *signIns) Password(admin bool) apierr.HandlerFunc    { return s.pick(admin).Password() }
func (s *signIns) Profile(admin bool) apierr.HandlerFunc     { return s.pick(admin).Profile() }
func (s *signIns) Register() apierr.HandlerFunc              { return s.user.Register() }

func (s *signIns) Resolve(userID int64, sysAdmin bool, appID int64) identity.Access {
	return s.e.Resolve(userID, sysAdmin, appID)
}

// Verify verifies tok with errors as the wire shows them.
func (s *signIns) Verify(ctx context.Context, tok string) (*identity.Session, error) {
	sess, err := s.e.Verify(ctx, tok)
	if err != nil {
		return nil, APIError(err)
	}
	return sess, nil
}

// signingKey reads the session tokens' signing secret.
func (s *signIns) signingKey(ctx context.Context) ([]byte, error) {
	v, err := s.st.Setting(ctx, store.SettingJWTSecret)
	return []byte(v), err
}

// subject is DreamFactory's sub claim: the MD5 hex of the e-mail.
func subject(email string) string {
	sum := md5.Sum([]byte(email))
	return hex.EncodeToString(sum[:])
}

// codeReset marks a pending password reset in store.User.ConfirmCode (the
// identity engine's storage format).
const codeReset = "reset:"
