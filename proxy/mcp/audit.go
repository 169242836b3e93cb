package mcp

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// Defaults of an Audit log.
const (
	// DefaultAuditKeep is how many events an Audit log holds for replay.
	DefaultAuditKeep = 1000
	// DefaultAuditFollowerBuffer is how many events may wait for one slow
	// follower before further events are dropped for it.
	DefaultAuditFollowerBuffer = 256
)

// Redacted replaces the value of an argument that may hold a secret.
const Redacted = "***REDACTED***"

// Event is one MCP tool call, as the audit stream sends it (one JSON object
// per line).
type Event struct {
	// Time is when the call started.
	Time time.Time `json:"time"`
	// MCPService is the name of the mcp service that was called.
	MCPService string `json:"mcp_service"`
	// Service is the data service the tool acted on ("" when none).
	Service string `json:"service"`
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Arguments are the call's arguments with secrets redacted.
	Arguments any `json:"arguments"`
	// App is the name of the app whose API key was used.
	App string `json:"app"`
	// User is the signed-in user's e-mail, nil without a session.
	User *string `json:"user"`
	// Status is the HTTP status the same REST call had.
	Status int `json:"status"`
	// DurationMS is how long the call took, in milliseconds.
	DurationMS float64 `json:"duration_ms"`
	// Records is the number of rows returned or written.
	Records int `json:"records"`
}

// AuditOptions configures an Audit log.
type AuditOptions struct {
	// Keep is how many recent events are held for ?since= replay; zero
	// means DefaultAuditKeep.
	Keep int
	// FollowerBuffer is how many events may queue for one follower; zero
	// means DefaultAuditFollowerBuffer.
	FollowerBuffer int
	// Dropped, when set, is called once per event a slow follower missed
	// (the proxy counts them in a Prometheus counter).
	Dropped func()
}

// Audit is the audit log of MCP tool calls: it holds the last events in a
// bounded ring for replay and hands each new event to every follower
// without ever waiting for one (a follower whose queue is full misses the
// event, and the miss is counted). It is safe for concurrent use; the zero
// value is not, use NewAudit.
type Audit struct {
	opts AuditOptions

	mu        sync.Mutex
	ring      []Event
	next      int // index of the next write in ring
	full      bool
	followers map[*follower]struct{}
	dropped   atomic.Int64
}

type follower struct {
	ch chan []byte
	// missed counts events dropped for this follower.
	missed atomic.Int64
}

// NewAudit returns an empty Audit log.
func NewAudit(opts AuditOptions) *Audit {
	if opts.Keep <= 0 {
		opts.Keep = DefaultAuditKeep
	}
	if opts.FollowerBuffer <= 0 {
		opts.FollowerBuffer = DefaultAuditFollowerBuffer
	}
	return &Audit{opts: opts, ring: make([]Event, opts.Keep), followers: map[*follower]struct{}{}}
}

// Record adds an event: it is kept for replay and queued for every
// follower. It never blocks on a follower.
func (a *Audit) Record(e Event) {
	if a == nil {
		return
	}
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	line = append(line, '\n')
	a.mu.Lock()
	a.ring[a.next] = e
	a.next = (a.next + 1) % len(a.ring)
	if a.next == 0 {
		a.full = true
	}
	for f := range a.followers {
		select {
		case f.ch <- line:
		default:
			f.missed.Add(1)
			a.dropped.Add(1)
			if a.opts.Dropped != nil {
				a.opts.Dropped()
			}
		}
	}
	a.mu.Unlock()
}

// Dropped returns how many events followers have missed so far.
func (a *Audit) Dropped() int64 { return a.dropped.Load() }

// Since returns the events still held whose time is after t, oldest first.
func (a *Audit) Since(t time.Time) []Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sinceLocked(t)
}

func (a *Audit) sinceLocked(t time.Time) []Event {
	var out []Event
	start, n := 0, a.next
	if a.full {
		start, n = a.next, len(a.ring)
	}
	for i := 0; i < n; i++ {
		e := a.ring[(start+i)%len(a.ring)]
		if e.Time.After(t) {
			out = append(out, e)
		}
	}
	return out
}

