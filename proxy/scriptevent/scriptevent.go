// Package scriptevent is what event scripts and scripted services share on
// the HTTP side: the event.request a request makes, the response an
// event.response writes, and the platform a script reaches (inner calls
// through the pipeline as the script requestor, depth-bounded). The
// handlers/script stage and the scripted-service backend both use it.
package scriptevent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// RequestEvent builds event.request of r (reading a JSON body, which
// stays readable). Its parameters and headers are [script.Lazy]: built
// from r when a script first reads them, so a caller that runs a script
// after changing r's URL or headers resolves the event first
// ([script.Resolve]).
func RequestEvent(r *http.Request, t *service.Target) (map[string]any, *apierr.Error) {
	var payload any
	if r.Body != nil && r.Body != http.NoBody && IsJSON(r.Header.Get("Content-Type")) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, apierr.As(err)
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		if len(bytes.TrimSpace(b)) > 0 {
			if err := json.Unmarshal(b, &payload); err != nil {
				return nil, apierr.InvalidJSON(err)
			}
		}
	}
	return map[string]any{
		"method":       r.Method,
		"parameters":   queryParams{r.URL},
		"headers":      headerMap{r.Header},
		"payload":      payload,
		"content_type": r.Header.Get("Content-Type"),
		"uri":          r.URL.Path,
		"service":      t.Service.Name,
		"resource":     t.Resource,
	}, nil
}

// queryParams is event.request.parameters of a URL, built on first read:
// a name given once is a string, one given more often an array.
type queryParams struct{ u *url.URL }

// Value builds the parameters.
func (q queryParams) Value() any {
	params := map[string]any{}
	for k, vs := range q.u.Query() {
		if len(vs) == 1 {
			params[k] = vs[0]
		} else {
			a := make([]any, len(vs))
			for i, v := range vs {
				a[i] = v
			}
			params[k] = a
		}
	}
	return params
}

// headerMap is event.request.headers, built on first read ([HeaderMap]).
type headerMap struct{ h http.Header }

// Value builds the headers.
func (h headerMap) Value() any { return HeaderMap(h.h) }

// IsJSON reports whether a Content-Type is JSON (or absent).
func IsJSON(ct string) bool {
	return ct == "" || strings.Contains(strings.ToLower(ct), "json")
}

// HeaderMap gives headers as lower-case names to their (first) value;
// credentials are left out.
func HeaderMap(h http.Header) map[string]any {
	m := make(map[string]any, len(h))
	for k, vs := range h {
		lk := strings.ToLower(k)
		if lk == "authorization" || lk == "cookie" || lk == "x-dreamfactory-api-key" || lk == "x-dreamfactory-session-token" {
			continue
		}
		if len(vs) > 0 {
			m[lk] = vs[0]
		}
	}
	return m
}

// Scalar is v as a query or header value.
func Scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return strings.Trim(string(b), `"`)
	}
}

