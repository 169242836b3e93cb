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
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	gogelf "gopkg.in/Graylog2/go-gelf.v2/gelf"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/handlers/gelf"
	"github.com/portcullis-dev/portcullis/handlers/recoverer"
	"github.com/portcullis-dev/portcullis/handlers/requestid"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/logstash"
)

// Settings is what the stack is built from.
type Settings struct {
	// Collector is the connector: address, protocol (gelf, udp, tcp or
	// http), minimum level and context keys.
	Collector logship.Config
	// APIKey is the key of the one app allowed in.
	APIKey string
	// Logger receives the stages' errors and the connector's send
	// failures.
	Logger *slog.Logger
}

// Stack builds the handler and the connector behind it. Close the
// connector when done: events still queued get a moment to be sent.
func Stack(s Settings) (http.Handler, *logship.Connector, error) {
	// logstash.NewConnector speaks every protocol (http included);
	// logship.New alone speaks gelf, udp and tcp.
	conn, err := logstash.NewConnector(s.Collector, logstash.ConnectorOptions{Logger: s.Logger})
	if err != nil {
		return nil, nil, fmt.Errorf("connector: %w", err)
	}
	tap, err := gelf.New(gelf.Options{Connectors: gelf.Static(conn)})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	recover, err := recoverer.New(recoverer.Options{Logger: s.Logger})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	reqID, err := requestid.New(requestid.Options{})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	keys, err := apikey.New(apikey.Options{Apps: apikey.NewStatic(
		apikey.App{ID: 1, Name: "notes-app", APIKey: s.APIKey, Active: true, RoleID: 1, RoleName: "writer"},
	)})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	// The tap comes before the API key stage so that refused requests
	// (401) are shipped too; Observe, after it, records the caller.
	stack := handlers.Chain(recover, reqID, tap, keys, gelf.Observe)(&notes{})
	return stack, conn, nil
}

// notes is the API behind the stack: POST stores a note, GET lists them.
type notes struct {
	mu   sync.Mutex
	list []map[string]any
}

func (n *notes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.Handler(func(w http.ResponseWriter, r *http.Request) error {
		n.mu.Lock()
		defer n.mu.Unlock()
		switch r.Method {
		case http.MethodGet:
			return apierr.WriteJSON(w, http.StatusOK, map[string]any{"resource": n.list})
		case http.MethodPost:
			var note map[string]any
			if err := apierr.DecodeJSON(r, &note, true); err != nil {
				return err
			}
			note["id"] = len(n.list) + 1
			n.list = append(n.list, note)
			return apierr.WriteJSON(w, http.StatusCreated, map[string]any{"id": note["id"]})
		}
		return apierr.MethodNotAllowed(r.Method)
	}).ServeHTTP(w, r)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "gelf:", err)
		os.Exit(1)
	}
}

// run parses args, builds the stack and serves it under /api/ until ctx
// ends. ready, when set, receives the bound address.
func run(ctx context.Context, args []string, stdout io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("gelf", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	collector := fs.String("collector", "", "host:port of the GELF collector (default: a built-in UDP collector that prints)")
	protocol := fs.String("protocol", "gelf", "gelf (UDP, compressed), udp, tcp or http")
	level := fs.String("level", "DEBUG", "minimum level shipped (2xx/3xx are INFO, 4xx WARNING, 5xx ERROR)")
	key := fs.String("key", "demo-key", "API key of the example's app")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *collector == "" {
		if *protocol != "gelf" && *protocol != "udp" {
			return errors.New("the built-in collector takes UDP: use -protocol gelf or udp, or give -collector")
		}
		r, err := gogelf.NewReader("127.0.0.1:0")
		if err != nil {
			return err
		}
		go printMessages(r, stdout)
		*collector = r.Addr()
	}
	host, port, err := net.SplitHostPort(*collector)
	if err != nil {
		return fmt.Errorf("-collector: %w", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("-collector: port %q: %w", port, err)
	}
	stack, conn, err := Stack(Settings{
		Collector: logship.Config{Name: "example", Host: host, Port: p, Protocol: *protocol, Level: *level,
			Context: []string{"_event", "_platform.session"}},
		APIKey: *key,
		Logger: logger,
	})
	if err != nil {
		return err
	}
	defer conn.Close()

	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", stack))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "serving http://%s/api/notes (API key %s), shipping to %s over %s\n", ln.Addr(), *key, *collector, *protocol)
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

// printMessages prints what the built-in collector receives, one line
// per message: the short message and the additional fields as JSON.
func printMessages(r *gogelf.Reader, out io.Writer) {
	for {
		m, err := r.ReadMessage()
		if err != nil {
			continue
		}
		extra, _ := json.Marshal(m.Extra)
		fmt.Fprintf(out, "collector: level %d %s %s\n", m.Level, m.Short, extra)
	}
}
