package identity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Defaults of Options.
const (
	DefaultTokenTTL      = 24 * time.Hour
	DefaultMaxDuration   = 30 * 24 * time.Hour
	DefaultBrowserIdle   = 2 * time.Hour
	DefaultRefreshWindow = 14 * 24 * time.Hour
	DefaultCacheTTL      = time.Second
	DefaultLeeway        = 5 * time.Second
	DefaultResetCodeTTL  = time.Hour
)

// Options configures an Engine. The zero value is usable.
type Options struct {
	// Logger receives security events (failed and throttled logins, resets
	// without a mailer); nil discards them.
	Logger *slog.Logger
	// Now is the clock for token times and expiry; nil means time.Now.
	Now func() time.Time
	// Snapshot returns the configuration in force, for the role and apps of
	// a session. Nil means no roles and no apps: administrators are
	// administrators and users have no role.
	Snapshot func() *store.Snapshot
	// Changed is called after the engine committed a change to the
	// configuration snapshot (the role mappings of a registered user), so
	// that the instance reloads it before answering: the caller's next
	// request already sees it. Nil: the change arrives with the next poll.
	Changed func(ctx context.Context) error

	// TokenTTL is a session's default lifetime (24 h).
	TokenTTL time.Duration
	// MaxDuration caps the `duration` a login may ask for (30 days).
	MaxDuration time.Duration
	// BrowserIdle ends a duration-0 (browser) session after this long
	// without a request (2 h).
	BrowserIdle time.Duration
	// RefreshWindow is how long after its issue a token, even expired, may
	// be refreshed (14 days, as DreamFactory).
	RefreshWindow time.Duration
	// CacheTTL bounds how long a verified token's row and user are reused
	// without asking the database (1 s): the revocation latency across
	// instances. Negative disables the cache.
	CacheTTL time.Duration
	// Leeway absorbs clock skew between instances on exp and nbf (5 s).
	Leeway time.Duration
	// ResetCodeTTL is how long a password-reset or confirmation code stays
	// valid (1 h).
	ResetCodeTTL time.Duration

	// Throttle counts failed logins; nil means the throttle shared by every
	// Engine on the same store.
	Throttle *Throttle

	// Mailer delivers reset and confirmation codes; nil means none (a
	// reset request is then logged without its code and refused as
	// DreamFactory does).
	Mailer Mailer
	// PasswordEmailServiceID names the e-mail service for reset codes
	// (the user service's password_email_service_id); nil lets the
	// mailer choose.
	PasswordEmailServiceID *int64
	// PasswordEmailTemplateID names the template of reset mails
	// (password_email_template_id); nil sends a plain message.
	PasswordEmailTemplateID *int64
	// ConfirmResetURL and ConfirmRegisterURL are the pages the links of
	// reset and confirmation mails open, with code, email and username
	// added to the query; empty means DefaultConfirmResetURL and
	// DefaultConfirmRegisterURL.
	ConfirmResetURL, ConfirmRegisterURL string
	// Registration configures open registration (user service only).
	Registration Registration
}

// Registration is the user service's open-registration configuration.
type Registration struct {
	// Open allows POST /user/register (allow_open_registration).
	Open bool
	// RoleID is the role given to registered users, through every app
	// (open_reg_role_id); nil gives none.
	RoleID *int64
	// EmailServiceID, when set, makes registration send a confirmation
	// code the user must present before signing in
	// (open_reg_email_service_id).
	EmailServiceID *int64
	// EmailTemplateID names the confirmation mail's template
	// (open_reg_email_template_id); nil sends a plain message.
	EmailTemplateID *int64
}

// Engine checks credentials, issues, verifies and revokes session tokens,
// throttles failed attempts and applies the password rules. It has no HTTP
// in it: the backends that mount the sign-in resources call it. It is safe
// for concurrent use.
type Engine struct {
	st     *store.Store
	opts   Options
	log    *slog.Logger
	shared *shared
	thr    *Throttle
}

