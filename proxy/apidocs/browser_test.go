package apidocs_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// TestDocsPageCallsTheAPIInChromium opens the API docs page in headless
// Chromium with an app's API key, lets Swagger UI run "Try it out" on a
// table the app's role reaches, and checks that the call returned its
// records. It needs Debian's chromium (or PORTCULLIS_CHROMIUM naming a
// Chrome binary); without one it skips, except in CI (CI=true), where
// .ci/run installs it. PORTCULLIS_DOCS_SCREENSHOT=path saves a screenshot.
func TestDocsPageCallsTheAPIInChromium(t *testing.T) {
	bin := os.Getenv("PORTCULLIS_CHROMIUM")
	if bin == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				bin = p
				break
			}
		}
	}
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed; .ci/run installs it (apt-get install chromium)")
		}
		t.Skip("SKIP: chromium is not installed (apt-get install chromium, or set PORTCULLIS_CHROMIUM); the API docs page is not tested in a browser")
	}

	in := dbInstance(t, dbtest.Fresh(t, dialects.SQLite))
	admin := in.Admin(t)
	key := appWithRole(t, admin, "docs reader", []map[string]any{
		{"service_id": serviceID(t, admin, "api_docs"), "component": "*", "verb_mask": 1},
		{"service_id": serviceID(t, admin, "shop"), "component": "_table/customer", "verb_mask": 1},
	})

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	page := startChromium(ctx, t, bin)

	target := in.URL + "/api/docs/#" + url.Values{"key": {key}, "service": {"shop"}}.Encode()
	page.call(t, "Page.enable", nil)
	page.call(t, "Runtime.enable", nil)
	page.call(t, "Network.enable", nil)
	page.call(t, "Log.enable", nil)
	page.call(t, "Page.navigate", map[string]any{"url": target})

	state := page.waitFor(t, ctx, `(() => { const s = document.getElementById("pc-status"); return s && s.dataset.state !== "loading" && s.dataset.state !== "idle" ? s.dataset.state + ": " + s.textContent : ""; })()`)
	if !strings.HasPrefix(state, "ready") {
		t.Fatalf("page status = %q", state)
	}
	if got := page.eval(t, `location.hash`); got != "" {
		t.Errorf("the key stayed in the address: hash = %q", got)
	}
	// Only what the role reaches is shown.
	shown := page.waitFor(t, ctx, `Array.from(document.querySelectorAll(".opblock-summary-path")).map(e => e.innerText.replace(/\u200b/g, "")).join(" ")`)
	if !strings.Contains(shown, "/_table/customer") || strings.Contains(shown, "/_table/orders") {
		t.Errorf("operations shown = %q", shown)
	}
	options := page.eval(t, `Array.from(document.querySelectorAll("#pc-service option")).map(o => o.value).join(",")`)
	if options != ",api_docs,shop" {
		t.Errorf("service choices = %q", options)
	}

	// Swagger UI has finished loading once the page's onComplete has
	// authorized the key.
	page.waitFor(t, ctx, `window.portcullisUI && window.portcullisUI.authSelectors.authorized().size > 0 ? "yes" : ""`)

	// Open GET /_table/customer and execute it (Try it out is on). A
	// click that lands while Swagger UI is still settling the operation
	// is lost (or fails with "operation not found"), so while no response
	// shows, the operation is closed and opened again, which renders it
	// afresh, and Execute is clicked again.
	result := page.waitFor(t, ctx, `(() => {
		const op = document.querySelector("#operations-customer-get_customerRecords");
		const r = op.querySelector(".live-responses-table .response");
		if (r) return r.innerText;
		const now = Date.now();
		const exec = op.querySelector("button.execute");
		const control = op.querySelector(".opblock-summary-control");
		if (!exec) {
			if (!(window.opened > now - 1000)) { window.opened = now; control.click(); }
			return "";
		}
		if (!window.clicked) { window.clicked = now; exec.click(); return ""; }
		if (window.clicked < now - 4000) { window.clicked = 0; window.opened = now; control.click(); }
		return "";
	})()`)
	if !strings.Contains(result, "200") || !strings.Contains(result, "Alice") || !strings.Contains(result, "bob@example.com") {
		t.Errorf("the call from the page did not return the records:\n%s", result)
	}
	page.mu.Lock()
	for _, e := range page.events {
		if strings.Contains(e, "OperationNotFoundError") {
			t.Logf("Swagger UI lost a click and it was retried: %.200s", e)
		}
	}
	page.mu.Unlock()
	curl := page.eval(t, `(() => { const c = document.querySelector("#operations-customer-get_customerRecords .curl-command"); return c ? c.innerText : ""; })()`)
	if !strings.Contains(curl, "X-Platform-API-Key") {
		t.Errorf("the request did not carry the API key header:\n%s", curl)
	}

	shot := page.screenshot(t)
	if len(shot) < 10000 || string(shot[1:4]) != "PNG" {
		t.Errorf("screenshot is not a PNG (%d bytes)", len(shot))
	}
	if out := os.Getenv("PORTCULLIS_DOCS_SCREENSHOT"); out != "" {
		if err := os.WriteFile(out, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s", out)
	}
}

// cdp is a Chrome DevTools Protocol connection to one page.
type cdp struct {
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int
	pending map[int]chan cdpReply
	// events keeps the page's console messages, exceptions and failed
	// requests, shown when the test fails.
	events []string
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// removeProfile removes a browser profile folder, trying again for a few
// seconds while the browser's helper processes finish writing into it.
func removeProfile(t *testing.T, dir string) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err = os.RemoveAll(dir); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Errorf("remove the browser profile: %v", err)
	}
}

