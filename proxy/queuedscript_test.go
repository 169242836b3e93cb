package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestQueuedScripts: a queued script ({event}.queued) runs after the
// response, which never waits for it; a full queue drops the script and
// counts it in /metrics. The queued script calls a remote service whose
// upstream blocks until the test lets it go, so "does not delay" is a fact
// of ordering, not of timing.
func TestQueuedScripts(t *testing.T) {
	calls := make(chan string, 16)
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		calls <- r.URL.Path + " " + string(b)
		<-release
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer up.Close()
	var releaseOnce bool
	defer func() {
		if !releaseOnce {
			close(release)
		}
	}()

	in := proxytest.Start(t, dbtest.Fresh(t, dialects.SQLite), func(c *proxy.Config) {
		c.ScriptTimeout = 30 * time.Second
		c.ScriptQueueWorkers = 1
		c.ScriptQueueSize = 1
	})
	c := in.Admin(t)
	must := mustStatus(t)
	must(c.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "hook", "label": "Hook", "type": "rws", "is_active": true, "config": map[string]any{"base_url": up.URL}}}}), 201)
	must(c.Do(t, "POST", "/api/v2/db/_schema", map[string]any{"resource": []any{map[string]any{"name": "todo",
		"field": []any{map[string]any{"name": "id", "type": "id"}, map[string]any{"name": "title", "type": "string"}}}}}), 200)
	must(c.Do(t, "POST", "/api/v2/system/event_script/db._table.todo.post.queued", map[string]any{"type": "lua", "is_active": true,
		"content": `platform.api.post("hook/seen", {title = event.request.payload.resource[1].title, status = event.response.status_code})`}), 201)
	if err := in.Proxy.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	post := func(title string) {
		t.Helper()
		must(c.Do(t, "POST", "/api/v2/db/_table/todo", map[string]any{"resource": []any{map[string]any{"title": title}}}), 200)
	}

	// The answer comes while the queued script is still blocked upstream.
	post("first")
	select {
	case got := <-calls:
		if !strings.Contains(got, `"title":"first"`) || !strings.Contains(got, `"status":200`) {
			t.Errorf("the queued script sent %s", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the queued script did not run")
	}
	// One worker, busy; one place in the queue: the second waits, the third
	// is dropped — and both answers still come at once.
	post("second")
	post("third")
	metrics := must(c.Do(t, "GET", "/metrics", nil), 200)
	if !strings.Contains(string(metrics.Body), "portcullis_script_queue_dropped_total 1") {
		t.Errorf("metrics lack the dropped script:\n%s", grep(string(metrics.Body), "portcullis_script"))
	}
	close(release)
	releaseOnce = true
	select {
	case got := <-calls:
		if !strings.Contains(got, `"title":"second"`) {
			t.Errorf("the waiting script sent %s", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting queued script did not run")
	}
	select {
	case got := <-calls:
		t.Errorf("the dropped script ran: %s", got)
	case <-time.After(200 * time.Millisecond):
	}
}

// grep returns the lines of s containing sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
