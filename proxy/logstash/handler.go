package logstash

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Handler serves a connector's own API (see the package doc). It is an
// http.Handler usable alone (the path below its mount point is the
// resource) or as a service's backend.
type Handler struct {
	// Name is the service's name, for messages.
	Name string
	// Connector ships the messages written.
	Connector *logship.Connector
}

// ServeHTTP answers one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.Handler(h.serve).ServeHTTP(w, r)
}

// Close stops the connector.
func (h *Handler) Close() error { return h.Connector.Close() }

// LogConnector returns the service's connector, which the pipeline's
// GELF tap ships every request to.
func (h *Handler) LogConnector() *logship.Connector { return h.Connector }

// Status is the answer of GET /{svc}.
type Status struct {
	Host     string   `json:"host"`
	Port     int      `json:"port"`
	Protocol string   `json:"protocol"`
	Level    string   `json:"level"`
	Context  []string `json:"context"`
	logship.Stats
}

type message struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	res := strings.Trim(r.URL.Path, "/")
	if t := service.TargetFrom(r.Context()); t != nil {
		res = t.Resource
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if res != "" {
			return apierr.NotFound("Resource '%s' not found for service '%s'.", res, h.Name)
		}
		cfg := h.Connector.Config()
		return apierr.WriteJSON(w, http.StatusOK, Status{Host: cfg.Host, Port: cfg.Port, Protocol: cfg.Protocol,
			Level: cfg.Level, Context: cfg.Context, Stats: h.Connector.Stats()})
	case http.MethodPost, http.MethodPut:
		// DreamFactory's logger writes on PUT as on POST.
	default:
		return apierr.MethodNotAllowed(r.Method)
	}
	// The body is read whole: it is decoded here and shipped in
	// _event.request, as DreamFactory ships the request with the message.
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return apierr.As(err)
		}
		body = b
	}
	var m message
	if res == "" {
		if err := apierr.Unmarshal(body, &m, true); err != nil {
			return err
		}
	} else {
		// A level in a JSON body counts when the path names none.
		_ = apierr.Unmarshal(body, &m, true)
		// /{LEVEL}/{message}, or /{message} alone.
		level, text, ok := strings.Cut(res, "/")
		if !ok {
			level, text = "", level
		}
		if level != "" {
			m.Level = level
		}
		if t, err := url.PathUnescape(text); err == nil {
			text = t
		}
		m.Message = text
	}
	if strings.TrimSpace(m.Message) == "" {
		return apierr.BadRequest("No message provided for logging")
	}
	level := logship.Info
	if m.Level != "" {
		l, err := logship.ParseLevel(m.Level)
		if err != nil {
			return apierr.BadRequest("Unknown log level [%s]", m.Level)
		}
		level = l
	}
	ctx := r.Context()
	ev := &logship.Event{
		Time:       time.Now(),
		RequestID:  caller.RequestID(ctx),
		Method:     r.Method,
		Path:       r.URL.Path,
		Query:      r.URL.RawQuery,
		Header:     r.Header.Clone(),
		RemoteAddr: r.RemoteAddr,
		Request:    logship.Body{ContentType: r.Header.Get("Content-Type"), Data: body, Size: int64(len(body))},
		Identity:   caller.IdentityFrom(ctx),
		Message:    m.Message,
		Level:      level,
		HasLevel:   true,
	}
	if t := service.TargetFrom(ctx); t != nil && t.Service != nil {
		ev.Service, ev.Resource = t.Service.Name, t.Resource
	}
	h.Connector.Ship(ev)
	return apierr.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
}
