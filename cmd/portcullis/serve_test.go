package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// slowType is a service type whose backend answers after it is released.
type slowType struct {
	started chan struct{}
	release chan struct{}
}

func (t slowType) Info() service.Info {
	return service.Info{Name: "slow", Label: "Slow", Group: "Test"}
}
func (t slowType) ValidateConfig(json.RawMessage) error { return nil }
func (t slowType) New(context.Context, *store.Service, service.Deps) (service.Backend, error) {
	return slowBackend(t), nil
}

type slowBackend slowType

func (b slowBackend) Close() error { return nil }
func (b slowBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	close(b.started)
	<-b.release
	w.Write([]byte(`{"done":true}`))
}

func TestShutdownFinishesRequestsInFlight(t *testing.T) {
	dir := t.TempDir()
	cfg := proxy.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := t.Context()
	seed, err := proxy.Init(ctx, cfg, store.InitOptions{Email: "a@b.co", Password: "password-1"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, proxy.DefaultSystemDB(dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB.NewInsert().Model(&store.Service{Name: "slow", Label: "Slow", Type: "slow", IsActive: true, Config: "{}"}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	typ := slowType{started: make(chan struct{}), release: make(chan struct{})}
	sctx, stop := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(sctx, cfg, "127.0.0.1:0", shutdown{wait: 10 * time.Second}, func(a net.Addr) { addrc <- a }, proxy.WithTypes(typ))
	}()
	addr := <-addrc

	type result struct {
		status int
		body   string
		err    error
	}
	base := "http://" + addr.String() + "/api/v2"
	token := adminToken(t, base, seed.AdminAPIKey, "a@b.co", "password-1")
	resc := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("GET", base+"/slow", nil)
		req.Header.Set("X-Platform-API-Key", seed.AdminAPIKey)
		req.Header.Set("X-Platform-Session-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			resc <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		resc <- result{status: resp.StatusCode, body: string(b)}
	}()
	select {
	case <-typ.started:
	case res := <-resc:
		t.Fatalf("request answered before reaching the backend: %+v", res)
	}
	stop() // what SIGTERM does through signal.NotifyContext
	time.AfterFunc(200*time.Millisecond, func() { close(typ.release) })
	res := <-resc
	if res.err != nil || res.status != http.StatusOK || !strings.Contains(res.body, "done") {
		t.Fatalf("request in flight during shutdown = %+v", res)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if _, err := http.Get("http://" + addr.String() + "/healthz"); err == nil {
		t.Fatal("server still accepting after shutdown")
	}
}

// adminToken signs in as an administrator and returns the session token.
func adminToken(t *testing.T, base, key, email, password string) string {
	t.Helper()
	body := strings.NewReader(`{"email":"` + email + `","password":"` + password + `"}`)
	req, _ := http.NewRequest("POST", base+"/system/admin/session", body)
	req.Header.Set("X-Platform-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		SessionToken string `json:"session_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || s.SessionToken == "" {
		t.Fatalf("admin login: status %d, %v", resp.StatusCode, err)
	}
	return s.SessionToken
}

// TestBinary builds the binary and drives init and serve the way the
// contract's scripts do.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "portcullis")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := filepath.Join(t.TempDir(), "data")
	run := func(args ...string) string {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	k1 := run("init", "--data", data, "--email", "admin@example.com", "--password", "password-1")
	k2 := run("init", "--data", data, "--email", "admin@example.com", "--password", "password-1")
	if len(k1) != 64 || k1 != k2 {
		t.Fatalf("init printed %q then %q; want the same 64-character key", k1, k2)
	}
	if v := run("version"); v == "" {
		t.Fatal("version printed nothing")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(bin, "serve", "--addr", addr)
	srv.Env = append(os.Environ(), "PORTCULLIS_DATA="+data)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not become healthy: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.Get("http://" + addr + "/api/v2/nosuch")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), `"error"`) {
		t.Fatalf("unknown service = %d %s", resp.StatusCode, b)
	}
	if err := srv.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve exited with %v after SIGINT", err)
	}
}
