package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Config is the data a Server is built from. The zero value plus a DataDir
// is a working standalone instance with a SQLite system database.
type Config struct {
	// DataDir holds system.db (with the default system database),
	// storage/ and scripts/. Default "./data".
	DataDir string
	// SystemDB is the system database DSN (sqlite://, postgres://,
	// mysql://). Default: SQLite at DataDir/system.db.
	SystemDB string
	// Store is an already open system store; when set, SystemDB is ignored
	// and the caller closes it.
	Store *store.Store
	// RedisURL, when set, holds rate-limit counters shared by every
	// instance (redis://host:6379/0). The server fails to start when Redis
	// cannot be reached.
	RedisURL string
	// RedisPrefix is put before every rate-limit key in Redis; instances
	// that share counters use the same prefix. Default "portcullis:limit".
	RedisPrefix string
	// LimitStore is an already open rate-limit counter store; when set,
	// RedisURL is ignored. Default: Redis on RedisURL, else memory.
	LimitStore *limiter.Store
	// LimitsFailClosed answers 503 to requests whose rate limits cannot be
	// counted (Redis down); by default they go on uncounted and the error
	// is logged (see handlers/ratelimit).
	LimitsFailClosed bool
	// ScriptTimeout is the time limit of one event-script run; past it the
	// request fails with 500 "Script error: time limit exceeded". Default
	// 5 s.
	ScriptTimeout time.Duration
	// ScriptQueueWorkers is how many queued event scripts ({event}.queued)
	// run at once, after their response. Default 4.
	ScriptQueueWorkers int
	// ScriptQueueSize is how many queued event scripts may wait; past it
	// they are dropped, logged and counted in
	// portcullis_script_queue_dropped_total. Default 1024.
	ScriptQueueSize int
	// MaxBodyBytes caps request bodies; larger ones get 413. Default 16 MiB.
	MaxBodyBytes int64
	// MaxInFlight caps the requests this instance runs at once; beyond it
	// the answer is 503 with Retry-After. Default 512; negative: no cap.
	MaxInFlight int
	// MaxInFlightPerService caps the requests one service runs at once
	// (503 with Retry-After beyond), so one busy or stalled service cannot
	// take every slot of the instance. Default 128; negative: no cap.
	MaxInFlightPerService int
	// QueueWait is how long a request waits for a free slot (instance or
	// service) before it is answered 503, so short bursts queue instead of
	// failing. Default 2s; negative: no wait.
	QueueWait time.Duration
	// MaxBodyInFlight caps the request-body bytes all requests together
	// are reading; a body that does not fit is answered 503 with
	// Retry-After. Default 8 × MaxBodyBytes; negative: no cap.
	MaxBodyInFlight int64
	// WriteTimeout is how long one write to a client may block before the
	// response is cut, so a client that stops reading releases what its
	// request holds (a database connection). Default 30s; negative: none.
	WriteTimeout time.Duration
	// MaxUploadBytes caps request bodies sent to backends that stream them
	// to their destination without holding them (file uploads, see
	// service.BodyStreamer); larger ones get 413. Default 8 GiB.
	MaxUploadBytes int64
	// ReloadInterval is how often the configuration version is polled.
	// Default 500ms, so changes reach every instance within a second.
	ReloadInterval time.Duration
	// Version is reported as platform.version.
	Version string
	// UpstreamAllow restricts the addresses remote services (rws, soap,
	// mcp) may reach: CIDRs and host names. Empty allows all.
	UpstreamAllow []string
	// PublicURL is where clients reach this instance
	// (https://api.example.com); links in mails (password reset,
	// registration) that name a page of the instance start with it, and so
	// do the SAML service provider's entity id and ACS URL. Empty: such
	// links stay relative (SAML services then use the request's host). Never
	// taken from a request's Host header, which a client chooses.
	PublicURL string
	// ContractMaxAge is how old a schema may be when a write is checked
	// under strict schema-contract enforcement; default one second.
	ContractMaxAge time.Duration
	// TrustRequestID accepts the client's X-Request-Id.
	TrustRequestID bool
	// BasicAuth signs a request without a session token in with its HTTP
	// Basic credentials (e-mail and password of a user or administrator),
	// each request on its own, throttled as logins are. The session
	// endpoints accept Basic credentials either way.
	BasicAuth bool
	// Compat turns on another platform's behaviours that the spec
	// forbids: "" (the spec, the default) or CompatDreamFactory.
	Compat string
	// Logger is the logger; nil means slog.Default().
	Logger *slog.Logger
}

// Validate reports every problem with c at once. It has no side effects.
func (c Config) Validate() error {
	var errs []error
	if c.Store == nil && c.SystemDB != "" {
		if _, err := dialects.ParseDSN(c.SystemDB); err != nil {
			errs = append(errs, fmt.Errorf("system database: %w", err))
		}
	}
	if c.LimitStore == nil && c.RedisURL != "" {
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			errs = append(errs, fmt.Errorf("redis URL: %w", err))
		}
	}
	if c.MaxBodyBytes < 0 {
		errs = append(errs, errors.New("max body bytes must not be negative"))
	}
	if c.MaxUploadBytes < 0 {
		errs = append(errs, errors.New("max upload bytes must not be negative"))
	}
	if c.ReloadInterval < 0 {
		errs = append(errs, errors.New("reload interval must not be negative"))
	}
	switch c.Compat {
	case "", CompatNone, CompatDreamFactory:
	default:
		errs = append(errs, fmt.Errorf("compat %q: want %q or %q", c.Compat, CompatDreamFactory, CompatNone))
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			errs = append(errs, fmt.Errorf("public URL %q must be an http(s) URL with a host and no query", c.PublicURL))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every unset field defaulted.
func (c Config) withDefaults() Config {
	if c.DataDir == "" {
		c.DataDir = "./data"
	}
	if abs, err := filepath.Abs(c.DataDir); err == nil {
		c.DataDir = abs
	}
	if c.SystemDB == "" {
		c.SystemDB = DefaultSystemDB(c.DataDir)
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = apierr.DefaultMaxBody
	}
	if c.MaxUploadBytes == 0 {
		c.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if c.ReloadInterval == 0 {
		c.ReloadInterval = 500 * time.Millisecond
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 512
	}
	if c.MaxInFlightPerService == 0 {
		c.MaxInFlightPerService = 128
	}
	if c.QueueWait == 0 {
		c.QueueWait = 2 * time.Second
	}
	if c.MaxBodyInFlight == 0 {
		c.MaxBodyInFlight = 8 * c.MaxBodyBytes
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.Version == "" {
		c.Version = Version
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Values of Config.Compat.
const (
	// CompatNone is the spec's behaviour (the default; "" means the same).
	CompatNone = "none"
	// CompatDreamFactory turns on exactly these DreamFactory behaviours,
	// for clients written for it: admin and user login, registration and
	// the password-reset calls without an API key; a session token alone
	// on later calls (the user's role applies, an administrator passes);
	// and GET /api/v2 answered without credentials (the services the
	// caller reaches: none without a role).
	CompatDreamFactory = "dreamfactory"
)

// DefaultMaxUploadBytes is the default of Config.MaxUploadBytes: 8 GiB.
const DefaultMaxUploadBytes int64 = 8 << 30

// DefaultSystemDB is the system database DSN for a data directory.
func DefaultSystemDB(dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	return "sqlite://" + filepath.Join(abs, "system.db")
}

// Version is Portcullis's version, set at build time with
// -ldflags "-X github.com/portcullis-dev/portcullis/proxy.Version=…".
var Version = "0.1.0-dev"
