package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
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

// Options configures a Service. The zero value is usable.
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
	// Service on the same store.
	Throttle *Throttle
	// ClientAddr returns the client address used for throttling; nil
	// means the host of r.RemoteAddr.
	ClientAddr func(r *http.Request) string

	// Mailer delivers reset and confirmation codes; nil means none (a
	// reset request is then logged without its code and refused as
	// DreamFactory does).
	Mailer Mailer
	// PasswordEmailServiceID names the e-mail service for reset codes
	// (the user service's password_email_service_id); nil lets the
	// mailer choose.
	PasswordEmailServiceID *int64
	// Registration configures open registration (user service only).
	Registration Registration
}

// Registration is the user service's open-registration configuration.
type Registration struct {
	// Open allows POST /user/register (allow_open_registration).
	Open bool
	// RoleID is the role given to registered users for the app they
	// registered through (open_reg_role_id); nil gives none.
	RoleID *int64
	// EmailServiceID, when set, makes registration send a confirmation
	// code the user must present before signing in
	// (open_reg_email_service_id).
	EmailServiceID *int64
}

// Mail is one message for a Mailer.
type Mail struct {
	// ServiceID is the e-mail service to send through; 0 lets the mailer
	// choose its default.
	ServiceID int64
	// Kind is MailPasswordReset or MailConfirmation.
	Kind string
	// To and ToName address the recipient.
	To, ToName string
	// Subject and Text are a ready plain-text message.
	Subject, Text string
	// Data holds the fields a template may use: first_name, last_name,
	// name, email, confirm_code.
	Data map[string]string
}

// Kinds of Mail.
const (
	MailPasswordReset = "password_reset"
	MailConfirmation  = "registration_confirmation"
)

// Mailer delivers e-mail; the email service's backends implement it.
type Mailer interface {
	SendMail(ctx context.Context, m Mail) error
}

// MailerAvailability is implemented by Mailers that can tell in advance
// whether they can send through an e-mail service (0: their default), so
// that answers never depend on whether the address has an account.
type MailerAvailability interface {
	CanSend(serviceID int64) bool
}

// canMail reports whether mail can be sent through serviceID.
func (s *Service) canMail(serviceID int64) bool {
	if s.opts.Mailer == nil {
		return false
	}
	if c, ok := s.opts.Mailer.(MailerAvailability); ok {
		return c.CanSend(serviceID)
	}
	return true
}

// ErrNoMailer is returned by a Mailer that has no e-mail service to send
// through; callers treat it like a missing Mailer.
var ErrNoMailer = errors.New("auth: no e-mail service is configured")

// Service issues, verifies and revokes session tokens and serves the
// sign-in resources. It is safe for concurrent use.
type Service struct {
	st     *store.Store
	opts   Options
	log    *slog.Logger
	shared *shared
	thr    *Throttle
}

// New returns a Service on st. It does not touch the database: the signing
// secret is read on first use (and created when init has not run).
func New(st *store.Store, opts Options) (*Service, error) {
	if st == nil {
		return nil, errors.New("auth: a system store is required")
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
		return nil, fmt.Errorf("auth: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
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
	return &Service{st: st, opts: opts, log: log, shared: sh, thr: thr}, nil
}

// Throttle returns the login throttle the Service counts failures in.
func (s *Service) Throttle() *Throttle { return s.thr }

func (s *Service) now() time.Time { return s.opts.Now().UTC() }

// shared is the state every Service on one store shares: the signing
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

// sharedFor returns the state shared by Services on st, creating it on
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
func (s *Service) signingKey(ctx context.Context) ([]byte, error) {
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
		return nil, fmt.Errorf("auth: signing secret: %w", err)
	}
	if len(v) < 32 {
		return nil, errors.New("auth: the signing secret in the system database is shorter than 32 characters")
	}
	k := []byte(v)
	sh.secret.Store(&k)
	return k, nil
}