// startChromium starts a headless Chromium with a fresh profile and
// returns a connection to its page.
func startChromium(ctx context.Context, t *testing.T, bin string) *cdp {
	t.Helper()
	// The profile is removed by hand once the browser is gone. Killing only
	// the main process left its helpers (the network service among them)
	// writing into it, and t.TempDir's cleanup failed with "directory not
	// empty": the browser runs in a process group of its own, killed whole.
	profile, err := os.MkdirTemp("", "apidocs-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeProfile(t, profile) }) // runs after the browser's, below
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1400,1200",
		"--user-data-dir="+profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--remote-allow-origins=*", "about:blank")
	inOwnGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		killGroup(cmd)
		_ = cmd.Wait()
	})
	listening := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	var browserWS string
	select {
	case browserWS = <-found:
	case <-ctx.Done():
		t.Fatal("chromium did not start its DevTools endpoint")
	}
	u, err := url.Parse(browserWS)
	if err != nil {
		t.Fatal(err)
	}
	// The page target Chromium opened for about:blank.
	var targets []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	resp, err := http.Get("http://" + u.Host + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&targets)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	pageWS := ""
	for _, tg := range targets {
		if tg.Type == "page" {
			pageWS = tg.WS
			break
		}
	}
	if pageWS == "" {
		t.Fatalf("no page target: %+v", targets)
	}
	ws, err := websocket.Dial(pageWS, "", "http://127.0.0.1/")
	if err != nil {
		t.Fatalf("devtools: %v", err)
	}
	ws.MaxPayloadBytes = 64 << 20
	t.Cleanup(func() { ws.Close() })
	c := &cdp{ws: ws, pending: map[int]chan cdpReply{}}
	go c.read()
	return c
}

func (c *cdp) read() {
	for {
		var msg struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			cdpReply
		}
		if err := websocket.JSON.Receive(c.ws, &msg); err != nil {
			c.mu.Lock()
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		if msg.ID == 0 {
			switch msg.Method {
			case "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Network.loadingFailed", "Network.requestWillBeSent", "Network.responseReceived", "Log.entryAdded":
				c.mu.Lock()
				c.events = append(c.events, msg.Method+" "+string(msg.Params[:min(len(msg.Params), 400)]))
				c.mu.Unlock()
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[msg.ID]
		delete(c.pending, msg.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- msg.cdpReply
		}
	}
}

// call sends one command and waits for its answer.
func (c *cdp) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan cdpReply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if params == nil {
		params = map[string]any{}
	}
	if err := websocket.JSON.Send(c.ws, map[string]any{"id": id, "method": method, "params": params}); err != nil {
		t.Fatalf("devtools %s: %v", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			t.Fatalf("devtools %s: connection closed", method)
		}
		if r.Error != nil {
			t.Fatalf("devtools %s: %s", method, r.Error.Message)
		}
		return r.Result
	case <-time.After(30 * time.Second):
		t.Fatalf("devtools %s: no answer", method)
	}
	return nil
}

// eval evaluates a JavaScript expression in the page and returns its
// value as text.
func (c *cdp) eval(t *testing.T, expr string) string {
	t.Helper()
	raw := c.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Exception != nil {
		t.Fatalf("page script %s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	switch v := r.Result.Value.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// waitFor evaluates expr until it gives a non-empty string (the page
// renders asynchronously), for 30 seconds at most; then it fails the
// test with what the page shows.
func (c *cdp) waitFor(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		if v := c.eval(t, expr); v != "" {
			return v
		}
		select {
		case <-ctx.Done():
			t.Fatalf("page never satisfied %s: %v", expr, ctx.Err())
		case <-deadline:
			diag := c.eval(t, `(() => { try { const u = window.portcullisUI; return "resolved=" + JSON.stringify(!!u.specSelectors.specResolvedSubtree(["paths","/_table/customer","get"])) + " errors=" + JSON.stringify(u.errSelectors.allErrors().toJS()) + " paths=" + JSON.stringify(Object.keys(u.specSelectors.specJson().toJS().paths||{})); } catch (e) { return "diag failed: " + e; } })()`)
			t.Logf("swagger ui: %s", diag)
			shown := c.eval(t, `document.body.innerText`)
			_ = os.WriteFile(filepath.Join(os.TempDir(), "apidocs-page.txt"), []byte(shown), 0o644)
			shown = shown[:min(len(shown), 3000)]
			if out := os.Getenv("PORTCULLIS_DOCS_SCREENSHOT"); out != "" {
				_ = os.WriteFile(out, c.screenshot(t), 0o644)
			}
			c.mu.Lock()
			events := strings.Join(c.events, "\n")
			c.mu.Unlock()
			t.Fatalf("page never satisfied %s within 30s; it shows:\n%s\nevents:\n%s", expr, shown, events)
		case <-tick.C:
		}
	}
}

// screenshot captures the page down to the end of the executed call's
// response (at most 3000 CSS pixels).
func (c *cdp) screenshot(t *testing.T) []byte {
	t.Helper()
	h := 1200.0
	if v := c.eval(t, `(() => { const r = document.querySelector(".live-responses-table"); return r ? String(Math.ceil(r.getBoundingClientRect().bottom + window.scrollY + 24)) : ""; })()`); v != "" {
		fmt.Sscan(v, &h)
	}
	h = min(max(h, 800), 3000)
	raw := c.call(t, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": 1400, "height": h, "scale": 1}})
	var r struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	return png
}
