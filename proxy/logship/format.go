package logship

import (
	"strconv"
	"strings"
	"time"

	"gopkg.in/Graylog2/go-gelf.v2/gelf"
)

// ContextKeys are the context keys DreamFactory offers; a connector's
// context may name any of them, or any dotted path below _event or
// _platform.
var ContextKeys = []string{
	"_event", "_event.request", "_event.request.content", "_event.request.content_type",
	"_event.request.headers", "_event.request.parameters", "_event.request.method",
	"_event.request.payload", "_event.request.uri", "_event.request.service",
	"_event.request.resource", "_event.resource", "_event.response",
	"_event.response.status", "_event.response.status_code", "_event.response.content",
	"_event.response.content_type", "_platform", "_platform.config", "_platform.session",
	"_platform.session.user", "_platform.session.app", "_platform.session.role",
	"_platform.session.api_key",
}

// DefaultContext is the context of a connector that names none: the whole
// request and response.
var DefaultContext = []string{"_event"}

// APIVersion is the API version shipped in _platform.config.
const APIVersion = "2.0"

// selection is a connector's context keys.
type selection []string

// want reports whether path, or something below or above it, is
// selected, so that the tree must hold it.
func (s selection) want(path string) bool {
	for _, k := range s {
		if k == path || strings.HasPrefix(path, k+".") || strings.HasPrefix(k, path+".") {
			return true
		}
	}
	return false
}

// tree builds the parts of the whole context document that the selection
// needs.
func (c *Connector) tree(ev *Event) map[string]any {
	sel := c.sel
	root := map[string]any{}
	if sel.want("_event") {
		svc, res := ev.target()
		event := map[string]any{}
		if sel.want("_event.request") {
			req := map[string]any{}
			put := func(k string, v func() any) {
				if sel.want("_event.request." + k) {
					req[k] = v()
				}
			}
			put("api_version", func() any { return APIVersion })
			put("method", func() any { return ev.Method })
			put("uri", func() any { return ev.Path })
			put("service", func() any { return svc })
			put("resource", func() any { return res })
			put("headers", func() any { return RedactHeader(ev.Header) })
			put("parameters", func() any { return RedactQuery(ev.Query) })
			put("content_type", func() any { return ev.Request.ContentType })
			if sel.want("_event.request.content") || sel.want("_event.request.payload") {
				v, cut := content(&ev.Request, c.cfg.ContentLimit)
				if sel.want("_event.request.content") {
					req["content"] = v
					if cut {
						req["content_truncated"] = true
						req["content_length"] = ev.Request.Size
					}
				}
				if _, obj := v.(map[string]any); obj && sel.want("_event.request.payload") && !sel.want("_event.request.content") {
					req["payload"] = v
				}
			}
			event["request"] = req
		}
		if sel.want("_event.resource") {
			event["resource"] = res
		}
		if sel.want("_event.response") && ev.Status != 0 {
			resp := map[string]any{}
			if sel.want("_event.response.status") {
				resp["status"] = ev.Status
			}
			if sel.want("_event.response.status_code") {
				resp["status_code"] = ev.Status
			}
			if sel.want("_event.response.content_type") {
				resp["content_type"] = ev.Response.ContentType
			}
			if sel.want("_event.response.content") {
				v, cut := content(&ev.Response, c.cfg.ContentLimit)
				resp["content"] = v
				if cut {
					resp["content_truncated"] = true
					resp["content_length"] = ev.Response.Size
				}
			}
			if sel.want("_event.response.duration_ms") {
				resp["duration_ms"] = float64(ev.Duration.Microseconds()) / 1000
			}
			event["response"] = resp
		}
		root["_event"] = event
	}
	if sel.want("_platform") {
		platform := map[string]any{}
		if sel.want("_platform.config") {
			platform["config"] = map[string]any{"version": c.cfg.Version, "api_version": APIVersion,
				"license": "OSS", "is_managed": false}
		}
		if sel.want("_platform.session") {
			platform["session"] = session(ev)
		}
		root["_platform"] = platform
	}
	return root
}

// session is the caller's session as DreamFactory ships it: without the
// session token, the API key, lookups or any other secret.
func session(ev *Event) map[string]any {
	id := ev.Identity
	s := map[string]any{"api_key": Redacted}
	if id == nil {
		return s
	}
	if id.AppID != 0 || id.AppName != "" {
		s["app"] = map[string]any{"id": id.AppID, "name": id.AppName}
	}
	if id.RoleID != 0 || id.RoleName != "" {
		s["role"] = map[string]any{"id": id.RoleID, "name": id.RoleName}
	}
	if id.UserID != 0 {
		s["user"] = map[string]any{"id": id.UserID, "name": id.UserName, "email": id.UserEmail, "is_sys_admin": id.Admin}
	}
	if id.FromScript() {
		s["requestor"] = "script"
	} else {
		s["requestor"] = "api"
	}
	return s
}

// pick copies the selected paths of tree into a new document.
func pick(tree map[string]any, sel selection) map[string]any {
	out := map[string]any{}
	for _, key := range sel {
		parts := strings.Split(key, ".")
		var v any = tree
		ok := true
		for _, p := range parts {
			m, isMap := v.(map[string]any)
			if !isMap {
				ok = false
				break
			}
			if v, ok = m[p]; !ok {
				break
			}
		}
		if !ok {
			continue
		}
		dst := out
		for _, p := range parts[:len(parts)-1] {
			next, isMap := dst[p].(map[string]any)
			if !isMap {
				next = map[string]any{}
				dst[p] = next
			}
			dst = next
		}
		dst[parts[len(parts)-1]] = v
	}
	return out
}

// message builds the GELF message of ev at level.
func (c *Connector) message(ev *Event, level Level, mapped string) *gelf.Message {
	short, full := summary(ev, mapped)
	extra := pick(c.tree(ev), c.sel)
	if ev.RequestID != "" {
		extra["_request_id"] = ev.RequestID
	}
	if c.cfg.Protocol != ProtocolGELF {
		// DreamFactory's non-GELF protocols carry these two.
		extra["_message"] = full
		extra["_level"] = level.Monolog()
	}
	return &gelf.Message{
		Version:  "1.1",
		Host:     c.cfg.Hostname,
		Short:    short,
		Full:     full,
		TimeUnix: float64(ev.Time.UnixMicro()) / 1e6,
		Level:    int32(level),
		Extra:    extra,
	}
}

// summary is a message's short and full text.
func summary(ev *Event, mapped string) (short, full string) {
	if ev.Message != "" {
		full = ev.Message
		short = firstLine(full, 250)
		return short, full
	}
	short = ev.Method + " " + ev.Path + " " + strconv.Itoa(ev.Status)
	full = mapped
	if full == "" {
		full = short + " in " + ev.Duration.Round(time.Microsecond).String()
	}
	return short, full
}

func firstLine(s string, max int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
