package main

import (
	"context"
	"errors"
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
	ShutdownWait  time.Duration `help:"How long to wait for requests in flight on SIGINT/SIGTERM." default:"30s"`
}

func (c serveCmd) config(g *globals) proxy.Config {
	return proxy.Config{DataDir: c.Data, SystemDB: c.SystemDB, RedisURL: c.Redis, RedisPrefix: c.RedisPrefix,
		LimitsFailClosed: c.LimitsFail == "closed", MaxBodyBytes: c.MaxBody, MaxUploadBytes: c.MaxUpload, UpstreamAllow: c.UpstreamAllow, Logger: g.logger()}
}

func (c serveCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := c.config(g)
	if err := initIfNeeded(ctx, cfg); err != nil {
		return err
	}
	return serve(ctx, cfg, c.Addr, c.ShutdownWait, nil)
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

// serve runs the server on addr until ctx ends, then lets requests in flight
// finish for up to wait. ready, when set, is called with the bound address;
// opts reach proxy.New (tests add service types).
func serve(ctx context.Context, cfg proxy.Config, addr string, wait time.Duration, ready func(net.Addr), opts ...proxy.Option) error {
	log := cfg.Logger
	srv, err := proxy.New(ctx, cfg, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
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
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down; finishing requests in flight", "wait", wait)
	sctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
