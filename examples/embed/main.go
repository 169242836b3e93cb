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
	"syscall"
	"time"

	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Prefix is where Portcullis is mounted.
const Prefix = "/portcullis"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// run parses args, builds the program's handler and serves it until ctx
// ends. ready, when set, receives the bound address.
func run(ctx context.Context, args []string, stdout io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	data := fs.String("data", "./data", "Portcullis data directory")
	email := fs.String("email", "admin@example.com", "administrator e-mail for a fresh data directory")
	password := fs.String("password", "", "administrator password for a fresh data directory (default: generated)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	cfg := proxy.Config{DataDir: *data, Logger: logger}
	pw := *password
	if pw == "" {
		pw = store.NewSecret(9)
	}
	res, err := proxy.Init(ctx, cfg, store.InitOptions{Email: *email, Password: pw, Name: "Administrator"})
	if err != nil {
		return err
	}
	if res.AdminCreated {
		fmt.Fprintf(stdout, "initialised %s\n  admin e-mail:   %s\n  admin password: %s\n", *data, *email, pw)
	}
	fmt.Fprintf(stdout, "  admin API key:  %s\n", res.AdminAPIKey)

	pc, err := proxy.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer pc.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: Handler(pc), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "serving http://%s/ (the program) and http://%s%s/api/v2/ (Portcullis)\n", ln.Addr(), ln.Addr(), Prefix)
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler is the program's routing: its own pages, and Portcullis (any
// http.Handler, here a *proxy.Server) under Prefix. http.StripPrefix hands
// Portcullis paths such as /api/v2/db/_table, exactly as if it were served
// at the root.
func Handler(portcullis http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "This is the program's own home page. Portcullis lives under %s/.\n", Prefix)
	})
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "hello from the program\n")
	})
	mux.Handle(Prefix+"/", http.StripPrefix(Prefix, portcullis))
	return mux
}
