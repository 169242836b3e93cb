package identity

import (
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/dialects"
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

// env is an Engine on a fresh, initialised store with an administrator
// and a user.
type env struct {
	t     *testing.T
	st    *store.Store
	svc   *Engine
	clock *clock
}

func newEnv(t *testing.T, cfg dialects.Config, adjust func(*Options)) *env {
	t.Helper()
	_ = store.SetPasswordCost(bcrypt.MinCost)
	ctx := t.Context()
	st, err := store.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Init(ctx, store.InitOptions{Email: adminEmail, Password: adminPassword, Name: "Ada Admin"}); err != nil {
		t.Fatalf("init: %v", err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(userPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	u := &store.User{Name: "Jane Doe", FirstName: "Jane", LastName: "Doe", Email: userEmail, Password: string(hash), IsActive: true}
	if _, err := st.DB.NewInsert().Model(u).Exec(ctx); err != nil {
		t.Fatalf("insert user: %v", err)
	}
	e := &env{t: t, st: st, clock: newClock()}
	opts := Options{Now: e.clock.Now, CacheTTL: -1, Throttle: NewThrottle(ThrottleOptions{Now: e.clock.Now})}
	if adjust != nil {
		adjust(&opts)
	}
	if e.svc, err = New(st, opts); err != nil {
		t.Fatalf("identity.New: %v", err)
	}
	return e
}

// login signs in through the engine and returns the token, failing the
// test otherwise.
func (e *env) login(admin bool, email, password string, extra map[string]any) string {
	e.t.Helper()
	f := Fields{"email": email, "password": password}
	for k, v := range extra {
		f[k] = v
	}
	in, err := e.svc.Login(e.t.Context(), admin, f, "192.0.2.1")
	if err != nil {
		e.t.Fatalf("login %s: %v", email, err)
	}
	return in.Response.SessionToken
}

// verifyMsg returns "" when tok verifies, else the error message.
func (e *env) verifyMsg(tok string) string {
	e.t.Helper()
	if _, err := e.svc.Verify(e.t.Context(), tok); err != nil {
		return MessageOf(err)
	}
	return ""
}
