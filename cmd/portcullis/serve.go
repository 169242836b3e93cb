package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

type serveCmd struct {
	Data          string        `help:"Data directory." default:"./data" type:"path"`
	Addr          string        `help:"Address to listen on." default:"127.0.0.1:8080"`
	SystemDB      string        `help:"System database DSN (sqlite://, postgres://, mysql://). Default: SQLite in the data directory."`
	Redis         string        `help:"Redis URL for rate-limit counters shared by several instances."`
	RedisPrefix   string        `help:"Prefix of the rate-limit keys in Redis; instances sharing counters use the same one." default:"portcullis:limit"`
	LimitsFail    string        `help:"When the rate-limit counters cannot be reached: open (requests go on uncounted, logged) or closed (503)." enum:"open,closed" default:"open"`
	MaxBody       int64         `help:"Largest request body in bytes." default:"16777216"`
	MaxUpload     int64         `help:"Largest upload in bytes to a service that streams bodies to storage (file services)." default:"8589934592"`
	UpstreamAllow []string      `help:"CIDRs and host names remote services may reach (default: any)."`
	PublicURL     string        `help:"URL clients reach this instance at; links in password-reset and registration mails and SAML service provider URLs (entity id, ACS) start with it (default: http://ADDR)." env:"PORTCULLIS_PUBLIC_URL"`
	ShutdownWait  time.Duration `help:"How long to wait for requests in flight on SIGINT/SIGTERM; then connections are closed and the process exits 0." default:"30s"`
	ShutdownGrace time.Duration `help:"At SIGINT/SIGTERM, how long to keep answering new requests (with Connection: close, /healthz 503) before refusing new connections; part of the shutdown wait." default:"1s"`

	MaxInFlight           int           `help:"Most requests this instance runs at once (503 with Retry-After beyond; -1: no cap)." default:"512"`
	MaxInFlightPerService int           `help:"Most requests one service runs at once (503 with Retry-After beyond; -1: no cap)." default:"128"`
	QueueWait             time.Duration `help:"How long a request waits for a free slot (instance or service) before the 503." default:"2s"`
	MaxBodyInFlight       int64         `help:"Most request-body bytes being read at once, all requests together (503 with Retry-After beyond; 0: 8 x max-body; -1: no cap)." default:"0"`
	WriteTimeout          time.Duration `help:"How long one write to a client may block before the response is cut (a client that stops reading releases its database connection)." default:"30s"`

	BasicAuth bool `help:"Sign requests without a session token in with their HTTP Basic credentials (e-mail and password), each on its own." env:"PORTCULLIS_BASIC_AUTH"`

	Compat string `help:"Behave as another platform where the spec differs, for clients written for it: none (the spec) or dreamfactory (login, registration and password reset without an API key; a session token alone on later calls; GET /api/v2 without credentials)." enum:"none,dreamfactory" default:"none"`
}

func (c serveCmd) config(g *globals) proxy.Config {
	return proxy.Config{DataDir: c.Data, SystemDB: c.SystemDB, RedisURL: c.Redis, RedisPrefix: c.RedisPrefix,
		LimitsFailClosed: c.LimitsFail == "closed", MaxBodyBytes: c.MaxBody, MaxUploadBytes: c.MaxUpload, UpstreamAllow: c.UpstreamAllow, PublicURL: publicURL(c.PublicURL, c.Addr), Logger: g.logger(),
		MaxInFlight: c.MaxInFlight, MaxInFlightPerService: c.MaxInFlightPerService, MaxBodyInFlight: c.MaxBodyInFlight,
		QueueWait: c.QueueWait, WriteTimeout: c.WriteTimeout, Compat: c.Compat, BasicAuth: c.BasicAuth}
}

func (c serveCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := c.config(g)
	if err := initIfNeeded(ctx, cfg); err != nil {
		return err
	}
	return serve(ctx, cfg, c.Addr, shutdown{wait: c.ShutdownWait, grace: c.ShutdownGrace}, nil)
}

// initIfNeeded seeds a never-initialised data directory with a generated
// administrator password and prints the credentials once.
func initIfNeeded(ctx context.Context, cfg proxy.Config) error {
	email, password := "admin@portcullis.local", store.NewSecret(9)
	res, err := proxy.Init(ctx, cfg, store.InitOptions{Email: email, Password: password, Name: "Administrator"})
	if err != nil {
		return err
	}
	if res.AdminCreated {
		fmt.Printf("Initialised a new instance.\n  admin e-mail:    %s\n  admin password:  %s\n  admin API key:   %s\n(shown once; change the password after signing in)\n\n",
			email, password, res.AdminAPIKey)
	}
	return nil
}

// shutdown is how serve stops: for grace it keeps answering (every
// response asking the client to close its connection, /healthz 503), then
// it stops accepting and lets requests in flight finish until wait (counted
// from the signal) runs out; then it closes every connection.
type shutdown struct {
	wait, grace time.Duration
}

// serve runs the server on addr until ctx ends, then stops as sd says. It
// returns nil after a signal, even when requests had to be cut. ready,
// when set, is called with the bound address; opts reach proxy.New (tests
// add service types).
func serve(ctx context.Context, cfg proxy.Config, addr string, sd shutdown, ready func(net.Addr), opts ...proxy.Option) error {
	log := cfg.Logger
	srv, err := proxy.New(ctx, cfg, opts...)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "api_docs", "http://"+ln.Addr().String()+"/api/docs/", "data", srv.Config().DataDir, "version", proxy.Version)
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-errc:
		srv.Close()
		return err
	case <-ctx.Done():
	}
	deadline := time.Now().Add(sd.wait)
	log.Info("shutting down; finishing requests in flight", "wait", sd.wait, "grace", sd.grace)
	srv.Drain()
	if g := min(sd.grace, sd.wait); g > 0 {
		time.Sleep(g)
	}
	sctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		// The wait ran out: cut what is left. Requests still running see
		// their context cancelled when their connection closes.
		log.Warn("shutdown wait ran out; closing the connections still open", "error", err)
		_ = hs.Close()
	}
	// Backends get what is left of the wait (at least a moment) to finish
	// requests still running, then are closed under them.
	bctx, bcancel := context.WithTimeout(context.Background(), max(time.Until(deadline), time.Second))
	defer bcancel()
	if err := srv.Shutdown(bctx); err != nil {
		log.Warn("closing the system store", "error", err)
	}
	log.Info("stopped")
	return nil
}

// publicURL is the --public-url flag, or the listen address as an http URL.
func publicURL(flag, addr string) string {
	if flag != "" {
		return flag
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