// WriteResponse writes event.response: status_code (default 200), headers
// and content as JSON (a string content with a non-JSON content_type is
// written as is).
func WriteResponse(w http.ResponseWriter, resp map[string]any, base http.Header) {
	status := http.StatusOK
	switch n := resp["status_code"].(type) {
	case int64:
		status = int(n)
	case float64:
		status = int(n)
	case int:
		status = n
	}
	if status < 100 || status > 599 {
		status = http.StatusOK
	}
	h := w.Header()
	if base != nil {
		CopyHeader(h, base)
	}
	h.Del("Content-Length")
	if hm, ok := resp["headers"].(map[string]any); ok {
		for k, v := range hm {
			if strings.EqualFold(k, "content-length") {
				continue
			}
			h.Set(k, Scalar(v))
		}
	}
	ct, _ := resp["content_type"].(string)
	if s, ok := resp["content"].(string); ok && ct != "" && !IsJSON(ct) {
		h.Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, s)
		return
	}
	b, err := json.Marshal(resp["content"])
	if err != nil {
		apierr.Write(w, apierr.InternalMsg("Script error: response content: %v", err))
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// CopyHeader copies src into dst.
func CopyHeader(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
}

type depthKey struct{}

// Depth returns how many platform.api calls enclose ctx.
func Depth(ctx context.Context) int {
	d, _ := ctx.Value(depthKey{}).(int)
	return d
}

// Platform is a script's view of the platform for one request: inner
// calls through the /api/v2 pipeline as the caller with the script
// requestor bit (exempt from limits, under RBAC's script bit), nested at
// most MaxDepth deep across every kind of script (event scripts and
// scripted services share the count).
type Platform struct {
	// Handler returns the /api/v2 pipeline; nil leaves platform.api
	// failing with an error.
	Handler func() http.Handler
	// MaxDepth bounds nested calls; zero means DefaultMaxDepth.
	MaxDepth int
	// ID is the caller; nil calls as an anonymous script.
	ID *caller.Identity
	// Snapshot returns the configuration in force, whose lookups a script
	// sees (platform.session.lookup and lookup_secret) and has substituted
	// into its content; nil means no lookups.
	Snapshot func() *store.Snapshot
}

// HasLookups reports whether src holds lookup tokens ({name}); it is the
// script engine's Options.HasLookups.
func HasLookups(src string) bool { return len(caller.FindLookups(src)) > 0 }

// ids are the app, role and user a caller's lookups are merged for.
func (p *Platform) ids() (app, role, user int64) {
	if p.ID == nil {
		return 0, 0, 0
	}
	return p.ID.AppID, p.ID.RoleID, p.ID.UserID
}

// Substitute replaces in src every lookup that applies to the caller, as
// DreamFactory does before running a script: the named lookups (global,
// then the app's, the role's and the user's; private ones included) and
// the identity's built-ins ({user.id}, {role.name}, {app.id}, …; see
// policy.IdentityLookups). A token without a value stays as it is.
func (p *Platform) Substitute(src string) (string, bool) {
	var named map[string]string
	if p.Snapshot != nil {
		app, role, user := p.ids()
		named = p.Snapshot().LookupsFor(app, role, user, true)
	}
	return caller.ExpandLookups(src, policy.IdentityLookups(p.ID, named))
}

// DefaultMaxDepth bounds nested platform.api calls when
// Platform.MaxDepth is zero.
const DefaultMaxDepth = 5

// API makes an inner call as the caller with the script requestor bit.
func (p *Platform) API(ctx context.Context, method, path string, payload any) (int, any, error) {
	if p.Handler == nil {
		return 0, nil, errors.New("platform.api is not available")
	}
	max := p.MaxDepth
	if max <= 0 {
		max = DefaultMaxDepth
	}
	d := Depth(ctx) + 1
	if d > max {
		return 0, nil, fmt.Errorf("script calls nested more than %d deep (does a script call its own event?)", max)
	}
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		return 0, nil, errors.New("external calls are not allowed from scripts")
	}
	path = strings.TrimPrefix(strings.TrimLeft(path, "/"), "api/v2/")
	var body []byte
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return 0, nil, fmt.Errorf("payload: %w", err)
		}
		body = b
	}
	id := &caller.Identity{Requestor: caller.Script}
	if p.ID != nil {
		c := *p.ID
		c.Requestor = caller.Script
		id = &c
	}
	rep, err := service.Call(context.WithValue(ctx, depthKey{}, d), p.Handler(), id,
		service.InnerCall{Method: method, Path: path, Body: body})
	if err != nil {
		return 0, nil, err
	}
	var content any
	if len(bytes.TrimSpace(rep.Body)) > 0 {
		if err := json.Unmarshal(rep.Body, &content); err != nil {
			content = string(rep.Body)
		}
	}
	return rep.Status, content, nil
}

// Session is platform.session: the caller's user, app and role, and, as
// in DreamFactory, lookup (the named lookups that apply to the caller and
// are not private) and lookup_secret (the private ones).
func (p *Platform) Session() map[string]any {
	s := map[string]any{}
	if p.ID != nil {
		s["user"] = map[string]any{"id": p.ID.UserID, "email": p.ID.UserEmail, "name": p.ID.UserName, "is_sys_admin": p.ID.Admin}
		s["app"] = map[string]any{"id": p.ID.AppID, "name": p.ID.AppName}
		s["role"] = map[string]any{"id": p.ID.RoleID, "name": p.ID.RoleName}
	}
	public, secret := map[string]any{}, map[string]any{}
	if p.Snapshot != nil {
		app, role, user := p.ids()
		snap := p.Snapshot()
		open := snap.LookupsFor(app, role, user, false)
		for k, v := range snap.LookupsFor(app, role, user, true) {
			if _, ok := open[k]; ok {
				public[k] = v
			} else {
				secret[k] = v
			}
		}
	}
	s["lookup"], s["lookup_secret"] = public, secret
	return s
}

// RunError turns a script engine's error into the envelope: an abort
// keeps its status and message, an engine that cannot run here is a 503,
// anything else a 500 "Script error: …".
func RunError(err error) error {
	var a *script.Abort
	if errors.As(err, &a) {
		return &apierr.Error{Status: a.Status, Message: a.Message}
	}
	if errors.Is(err, script.ErrUnavailable) {
		return apierr.Unavailable("%v", err).WithCause(err)
	}
	var f *script.Failure
	if errors.As(err, &f) {
		return apierr.InternalMsg("%s", f.Error()).WithCause(err)
	}
	return apierr.InternalMsg("Script error: %v", err).WithCause(err)
}
