package rws_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/rws"
)

// TestProtocolEdges pins what the proxy does with the rarer parts of
// HTTP, as httputil.ReverseProxy does: informational answers, trailers,
// hop-by-hop headers named by Connection, and protocol upgrades.
func TestProtocolEdges(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hints":
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			_, _ = io.WriteString(w, "done")
		case "/trailer":
			w.Header().Set("Trailer", "X-Checksum")
			_, _ = io.WriteString(w, "body")
			w.Header().Set("X-Checksum", "abc")
		case "/hop":
			w.Header().Set("Connection", "X-Internal")
			w.Header().Set("X-Internal", "secret")
			w.Header().Set("Keep-Alive", "timeout=5")
			w.Header().Set("X-Seen-Custom", r.Header.Get("X-Custom"))
			w.Header().Set("X-Seen-Te", r.Header.Get("Te"))
			_, _ = io.WriteString(w, "ok")
		case "/upgrade":
			if r.Header.Get("Upgrade") != "echo" {
				http.Error(w, "no upgrade", http.StatusBadRequest)
				return
			}
			conn, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
			_ = brw.Flush()
			line, _ := brw.ReadString('\n')
			_, _ = brw.WriteString("echo: " + line)
			_ = brw.Flush()
		}
	}))
	defer up.Close()
	p := newProxy(t, rws.Config{BaseURL: up.URL})
	front := httptest.NewServer(p)
	defer front.Close()

	t.Run("1xx relayed", func(t *testing.T) {
		conn := dial(t, front.URL)
		_, _ = io.WriteString(conn, "GET /hints HTTP/1.1\r\nHost: x\r\n\r\n")
		tp := textproto.NewReader(bufio.NewReader(conn))
		line, _ := tp.ReadLine()
		if !strings.Contains(line, " 103 ") {
			t.Fatalf("first status line %q, want 103", line)
		}
		h, _ := tp.ReadMIMEHeader()
		if h.Get("Link") == "" {
			t.Errorf("103 without its Link header: %v", h)
		}
		line, _ = tp.ReadLine()
		if !strings.Contains(line, " 200 ") {
			t.Fatalf("final status line %q, want 200", line)
		}
	})
	t.Run("trailers", func(t *testing.T) {
		resp, err := http.Get(front.URL + "/trailer")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "body" || resp.Trailer.Get("X-Checksum") != "abc" {
			t.Errorf("body %q trailer %v", body, resp.Trailer)
		}
	})
	t.Run("hop-by-hop", func(t *testing.T) {
		req, _ := http.NewRequest("GET", front.URL+"/hop", nil)
		req.Header.Set("Connection", "X-Custom")
		req.Header.Set("X-Custom", "dropped")
		req.Header.Set("Te", "trailers")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if v := resp.Header.Get("X-Seen-Custom"); v != "" {
			t.Errorf("header named by the client's Connection reached the upstream: %q", v)
		}
		if v := resp.Header.Get("X-Seen-Te"); v != "trailers" {
			t.Errorf("Te = %q, want trailers", v)
		}
		for _, k := range []string{"X-Internal", "Keep-Alive"} {
			if v := resp.Header.Get(k); v != "" {
				t.Errorf("hop-by-hop response header %s = %q reached the client", k, v)
			}
		}
	})
	t.Run("upgrade", func(t *testing.T) {
		conn := dial(t, front.URL)
		_, _ = io.WriteString(conn, "GET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("status %d", resp.StatusCode)
		}
		_, _ = io.WriteString(conn, "hello\n")
		line, _ := br.ReadString('\n')
		if line != "echo: hello\n" {
			t.Errorf("through the upgraded connection: %q", line)
		}
	})
}

// dial opens a raw connection to a test server's URL, closed with the test.
func dial(t *testing.T, serverURL string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(serverURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { conn.Close() })
	return conn
}