// New returns an Engine on st. It does not touch the database: the signing
// secret is read on first use (and created when init has not run).
func New(st *store.Store, opts Options) (*Engine, error) {
	if st == nil {
		return nil, errors.New("identity: a system store is required")
	}
	var problems []error
	check := func(name string, d time.Duration, def time.Duration, allowNegative bool) time.Duration {
		switch {
		case d == 0:
			return def
		case d < 0 && !allowNegative:
			problems = append(problems, fmt.Errorf("%s must not be negative", name))
		}
		return d
	}
	opts.TokenTTL = check("TokenTTL", opts.TokenTTL, DefaultTokenTTL, false)
	opts.MaxDuration = check("MaxDuration", opts.MaxDuration, DefaultMaxDuration, false)
	opts.BrowserIdle = check("BrowserIdle", opts.BrowserIdle, DefaultBrowserIdle, false)
	opts.RefreshWindow = check("RefreshWindow", opts.RefreshWindow, DefaultRefreshWindow, false)
	opts.CacheTTL = check("CacheTTL", opts.CacheTTL, DefaultCacheTTL, true)
	opts.Leeway = check("Leeway", opts.Leeway, DefaultLeeway, false)
	opts.ResetCodeTTL = check("ResetCodeTTL", opts.ResetCodeTTL, DefaultResetCodeTTL, false)
	if opts.MaxDuration < opts.TokenTTL {
		problems = append(problems, errors.New("MaxDuration must not be shorter than TokenTTL"))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("identity: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ConfirmResetURL == "" {
		opts.ConfirmResetURL = DefaultConfirmResetURL
	}
	if opts.ConfirmRegisterURL == "" {
		opts.ConfirmRegisterURL = DefaultConfirmRegisterURL
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sh := sharedFor(st)
	thr := opts.Throttle
	if thr == nil {
		thr = sh.throttle
	}
	return &Engine{st: st, opts: opts, log: log, shared: sh, thr: thr}, nil
}

// Throttle returns the login throttle the Engine counts failures in.
func (s *Engine) Throttle() *Throttle { return s.thr }

func (s *Engine) now() time.Time { return s.opts.Now().UTC() }

// shared is the state every Engine on one store shares: the signing
// secret, the verification cache and the default throttle. It holds no
// reference to the store, so the store can be collected.
type shared struct {
	secretMu sync.Mutex
	secret   atomic.Pointer[[]byte]
	cache    *verifyCache
	parsed   *parsedCache
	throttle *Throttle
}

var (
	sharedMu      sync.Mutex
	sharedByStore = map[weak.Pointer[store.Store]]*shared{}
)

// sharedFor returns the state shared by Engines on st, creating it on
// first use and dropping it when st is collected.
func sharedFor(st *store.Store) *shared {
	k := weak.Make(st)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sh, ok := sharedByStore[k]; ok {
		return sh
	}
	sh := &shared{cache: newVerifyCache(), parsed: newParsedCache(), throttle: NewThrottle(ThrottleOptions{})}
	sharedByStore[k] = sh
	runtime.AddCleanup(st, func(k weak.Pointer[store.Store]) {
		sharedMu.Lock()
		delete(sharedByStore, k)
		sharedMu.Unlock()
	}, k)
	return sh
}

// signingKey returns the HS256 key, reading the secret from the store once
// (creating it when init never ran).
func (s *Engine) signingKey(ctx context.Context) ([]byte, error) {
	sh := s.shared
	if k := sh.secret.Load(); k != nil {
		return *k, nil
	}
	sh.secretMu.Lock()
	defer sh.secretMu.Unlock()
	if k := sh.secret.Load(); k != nil {
		return *k, nil
	}
	v, err := s.st.Setting(ctx, store.SettingJWTSecret)
	if errors.Is(err, store.ErrNotFound) {
		v, err = store.SetSettingIfAbsent(ctx, s.st.DB, store.SettingJWTSecret, store.NewSecret(32))
	}
	if err != nil {
		return nil, fmt.Errorf("identity: signing secret: %w", err)
	}
	if len(v) < 32 {
		return nil, errors.New("identity: the signing secret in the system database is shorter than 32 characters")
	}
	k := []byte(v)
	sh.secret.Store(&k)
	return k, nil
}
