package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/handlers/ratelimit"
	"github.com/portcullis-dev/portcullis/handlers/rbac"
	"github.com/portcullis-dev/portcullis/handlers/recoverer"
	"github.com/portcullis-dev/portcullis/handlers/requestid"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/rws"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Roles of the example's two apps.
const (
	RoleFree int64 = 1
	RolePaid int64 = 2
)

// Settings is what the stack is built from.
type Settings struct {
	// Upstream is the base URL requests are forwarded to.
	Upstream string
	// FreeKey and PaidKey are the API keys of the two apps.
	FreeKey, PaidKey string
	// FreePerMinute and PaidPerMinute are the requests each role may make
	// per minute.
	FreePerMinute, PaidPerMinute int64
	// Logger is the logger of the stages and the proxy.
	Logger *slog.Logger
}

// Service is the name the stack's one service goes by in roles and errors.
const Service = "upstream"

// Stack builds the handler: recoverer → request id → API key → roles →
// rate limit → reverse proxy. The free tier may only read (GET); the paid
// tier may use every verb. Close the returned proxy when done.
func Stack(s Settings) (http.Handler, io.Closer, error) {
	recover, err := recoverer.New(recoverer.Options{Logger: s.Logger})
	if err != nil {
		return nil, nil, err
	}
	reqID, err := requestid.New(requestid.Options{})
	if err != nil {
		return nil, nil, err
	}
	keys, err := apikey.New(apikey.Options{Apps: apikey.NewStatic(
		apikey.App{ID: 1, Name: "free-app", APIKey: s.FreeKey, Active: true, RoleID: RoleFree, RoleName: "free"},
		apikey.App{ID: 2, Name: "paid-app", APIKey: s.PaidKey, Active: true, RoleID: RolePaid, RoleName: "paid"},
	)})
	if err != nil {
		return nil, nil, err
	}
	roles, err := rbac.Static([]policy.Role{
		{ID: RoleFree, Name: "free", Active: true, Accesses: []policy.Access{
			{Service: Service, Component: "*", VerbMask: policy.VerbGet, RequestorMask: policy.RequestorAPI}}},
		{ID: RolePaid, Name: "paid", Active: true, Accesses: []policy.Access{
			{Service: Service, Component: "*", VerbMask: policy.VerbAll, RequestorMask: policy.RequestorAPI}}},
	})
	if err != nil {
		return nil, nil, err
	}
	// Without the proxy router, every request is for the one service.
	access, err := rbac.New(rbac.Options{Policy: roles, Target: rbac.FixedService(Service, "rws"), Logger: s.Logger})
	if err != nil {
		return nil, nil, err
	}
	limits, err := ratelimit.Static([]limiter.Limit{
		{ID: 1, Name: "free tier", Type: limiter.TypeRole, RoleID: RoleFree, Rate: s.FreePerMinute, Period: limiter.PeriodMinute, Active: true},
		{ID: 2, Name: "paid tier", Type: limiter.TypeRole, RoleID: RolePaid, Rate: s.PaidPerMinute, Period: limiter.PeriodMinute, Active: true},
	}, nil) // nil: counters in this process's memory
	if err != nil {
		return nil, nil, err
	}
	rate, err := ratelimit.New(ratelimit.Options{Limits: limits, Logger: s.Logger})
	if err != nil {
		return nil, nil, err
	}
	upstream, err := rws.New(rws.Config{
		Name:    Service,
		BaseURL: s.Upstream,
		// The upstream learns which app and tier called, never the key.
		Headers: []rws.Header{
			{Name: "X-Client-App", Value: "{app.name}"},
			{Name: "X-Client-Tier", Value: "{role.name}"},
		},
		Timeout: 15 * time.Second,
		Logger:  s.Logger,
	})
	if err != nil {
		return nil, nil, err
	}
	return handlers.Chain(recover, reqID, keys, access, rate)(upstream), upstream, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "custom-stack:", err)
		os.Exit(1)
	}
}

// run parses args, builds the stack and serves it under /api/ until ctx
// ends. ready, when set, receives the bound address.
func run(ctx context.Context, args []string, stdout io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("custom-stack", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	upstream := fs.String("upstream", "", "base URL of the upstream API (default: a built-in echo server)")
	freeKey := fs.String("free-key", "", "API key of the free app (default: generated)")
	paidKey := fs.String("paid-key", "", "API key of the paid app (default: generated)")
	freeRate := fs.Int64("free-rate", 5, "requests per minute for the free tier")
	paidRate := fs.Int64("paid-rate", 600, "requests per minute for the paid tier")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *upstream == "" {
		echo := httptest.NewServer(http.HandlerFunc(echoUpstream))
		defer echo.Close()
		*upstream = echo.URL
	}
	for _, k := range []*string{freeKey, paidKey} {
		if *k == "" {
			*k = store.NewAPIKey()
		}
	}
	stack, closer, err := Stack(Settings{Upstream: *upstream, FreeKey: *freeKey, PaidKey: *paidKey,
		FreePerMinute: *freeRate, PaidPerMinute: *paidRate, Logger: logger})
	if err != nil {
		return err
	}
	defer closer.Close()

	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", stack))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "forwarding http://%s/api/… to %s\n  free key (%d/min): %s\n  paid key (%d/min): %s\n",
		ln.Addr(), *upstream, *freeRate, *freeKey, *paidRate, *paidKey)
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

// echoUpstream answers with what it received: method, path, query and the
// headers the proxy added.
func echoUpstream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"method": r.Method, "path": r.URL.Path, "raw_path": r.URL.EscapedPath(), "query": r.URL.RawQuery,
		"app": r.Header.Get("X-Client-App"), "tier": r.Header.Get("X-Client-Tier"),
		"saw_api_key": r.Header.Get("X-Platform-API-Key") != "" || r.URL.Query().Has("api_key"),
	})
}
