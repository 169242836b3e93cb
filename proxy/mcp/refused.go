package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Calls refused before the backend.
//
// A tool call the pipeline answers before it reaches an mcp service's
// backend (no API key or session: 401, a role without access: 403, a
// limit: 429, a script that aborts or answers) is recorded all the same,
// as the request log records it: [Audit.Gate] reads the JSON-RPC
// tools/call requests of a POST to an mcp service before the stages that
// may refuse it, [SeeCaller] notes the caller as each stage identifies it,
// and when the backend was not reached each call is recorded with the
// status the client got and the caller as far as it was known. Service
// is "" and records 0: no data service was acted on.

// gateKey is the context key of a gated request's state.
type gateKey struct{}

// gate is the state of a POST to an mcp service under Audit.Gate.
type gate struct {
	id      *caller.Identity // the caller as the last stage saw it
	reached bool             // the backend got the request
}

// Gate returns next (the stages that may refuse a request, then the
// backend) with the tool calls of refused POSTs to mcp services recorded
// in a (see "Calls refused before the backend"). Other requests pass
// untouched. A nil Audit records nothing.
func (a *Audit) Gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a == nil || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		t := service.TargetFrom(r.Context())
		if t == nil || t.Service == nil || t.Service.Type != TypeName {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		calls := readToolCalls(r, t.Service.Name, start)
		if len(calls) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		g := &gate{id: caller.IdentityFrom(r.Context())}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), gateKey{}, g)))
		if g.reached {
			return
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		d := float64(time.Since(start).Microseconds()) / 1000
		for _, ev := range calls {
			ev.Status, ev.DurationMS = status, d
			ev.setCaller(g.id)
			a.Record(ev)
		}
	})
}

// SeeCaller returns next noting, for Audit.Gate, the caller as the stage
// before it identified it: put it after each stage that changes the
// caller (API key, session).
func SeeCaller(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if g, ok := r.Context().Value(gateKey{}).(*gate); ok {
				g.id = caller.IdentityFrom(r.Context())
			}
		}
		next.ServeHTTP(w, r)
	})
}

// reached tells Audit.Gate that the backend got the request: it records
// the calls itself.
func reached(ctx context.Context) {
	if g, ok := ctx.Value(gateKey{}).(*gate); ok {
		g.reached = true
	}
}

// readToolCalls returns an event, without status, caller or duration,
// per tools/call request in r's body (see peekBody).
func readToolCalls(r *http.Request, mcpService string, start time.Time) []Event {
	var out []Event
	for _, m := range parseMessages(peekBody(r)) {
		if m.Method == "tools/call" && len(m.ID) > 0 {
			out = append(out, callEvent(m, mcpService, start))
		}
	}
	return out
}

// peekBody returns r's body (the pipeline bounds its size), replacing
// r.Body by an equivalent reader; nil when there is none or it is larger
// than maxAuditBody.
func peekBody(r *http.Request) []byte {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAuditBody+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || len(body) > maxAuditBody {
		return nil
	}
	return body
}

// callEvent is the event of the tools/call request m, without status,
// caller or duration.
func callEvent(m rpcMessage, mcpService string, start time.Time) Event {
	var p struct {
		Name      string `json:"name"`
		Arguments any    `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &p)
	ev := Event{Time: start, MCPService: mcpService, Tool: p.Name, Arguments: Redact(p.Arguments)}
	if ev.Arguments == nil {
		ev.Arguments = map[string]any{}
	}
	return ev
}

// setCaller fills in the app and user of id (nil: none).
func (e *Event) setCaller(id *caller.Identity) {
	if id == nil {
		return
	}
	e.App = id.AppName
	if id.UserEmail != "" {
		email := id.UserEmail
		e.User = &email
	}
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer below.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a flush on, for streamed answers.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
