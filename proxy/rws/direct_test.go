package rws

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawUpstream is an HTTP/1.1 upstream written by hand: it records the
// bytes of every request head it reads and answers with the raw bytes
// answer returns for the request line; close says to hang up after it.
type rawUpstream struct {
	url   string
	mu    sync.Mutex
	heads []string
	conns int
}

func newRawUpstream(t *testing.T, answer func(line string) (raw string, close bool)) *rawUpstream {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &rawUpstream{url: "http://" + l.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns++
			u.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					var head strings.Builder
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						head.WriteString(line)
						if line == "\r\n" {
							break
						}
					}
					u.mu.Lock()
					u.heads = append(u.heads, head.String())
					u.mu.Unlock()
					first, _, _ := strings.Cut(head.String(), "\r\n")
					raw, hangUp := answer(first)
					now, later, delayed := strings.Cut(raw, delay)
					if _, err := io.WriteString(c, now); err != nil {
						return
					}
					if delayed {
						time.Sleep(10 * time.Millisecond)
						if _, err := io.WriteString(c, later); err != nil {
							return
						}
					}
					if hangUp {
						return
					}
				}
			}()
		}
	}()
	return u
}

// delay in an answer of a rawUpstream splits it in two writes 10 ms apart.
const delay = "\x00delay\x00"

func (u *rawUpstream) takeHeads() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	h := u.heads
	u.heads = nil
	return h
}

