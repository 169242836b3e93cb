package proxy

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/mcp"
)

// AuditStreamPath is where administrators follow the MCP tool calls
// (newline-delimited JSON; ?since= replays what is still held).
const AuditStreamPath = "/_internal/ai/audit-stream"

// Messages of the audit stream's administrators-only check.
const (
	msgAuditSignIn = "The audit stream is for administrators: sign in with POST /api/v2/system/admin/session and send the session token."
	msgAuditAdmin  = "The audit stream is for administrators only."
)

// newAudit returns the server's log of MCP tool calls, counting the events
// slow followers miss in portcullis_mcp_audit_dropped_total.
func newAudit(reg prometheus.Registerer) *mcp.Audit {
	dropped := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "portcullis_mcp_audit_dropped_total",
		Help: "MCP audit events a slow audit-stream follower missed (its queue was full).",
	})
	reg.MustRegister(dropped)
	return mcp.NewAudit(mcp.AuditOptions{Dropped: dropped.Inc})
}

// auditRefusals wraps the API key and session stages so that a tool call
// to an mcp service that is answered before its backend (by them or by
// any later stage: roles, limits, scripts) reaches the audit stream as a
// forwarded one does: mcp.Audit.Gate before the API key stage, the caller
// noted after each of the two (mcp.SeeCaller).
func auditRefusals(a *mcp.Audit, keys, sessions handlers.Stage) (handlers.Stage, handlers.Stage) {
	return func(next http.Handler) http.Handler { return a.Gate(keys(mcp.SeeCaller(next))) },
		func(next http.Handler) http.Handler { return sessions(mcp.SeeCaller(next)) }
}

// Audit returns the log of MCP tool calls.
func (s *Server) Audit() *mcp.Audit { return s.audit }

// adminOnly lets through only a signed-in system administrator, after the
// API key and session stages: 401 without a session, 403 for anyone else.
func adminOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := caller.IdentityFrom(r.Context())
		switch {
		case id == nil || !id.Authenticated():
			apierr.Write(w, apierr.Unauthorized(msgAuditSignIn))
		case !id.Admin:
			apierr.Write(w, apierr.Forbidden(msgAuditAdmin))
		default:
			next.ServeHTTP(w, r)
		}
	})
}