// follow registers a follower and returns it with the events after since
// (none when since is zero), atomically, so that no event falls between
// the replay and the live stream.
func (a *Audit) follow(since time.Time) (*follower, []Event) {
	f := &follower{ch: make(chan []byte, a.opts.FollowerBuffer)}
	a.mu.Lock()
	defer a.mu.Unlock()
	var replay []Event
	if !since.IsZero() {
		replay = a.sinceLocked(since)
	}
	a.followers[f] = struct{}{}
	return f, replay
}

func (a *Audit) unfollow(f *follower) {
	a.mu.Lock()
	delete(a.followers, f)
	a.mu.Unlock()
}

// Followers returns how many streams are following the log.
func (a *Audit) Followers() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.followers)
}

// ParseSince reads the since parameter of the audit stream: an RFC 3339
// time, or a Unix time in seconds (or milliseconds, when it has 13 digits
// or more). The empty string is the zero time (no replay).
func ParseSince(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, errors.New("since must be an RFC 3339 time or a Unix time in seconds or milliseconds")
	}
	if len(s) >= 13 {
		return time.UnixMilli(n), nil
	}
	return time.Unix(n, 0), nil
}

// ServeHTTP streams the log as newline-delimited JSON: with ?since= first
// the events still held that happened after that time, then every new
// event as it is recorded, until the client goes away. It does not check
// who is asking: mount it behind an administrators-only check (the proxy
// does so at GET /_internal/ai/audit-stream).
func (a *Audit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		apierr.Write(w, apierr.MethodNotAllowed(r.Method))
		return
	}
	since, err := ParseSince(r.URL.Query().Get("since"))
	if err != nil {
		apierr.Write(w, apierr.BadRequest("Invalid 'since': %v.", err))
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	// A stream outlives any write deadline the server sets.
	_ = rc.SetWriteDeadline(time.Time{})
	f, replay := a.follow(since)
	defer a.unfollow(f)
	w.WriteHeader(http.StatusOK)
	for _, e := range replay {
		line, err := json.Marshal(e)
		if err != nil {
			continue
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return
		}
	}
	if err := rc.Flush(); err != nil {
		return
	}
	ctx := r.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case line := <-f.ch:
			if _, err := w.Write(line); err != nil {
				return
			}
			// Write what is already queued before flushing once.
			for n := len(f.ch); n > 0; n-- {
				if _, err := w.Write(<-f.ch); err != nil {
					return
				}
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}

// redactKeys are the argument names whose values are never logged: parts
// of a name, compared case-insensitively.
var redactKeys = []string{"password", "passwd", "secret", "token", "api_key", "apikey", "authorization",
	"credential", "private_key", "session", "cookie"}

// secretKey reports whether an argument or record field name may hold a
// secret.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range redactKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// Redact returns v (decoded JSON) with the value of every object key that
// may hold a secret replaced by Redacted, at any depth; v is not changed.
func Redact(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		// A {"name": "password", "value": …} pair (procedure parameters).
		named, _ := t["name"].(string)
		for k, x := range t {
			switch {
			case secretKey(k), k == "value" && named != "" && secretKey(named):
				out[k] = Redacted
			case k == "filter":
				out[k] = redactFilter(x)
			default:
				out[k] = Redact(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = Redact(x)
		}
		return out
	}
	return v
}

// quoted matches a string literal of the filter language.
var quoted = regexp.MustCompile(`'(?:[^']|'')*'|"(?:[^"]|"")*"`)

// redactFilter hides the literals of a filter that names a field that may
// hold a secret ("password = 'x'").
func redactFilter(v any) any {
	s, ok := v.(string)
	if !ok {
		return Redact(v)
	}
	if !secretKey(s) {
		return s
	}
	return quoted.ReplaceAllString(s, "'"+Redacted+"'")
}