func testProxy(t *testing.T, cfg Config, direct bool) *Proxy {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if direct && p.direct == nil {
		t.Fatalf("%s: no direct transport", cfg.BaseURL)
	}
	if !direct {
		p.direct = nil
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// seenAnswer is what a client gets: status, headers but Date, body,
// trailers, or the error that ended the body.
type seenAnswer struct {
	status  int
	header  http.Header
	body    string
	trailer http.Header
	err     string
}

// rawClientDo sends a raw request to a front server and reads the answer
// with http.ReadResponse, so that informational answers show too.
func rawClientDo(t *testing.T, front, raw string) seenAnswer {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(front, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var a seenAnswer
	method, _, _ := strings.Cut(raw, " ")
	for {
		res, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			a.err = err.Error()
			return a
		}
		res.Header.Del("Date")
		if res.StatusCode >= 100 && res.StatusCode < 200 {
			a.body += res.Status + " " + strings.Join(slices.Sorted(func(yield func(string) bool) {
				for k, v := range res.Header {
					if !yield(k + "=" + strings.Join(v, ",")) {
						return
					}
				}
			}), ";") + "\n"
			continue
		}
		a.status, a.header = res.StatusCode, res.Header
		body, err := io.ReadAll(res.Body)
		a.body += string(body)
		if err != nil {
			a.err = err.Error()
		}
		a.trailer = res.Trailer
		return a
	}
}

// TestDirectMatchesTransport sends the same requests through the direct
// transport and through http.Transport and compares, byte for byte, the
// request heads the upstream reads and what the client gets: plain,
// chunked with a trailer, read-until-close, informational, bodiless and
// encoded answers, hop-by-hop and credential headers, several verbs, an
// answer that is not HTTP and a silent upstream.
func TestDirectMatchesTransport(t *testing.T) {
	answers := map[string]string{
		"/plain":   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-Custom: a\r\nX-Custom: b\r\nSet-Cookie: a=1; Path=/\r\nSet-Cookie: b=2\r\n\r\n{\"ok\":true}",
		"/chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n4\r\nbody\r\n4\r\nmore\r\n0\r\nX-Sum: abc\r\n\r\n",
		"/hints":   "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"/empty":   "HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n",
		"/same":    "HTTP/1.1 304 Not Modified\r\nEtag: \"x\"\r\n\r\n",
		"/zero":    "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"/head":    "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n",
		"/hop":     "HTTP/1.1 200 OK\r\nConnection: X-Internal, keep-alive\r\nX-Internal: s\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok",
		"/gzip":    "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\nVary: Accept-Encoding\r\n\r\n\x1f\x8b\x08\x00",
		"/lower":   "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-lower: v\r\ncontent-length: 2\r\n\r\nok",
		"/error":   "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 4\r\n\r\ndown",
		"/garbage": "this is not HTTP\r\n\r\n",
		"/short":   "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
		"/switch":  "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n",
	}
	closing := map[string]bool{"/garbage": true, "/short": true, "/close": true, "/switch": true}
	answers["/close"] = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end"
	up := newRawUpstream(t, func(line string) (string, bool) {
		_, target, _ := strings.Cut(line, " ")
		target, _, _ = strings.Cut(target, " ")
		path, _, _ := strings.Cut(target, "?")
		path = strings.TrimPrefix(path, "/base")
		if path == "/silent" {
			time.Sleep(300 * time.Millisecond)
			return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate", false
		}
		return answers[path], closing[path]
	})

	requests := []string{}
	for path := range answers {
		requests = append(requests, "GET "+path+"?a=1&api_key=k&b=%20 HTTP/1.1\r\nHost: front.example\r\nUser-Agent: t/1\r\nAccept-Encoding: gzip, br\r\nTe: trailers\r\n\r\n")
	}
	requests = append(requests,
		"HEAD /head HTTP/1.1\r\nHost: front.example\r\n\r\n",
		"DELETE /plain HTTP/1.1\r\nHost: front.example\r\nX-Platform-Api-Key: secret\r\nAuthorization: Bearer x\r\nCookie: c=1\r\n\r\n",
		"OPTIONS /plain HTTP/1.1\r\nHost: front.example\r\nOrigin: https://o.example\r\n\r\n",
		"POST /plain HTTP/1.1\r\nHost: front.example\r\nContent-Length: 0\r\n\r\n",
		"PUT /plain HTTP/1.1\r\nHost: front.example\r\nContent-Length: 0\r\n\r\n",
		"PATCH /plain HTTP/1.1\r\nHost: front.example\r\n\r\n",
		"GET /plain HTTP/1.1\r\nHost: front.example\r\nConnection: X-Custom, keep-alive\r\nX-Custom: dropped\r\nX-Forwarded-For: 6.6.6.6\r\nForwarded: for=6.6.6.6\r\nX-Forwarded-Prefix: /evil\r\nX-Odd:  spaced  \r\nX-Many: 1\r\nX-Many: 2\r\nidempotency-key: k\r\n\r\n",
		"GET /plain HTTP/1.0\r\nHost: front.example\r\n\r\n",
		"GET /lower/%2e%2e/x HTTP/1.1\r\nHost: front.example\r\n\r\n",
		"GET /silent HTTP/1.1\r\nHost: front.example\r\n\r\n",
	)
	cfg := Config{Name: "svc", BaseURL: up.url + "/base?fixed=1", Timeout: 150 * time.Millisecond,
		Headers: []Header{{Name: "X-Injected", Value: "v"}}}

	type outcome struct {
		heads  []string
		answer seenAnswer
	}
	run := func(direct bool) []outcome {
		p := testProxy(t, cfg, direct)
		front := httptest.NewServer(p)
		defer front.Close()
		var out []outcome
		for _, raw := range requests {
			a := rawClientDo(t, front.URL, raw)
			time.Sleep(20 * time.Millisecond) // the upstream records its last head
			out = append(out, outcome{up.takeHeads(), a})
		}
		return out
	}
	viaTransport, viaDirect := run(false), run(true)
	if testing.Verbose() {
		for i := range requests {
			t.Logf("%q\n  heads %q\n  answer %+v", requests[i], viaDirect[i].heads, viaDirect[i].answer)
		}
	}
	for i, raw := range requests {
		tr, d := viaTransport[i], viaDirect[i]
		first, _, _ := strings.Cut(raw, "\r\n")
		if !slices.Equal(tr.heads, d.heads) {
			t.Errorf("%s: the upstream read\n%q through the Transport,\n%q through the direct transport", first, tr.heads, d.heads)
		}
		if tr.answer.status != d.answer.status || tr.answer.body != d.answer.body || tr.answer.err != d.answer.err ||
			!headersEqual(tr.answer.header, d.answer.header) || !headersEqual(tr.answer.trailer, d.answer.trailer) {
			t.Errorf("%s: the client got\n%+v through the Transport,\n%+v through the direct transport", first, tr.answer, d.answer)
		}
	}
}

func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestDirectStaleConnections: an upstream that hangs up after every
// answer without saying so. A kept-alive connection it has closed is not
// used again (a DELETE, which is not replayed, still succeeds), and a GET
// that finds it closed mid-way is sent again on a new one, as the
// Transport does.
func TestDirectStaleConnections(t *testing.T) {
	up := newRawUpstream(t, func(string) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true
	})
	p := testProxy(t, Config{Name: "svc", BaseURL: up.url}, true)
	front := httptest.NewServer(p)
	defer front.Close()
	for i := range 20 {
		method := "GET"
		if i%2 == 1 {
			method = "DELETE"
			time.Sleep(20 * time.Millisecond) // the hang-up has arrived
		}
		a := rawClientDo(t, front.URL, method+" /x HTTP/1.1\r\nHost: f\r\n\r\n")
		if a.status != 200 || a.body != "ok" {
			t.Fatalf("%s #%d: %+v", method, i, a)
		}
	}
}

// TestDirectUnsolicitedBytes: bytes an upstream sends past its answer,
// with it or later, are never read as the next request's answer; the
// connection is not used again.
func TestDirectUnsolicitedBytes(t *testing.T) {
	for _, later := range []bool{false, true} {
		unsolicited(t, later)
	}
}

func unsolicited(t *testing.T, later bool) {
	sep := ""
	if later {
		sep = delay
	}
	n := 0
	var mu sync.Mutex
	up := newRawUpstream(t, func(string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n == 1 {
			return "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst" + sep + "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil", false
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond", false
	})
	p := testProxy(t, Config{Name: "svc", BaseURL: up.url}, true)
	front := httptest.NewServer(p)
	defer front.Close()
	if a := rawClientDo(t, front.URL, "GET /1 HTTP/1.1\r\nHost: f\r\n\r\n"); a.body != "first" {
		t.Fatalf("later %v: first answer %+v", later, a)
	}
	time.Sleep(50 * time.Millisecond)
	if a := rawClientDo(t, front.URL, "GET /2 HTTP/1.1\r\nHost: f\r\n\r\n"); a.body != "second" {
		t.Fatalf("later %v: second answer %+v", later, a)
	}
}

// TestDirectClientGoneAbortsUpstream: when the client goes away, the
// upstream's request ends too, without an overall time limit.
func TestDirectClientGoneAbortsUpstream(t *testing.T) {
	ended := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			close(ended)
		case <-time.After(10 * time.Second):
		}
	}))
	defer up.Close()
	for _, stage := range []string{"headers", "body"} {
		t.Run(stage, func(t *testing.T) {
			ended = make(chan struct{})
			base := up.URL
			if stage == "body" {
				stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.WriteString(w, "partial")
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						close(ended)
					case <-time.After(10 * time.Second):
					}
				}))
				defer stall.Close()
				base = stall.URL
			}
			p := testProxy(t, Config{Name: "svc", BaseURL: base, Timeout: -1}, true)
			front := httptest.NewServer(p)
			defer front.Close()
			ctx, cancel := context.WithCancel(t.Context())
			req, _ := http.NewRequestWithContext(ctx, "GET", front.URL+"/x", nil)
			go func() {
				time.Sleep(100 * time.Millisecond)
				cancel()
			}()
			if resp, err := front.Client().Do(req); err == nil {
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			select {
			case <-ended:
			case <-time.After(5 * time.Second):
				t.Fatal("the upstream's request did not end when the client went away")
			}
		})
	}
}

