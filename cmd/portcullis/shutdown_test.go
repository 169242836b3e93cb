package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// startSlow starts serve on a fresh data dir with a "slow" service whose
// requests block until typ.release is closed; it returns the base URL, the
// admin credentials, the stop function and serve's result.
func startSlow(t *testing.T, typ slowType, sd shutdown, adjust func(*proxy.Config)) (base, key, token string, stop func(), done chan error) {
	t.Helper()
	dir := t.TempDir()
	cfg := proxy.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if adjust != nil {
		adjust(&cfg)
	}
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
	sctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done = make(chan error, 1)
	go func() {
		done <- serve(sctx, cfg, "127.0.0.1:0", sd, func(a net.Addr) { addrc <- a }, proxy.WithTypes(typ))
	}()
	base = "http://" + (<-addrc).String()
	return base, seed.AdminAPIKey, adminToken(t, base+"/api/v2", seed.AdminAPIKey, "a@b.co", "password-1"), cancel, done
}

// TestShutdownEndsWhenRequestsDoNot reproduces issue 16: with a request
// that never ends (a client that does not read, a backend stuck), the
// shutdown wait ran out but the process kept running, then exited 1. Now
// serve returns nil soon after the wait.
func TestShutdownEndsWhenRequestsDoNot(t *testing.T) {
	typ := slowType{started: make(chan struct{}), release: make(chan struct{})}
	defer close(typ.release)
	base, key, token, stop, done := startSlow(t, typ, shutdown{wait: time.Second}, nil)
	go func() {
		req, _ := http.NewRequest("GET", base+"/api/v2/slow", nil)
		req.Header.Set("X-Platform-API-Key", key)
		req.Header.Set("X-Platform-Session-Token", token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-typ.started
	start := time.Now()
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v; want nil (exit 0)", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("shutdown took %v with a 1s wait", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve still running 15s after the signal with a 1s wait")
	}
}

// TestShutdownTellsKeepAliveToClose: a request arriving on an idle
// keep-alive connection after the signal is answered, with Connection:
// close, instead of being reset; /healthz says the instance is stopping.
func TestShutdownTellsKeepAliveToClose(t *testing.T) {
	typ := slowType{started: make(chan struct{}), release: make(chan struct{})}
	base, _, _, stop, done := startSlow(t, typ, shutdown{wait: 5 * time.Second, grace: time.Second}, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	get := func(path string) (*http.Response, error) {
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
		resp, err := http.ReadResponse(br, nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	if resp, err := get("/healthz"); err != nil || resp.StatusCode != 200 || resp.Close {
		t.Fatalf("before the signal: %v %v", resp, err)
	}
	stop()
	time.Sleep(200 * time.Millisecond) // the connection is idle when the signal comes
	resp, err := get("/api/v2/nosuch")
	if err != nil {
		t.Fatalf("request on an idle keep-alive connection after the signal: %v", err)
	}
	if resp.StatusCode != 404 || !resp.Close {
		t.Fatalf("after the signal = %d, Connection: close %v; want the answer and close", resp.StatusCode, resp.Close)
	}
	// The server then closes the connection.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("connection after Connection: close: %v; want EOF", err)
	}
	// New connections during the grace learn the instance is stopping.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if r, err := hc.Get(base + "/healthz"); err == nil {
		r.Body.Close()
		if r.StatusCode != 503 {
			t.Fatalf("/healthz while stopping = %d", r.StatusCode)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
}
