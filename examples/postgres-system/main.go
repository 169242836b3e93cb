package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "postgres-system:", err)
		os.Exit(1)
	}
}

// run parses args, seeds the shared system database once, and serves one
// instance per address until ctx ends. ready, when set, receives the bound
// addresses in order.
func run(ctx context.Context, args []string, stdout io.Writer, ready func(addrs []string)) error {
	fs := flag.NewFlagSet("postgres-system", flag.ContinueOnError)
	systemDB := fs.String("system-db", os.Getenv("PORTCULLIS_SYSTEM_DB"), "shared system database DSN (postgres://…); env PORTCULLIS_SYSTEM_DB")
	redisURL := fs.String("redis", os.Getenv("PORTCULLIS_REDIS"), "shared Redis URL for rate-limit counters; env PORTCULLIS_REDIS")
	redisPrefix := fs.String("redis-prefix", "", "prefix of the counters' Redis keys (deployments sharing one Redis use different ones)")
	addrs := fs.String("addrs", "127.0.0.1:8081,127.0.0.1:8082", "comma-separated listen addresses, one instance each")
	data := fs.String("data", "./postgres-system-data", "base data directory (one sub-folder per instance)")
	email := fs.String("email", "admin@example.com", "administrator e-mail for a fresh system database")
	password := fs.String("password", "", "administrator password for a fresh system database (default: generated)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !strings.HasPrefix(*systemDB, "postgres://") && !strings.HasPrefix(*systemDB, "postgresql://") {
		return errors.New("-system-db must be a postgres:// DSN (or set PORTCULLIS_SYSTEM_DB)")
	}
	if *redisURL == "" {
		return errors.New("-redis is required (or set PORTCULLIS_REDIS): instances share rate-limit counters there")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	list := strings.Split(*addrs, ",")

	config := func(i int) proxy.Config {
		return proxy.Config{
			DataDir:     filepath.Join(*data, fmt.Sprintf("instance-%d", i+1)),
			SystemDB:    *systemDB,
			RedisURL:    *redisURL,
			RedisPrefix: *redisPrefix,
			Logger:      logger.With("instance", i+1),
		}
	}

	// Seeding is idempotent and safe to run from every instance; doing it
	// once up front keeps the output readable.
	pw := *password
	if pw == "" {
		pw = store.NewSecret(9)
	}
	res, err := proxy.Init(ctx, config(0), store.InitOptions{Email: *email, Password: pw, Name: "Administrator"})
	if err != nil {
		return err
	}
	if res.AdminCreated {
		fmt.Fprintf(stdout, "initialised the shared system database\n  admin e-mail:   %s\n  admin password: %s\n", *email, pw)
	}
	fmt.Fprintf(stdout, "  admin API key:  %s\n", res.AdminAPIKey)

	var servers []*http.Server
	var instances []*proxy.Server
	var bound []string
	errc := make(chan error, len(list))
	defer func() {
		// Finish the requests in flight, then release the backends.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, hs := range servers {
			_ = hs.Shutdown(sctx)
		}
		for _, srv := range instances {
			_ = srv.Close()
		}
	}()
	for i, addr := range list {
		srv, err := proxy.New(ctx, config(i))
		if err != nil {
			return fmt.Errorf("instance %d: %w", i+1, err)
		}
		instances = append(instances, srv)
		ln, err := net.Listen("tcp", strings.TrimSpace(addr))
		if err != nil {
			return fmt.Errorf("instance %d: %w", i+1, err)
		}
		hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, hs)
		bound = append(bound, ln.Addr().String())
		go func() {
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
		fmt.Fprintf(stdout, "instance %d: http://%s/api/v2/\n", i+1, ln.Addr())
	}
	if ready != nil {
		ready(bound)
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return nil
	}
}