// TestDirectIdleConnectionsClose: connections idle for the idle timeout
// are closed, and Close closes the others.
func TestDirectIdleConnectionsClose(t *testing.T) {
	up := newRawUpstream(t, func(string) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	p := testProxy(t, Config{Name: "svc", BaseURL: up.url}, true)
	p.direct.idleTimeout = 50 * time.Millisecond
	front := httptest.NewServer(p)
	defer front.Close()
	idle := func() int {
		p.direct.mu.Lock()
		defer p.direct.mu.Unlock()
		return len(p.direct.idle)
	}
	for range 3 {
		if a := rawClientDo(t, front.URL, "GET /x HTTP/1.1\r\nHost: f\r\n\r\n"); a.body != "ok" {
			t.Fatalf("%+v", a)
		}
	}
	if n := idle(); n != 1 {
		t.Fatalf("%d idle connections after three requests in a row, want 1", n)
	}
	time.Sleep(200 * time.Millisecond)
	if n := idle(); n != 0 {
		t.Fatalf("%d idle connections after the idle timeout", n)
	}
	if a := rawClientDo(t, front.URL, "GET /x HTTP/1.1\r\nHost: f\r\n\r\n"); a.body != "ok" {
		t.Fatalf("%+v", a)
	}
	p.Close()
	if n := idle(); n != 0 {
		t.Fatalf("%d idle connections after Close", n)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if up.conns != 2 {
		t.Errorf("%d upstream connections, want 2", up.conns)
	}
}

// TestDirectOnlyForPlainHTTP: https upstreams, requests with a body and
// upgrades go through the Transport.
func TestDirectOnlyForPlainHTTP(t *testing.T) {
	for base, want := range map[string]bool{
		"http://api.example":       true,
		"http://127.0.0.1:8080/v1": true,
		"https://api.example":      false,
		"http://bücher.example/v1": false,
	} {
		p, err := New(Config{BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.direct != nil; got != want {
			t.Errorf("%s: direct %v, want %v", base, got, want)
		}
		p.Close()
	}
	p, _ := New(Config{BaseURL: "http://api.example", Timeout: -1})
	defer p.Close()
	w := httptest.NewRecorder()
	for _, c := range []struct {
		req  *http.Request
		want bool
	}{
		{httptest.NewRequestWithContext(t.Context(), "GET", "/x", nil), true},
		{httptest.NewRequestWithContext(t.Context(), "POST", "/x", bytes.NewReader([]byte("{}"))), false},
		{httptest.NewRequestWithContext(t.Context(), "POST", "/x", io.MultiReader(strings.NewReader("{}"))), false},
		{func() *http.Request {
			r := httptest.NewRequestWithContext(t.Context(), "GET", "/x", nil)
			r.Header.Set("Connection", "Upgrade")
			r.Header.Set("Upgrade", "websocket")
			return r
		}(), false},
	} {
		if got := p.useDirect(w, c.req); got != c.want {
			t.Errorf("%s %s %v: direct %v, want %v", c.req.Method, c.req.URL, c.req.Header, got, c.want)
		}
	}
}

// TestWriteRequestMatchesWrite compares writeRequest with
// http.Request.Write on requests without a body of many shapes: verbs,
// hosts (with a port, IPv6, a zone, not ASCII, invalid), escaped and
// unescaped paths, queries, control characters, User-Agent present,
// empty or absent, invalid header names, values with line breaks and
// spaces, excluded names in the map, more names than the stack buffer.
func TestWriteRequestMatchesWrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "", "PROPFIND", "CONNECT"}
	hosts := []string{"", "api.example", "api.example:8080", "[::1]:80", "[fe80::1%25en0]:80", "bücher.example", "bad host", "a/b", "127.0.0.1:9"}
	paths := []struct{ path, raw string }{
		{"", ""}, {"/", ""}, {"/a b", ""}, {"/a/b", "/a%2Fb"}, {"/a/b", "/a/b"}, {"/ctl\x01", ""}, {"/ü", ""}, {"/x", "/y"},
	}
	queries := []string{"", "a=1&b=%20", "x=\x7f", "k"}
	names := []string{"Accept", "X-Forwarded-For", "X-Request-Id", "User-Agent", "Host", "Content-Length", "Transfer-Encoding",
		"Trailer", "Bad Name", "X:Y", "Te", "Authorization", "lower-case", "X-Empty"}
	values := []string{"v", " spaced ", "a\r\nInjected: 1", "tab\there", "", "line\nbreak", "ü"}
	for i := range 5000 {
		p := paths[rng.IntN(len(paths))]
		req := &http.Request{
			Method: pick(methods),
			URL:    &url.URL{Scheme: "http", Host: pick(hosts), Path: p.path, RawPath: p.raw, RawQuery: pick(queries), ForceQuery: rng.IntN(8) == 0},
			Host:   pick(hosts),
			Header: http.Header{},
			Proto:  "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		}
		n := rng.IntN(6)
		if rng.IntN(20) == 0 {
			n = 40
		}
		for j := range n {
			name := pick(names)
			if n > 10 {
				name = fmt.Sprintf("X-Many-%02d", j)
			}
			for range 1 + rng.IntN(2) {
				req.Header[name] = append(req.Header[name], pick(values))
			}
		}
		if rng.IntN(10) == 0 {
			req.Header["User-Agent"] = []string{}
		}
		var want, got bytes.Buffer
		wantErr := req.Write(&want)
		bw := bufio.NewWriter(&got)
		gotErr := writeRequest(bw, req)
		_ = bw.Flush()
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) || want.String() != got.String() {
			t.Fatalf("#%d %s %+v host %q header %q:\nWrite        %q (%v)\nwriteRequest %q (%v)",
				i, req.Method, req.URL, req.Host, req.Header, want.String(), wantErr, got.String(), gotErr)
		}
	}
}
