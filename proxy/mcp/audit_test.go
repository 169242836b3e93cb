package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAuditRingAndSince(t *testing.T) {
	a := NewAudit(AuditOptions{Keep: 3})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		a.Record(Event{Time: t0.Add(time.Duration(i) * time.Second), Tool: string(rune('a' + i))})
	}
	tools := func(es []Event) string {
		var s string
		for _, e := range es {
			s += e.Tool
		}
		return s
	}
	for _, c := range []struct {
		since time.Time
		want  string
	}{
		{time.Time{}, "cde"},
		{t0, "cde"},
		{t0.Add(2 * time.Second), "de"},
		{t0.Add(4 * time.Second), ""},
	} {
		if got := tools(a.Since(c.since)); got != c.want {
			t.Errorf("Since(%v) = %q, want %q", c.since, got, c.want)
		}
	}
}

// TestSlowFollowerNeverBlocks records far more events than a follower's
// queue holds while nobody reads it: Record returns at once and the misses
// are counted.
func TestSlowFollowerNeverBlocks(t *testing.T) {
	drops := 0
	a := NewAudit(AuditOptions{FollowerBuffer: 4, Dropped: func() { drops++ }})
	f, _ := a.follow(time.Time{})
	defer a.unfollow(f)
	done := make(chan struct{})
	go func() {
		for range 100 {
			a.Record(Event{Tool: "x"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Record blocked on a slow follower")
	}
	if len(f.ch) != 4 || a.Dropped() != 96 || drops != 96 || f.missed.Load() != 96 {
		t.Errorf("queued %d, dropped %d (%d counted)", len(f.ch), a.Dropped(), drops)
	}
}

func TestAuditStream(t *testing.T) {
	a := NewAudit(AuditOptions{})
	old := time.Now().Add(-time.Minute)
	a.Record(Event{Time: old, Tool: "old"})
	srv := httptest.NewServer(a)
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"?since="+old.Add(-time.Second).UTC().Format(time.RFC3339Nano), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	next := func() Event {
		t.Helper()
		if !sc.Scan() {
			t.Fatalf("stream ended: %v", sc.Err())
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Bytes(), err)
		}
		return e
	}
	if e := next(); e.Tool != "old" {
		t.Errorf("replayed %+v", e)
	}
	// A live event arrives while the stream stays open.
	a.Record(Event{Time: time.Now(), Tool: "live"})
	if e := next(); e.Tool != "live" {
		t.Errorf("live %+v", e)
	}
	for _, c := range []struct {
		method, query string
		status        int
	}{
		{"POST", "", 405}, {"GET", "?since=soon", 400},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.query, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s = %d, want %d", c.method, c.query, resp.StatusCode, c.status)
		}
	}
}

func TestParseSince(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"", time.Time{}, true},
		{"2026-01-02T03:04:05Z", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), true},
		{"1767225600", time.Unix(1767225600, 0), true},
		{"1767225600123", time.UnixMilli(1767225600123), true},
		{"yesterday", time.Time{}, false},
		{"-5", time.Time{}, false},
	} {
		got, err := ParseSince(c.in)
		if (err == nil) != c.ok || !got.Equal(c.want) {
			t.Errorf("ParseSince(%q) = %v, %v", c.in, got, err)
		}
	}
}

func TestRedact(t *testing.T) {
	in := map[string]any{
		"table":   "user",
		"records": []any{map[string]any{"name": "a", "password": "p", "API_Key": "k", "nested": map[string]any{"session_token": "t"}}},
		"filter":  "(email = 'a@b') and (password = 'hunter2')",
		"params":  []any{map[string]any{"name": "secret_code", "value": 42}, map[string]any{"name": "id", "value": 1}},
	}
	want := map[string]any{
		"table":   "user",
		"records": []any{map[string]any{"name": "a", "password": Redacted, "API_Key": Redacted, "nested": map[string]any{"session_token": Redacted}}},
		"filter":  "(email = '" + Redacted + "') and (password = '" + Redacted + "')",
		"params":  []any{map[string]any{"name": "secret_code", "value": Redacted}, map[string]any{"name": "id", "value": 1}},
	}
	if d := cmp.Diff(want, Redact(in)); d != "" {
		t.Errorf("Redact (-want +got):\n%s", d)
	}
	if f := Redact(map[string]any{"filter": "name = 'x'"}).(map[string]any)["filter"]; f != "name = 'x'" {
		t.Errorf("a filter without secrets changed: %v", f)
	}
}

func TestParseConfig(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string
		err      string
	}{
		{"list", `{"services":["db","crm"]}`, []string{"db", "crm"}, ""},
		{"comma text", `{"services":"db, crm"}`, []string{"db", "crm"}, ""},
		{"empty object", `{}`, nil, "either 'url'"},
		{"null", `null`, nil, "either 'url'"},
		{"not an object", `[1]`, nil, "JSON object"},
		{"both", `{"url":"http://x","services":["db"]}`, nil, "not both"},
		{"empty list", `{"services":[]}`, nil, "at least one"},
		{"every problem", `{"services":["", "a b", "db", "db"]}`, nil, "[0] is empty"},
		{"wrong type", `{"services":5}`, nil, "list of service names"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig(json.RawMessage(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				if c.name == "every problem" && (!strings.Contains(err.Error(), "not a service name") || !strings.Contains(err.Error(), "twice")) {
					t.Errorf("not every problem reported: %v", err)
				}
				return
			}
			if err != nil || cmp.Diff(c.want, cfg.Services) != "" {
				t.Errorf("got %v, %v", cfg.Services, err)
			}
		})
	}
}
