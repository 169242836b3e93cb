package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
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
	"strings"
	"syscall"
	"time"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/handlers/recoverer"
	"github.com/portcullis-dev/portcullis/handlers/session"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// User is someone the program's own account system knows.
type User struct {
	ID       int64  `json:"id"`
	Email    string `json:"email"`
	Name     string `json:"name"`
	RoleID   int64  `json:"role_id,omitempty"`
	RoleName string `json:"role,omitempty"`
	Admin    bool   `json:"admin,omitempty"`
}

// claims is what a token carries: the user and the expiry.
type claims struct {
	User
	Expires int64 `json:"exp"`
}

// Tokens issues and verifies session tokens: base64url(JSON claims) "."
// base64url(HMAC-SHA256). It implements session.Verifier.
type Tokens struct {
	key []byte
	now func() time.Time
}

// NewTokens returns Tokens signed with key (at least 32 bytes); now nil
// means time.Now.
func NewTokens(key []byte, now func() time.Time) (*Tokens, error) {
	if len(key) < 32 {
		return nil, errors.New("sessions: the signing key must have at least 32 bytes")
	}
	if now == nil {
		now = time.Now
	}
	return &Tokens{key: key, now: now}, nil
}

// Issue returns a token that signs u in for ttl.
func (t *Tokens) Issue(u User, ttl time.Duration) (string, error) {
	body, err := json.Marshal(claims{User: u, Expires: t.now().Add(ttl).Unix()})
	if err != nil {
		return "", fmt.Errorf("sessions: issue: %w", err)
	}
	p := base64.RawURLEncoding.EncodeToString(body)
	return p + "." + base64.RawURLEncoding.EncodeToString(t.sign(p)), nil
}

func (t *Tokens) sign(payload string) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Verify implements session.Verifier: a good token adds its user to id; a
// forged, malformed or expired one is a 401 in the error envelope.
func (t *Tokens) Verify(_ context.Context, id *caller.Identity, token string) (*caller.Identity, error) {
	p, sig, ok := strings.Cut(token, ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || len(token) > 4096 || err != nil || !hmac.Equal(got, t.sign(p)) {
		return nil, apierr.Unauthorized("Invalid token.")
	}
	body, err := base64.RawURLEncoding.DecodeString(p)
	var c claims
	if err != nil || json.Unmarshal(body, &c) != nil || c.ID <= 0 {
		return nil, apierr.Unauthorized("Invalid token.")
	}
	if !t.now().Before(time.Unix(c.Expires, 0)) {
		return nil, apierr.Unauthorized("Token has expired.")
	}
	nid := &caller.Identity{Requestor: caller.API}
	if id != nil {
		cp := *id
		nid = &cp
	}
	nid.UserID, nid.UserEmail, nid.UserName, nid.Admin = c.ID, c.Email, c.Name, c.Admin
	if c.RoleID != 0 {
		nid.RoleID, nid.RoleName = c.RoleID, c.RoleName
	}
	return nid, nil
}

// Stack builds recoverer → API key (one static app) → session (tokens) →
// /me, which answers the caller's identity and refuses callers without a
// user. A nil logger discards.
func Stack(apiKey string, tokens *Tokens, logger *slog.Logger) (http.Handler, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rec, err := recoverer.New(recoverer.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	keys, err := apikey.New(apikey.Options{Apps: apikey.NewStatic(
		apikey.App{ID: 1, Name: "web", APIKey: apiKey, Active: true},
	)})
	if err != nil {
		return nil, err
	}
	// No system database, no login routes: every token is checked.
	sess, err := session.New(session.Options{Verifier: tokens, Bypass: func(*http.Request) bool { return false }})
	if err != nil {
		return nil, err
	}
	return handlers.Chain(rec, keys, sess)(apierr.HandlerFunc(me)), nil
}

// me answers who called: the app, and the user the token signed in.
func me(w http.ResponseWriter, r *http.Request) error {
	id := caller.IdentityFrom(r.Context())
	if id == nil || id.UserID == 0 {
		return apierr.Unauthorized("Sign in: send a session token in X-Platform-Session-Token.")
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]any{
		"app": id.AppName, "user_id": id.UserID, "email": id.UserEmail, "name": id.UserName,
		"role": id.RoleName, "admin": id.Admin,
	})
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "sessions:", err)
		os.Exit(1)
	}
}

// run parses args, issues a token for a demo user and serves the stack
// under /api/ until ctx ends. ready, when set, receives the bound address.
func run(ctx context.Context, args []string, stdout io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	ttl := fs.Duration("ttl", time.Hour, "lifetime of the demo user's token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	tokens, err := NewTokens(key, nil)
	if err != nil {
		return err
	}
	apiKey := store.NewAPIKey()
	tok, err := tokens.Issue(User{ID: 7, Email: "ada@example.com", Name: "Ada", RoleID: 2, RoleName: "editor"}, *ttl)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stack, err := Stack(apiKey, tokens, logger)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", stack))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "serving http://%s/api/me\n  API key: %s\n  token of ada@example.com (%s): %s\n",
		ln.Addr(), apiKey, *ttl, tok)
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
