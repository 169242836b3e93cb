package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// TypeName is the service type's name.
const TypeName = "mcp"

// Options configures the mcp service type.
type Options struct {
	// Audit receives one event per tool call of every mcp service (both
	// forms); nil records nothing.
	Audit *Audit
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Forwarder builds the reverse proxy of the url form; nil refuses
	// that form. The composition root supplies one built on proxy/rws.
	Forwarder Forwarder
}

// Type is the mcp service type (group MCP). Build it with NewType.
type Type struct {
	opts Options
}

var _ service.Type = (*Type)(nil)

// NewType returns the type.
func NewType(opts Options) *Type {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Type{opts: opts}
}

// Info names the type as the spec lists it.
func (*Type) Info() service.Info {
	for _, info := range service.Generic {
		if info.Name == TypeName {
			return info
		}
	}
	return service.Info{Name: TypeName, Label: "MCP Server", Group: service.GroupMCP}
}

// Config is a parsed mcp service configuration: exactly one of URL (the
// remote form) and Services (the services form) is set.
type Config struct {
	// Services names the database services exposed as tools.
	Services []string
	// URL is the remote MCP server's endpoint (streamable HTTP, or the
	// event stream of the HTTP+SSE transport).
	URL *url.URL
	// Forward is the configuration handed to the Forwarder: the
	// service's headers and parameters, with base_url set to URL.
	Forward json.RawMessage
	// HeaderTimeout bounds the wait for the remote server's response
	// headers (config.timeout in seconds, default DefaultTimeout; 0 means
	// no bound). Event streams then run for as long as they last.
	HeaderTimeout time.Duration
}

// DefaultTimeout is how long the url form waits for a remote server to
// start answering.
const DefaultTimeout = 60 * time.Second

// ParseConfig reads a service's configuration and reports every problem
// at once.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	var m map[string]json.RawMessage
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return c, errors.New("config: give either 'url' (a remote MCP server) or 'services' (a list of database services to expose as tools)")
	}
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return c, errors.New("config must be a JSON object")
	}
	_, hasURL := m["url"]
	rawSvcs, hasSvcs := m["services"]
	switch {
	case hasURL && hasSvcs:
		return c, errors.New("config: give either 'url' or 'services', not both")
	case hasURL:
		return parseRemote(m)
	case !hasSvcs:
		return c, errors.New("config: give either 'url' (a remote MCP server) or 'services' (a list of database services to expose as tools)")
	}
	var errs []error
	var list []string
	if err := json.Unmarshal(rawSvcs, &list); err != nil {
		// "db, crm" is accepted too.
		var s string
		if json.Unmarshal(rawSvcs, &s) != nil {
			return c, errors.New("config.services must be a list of service names")
		}
		list = strings.Split(s, ",")
	}
	seen := map[string]bool{}
	for i, n := range list {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			errs = append(errs, fmt.Errorf("config.services[%d] is empty", i))
		case strings.ContainsAny(n, "/?#% \t"):
			errs = append(errs, fmt.Errorf("config.services[%d]: %q is not a service name", i, n))
		case seen[n]:
			errs = append(errs, fmt.Errorf("config.services[%d]: %q is listed twice", i, n))
		default:
			seen[n] = true
			c.Services = append(c.Services, n)
		}
	}
	if len(list) == 0 {
		errs = append(errs, errors.New("config.services must name at least one service"))
	}
	return c, errors.Join(errs...)
}

// ValidateConfig checks a service's configuration; see ParseConfig. The
// url form's headers and parameters are checked by the Forwarder.
func (t *Type) ValidateConfig(config json.RawMessage) error {
	cfg, err := ParseConfig(config)
	if err != nil || cfg.URL == nil {
		return err
	}
	if t.opts.Forwarder == nil {
		return errors.New("config.url: proxying a remote MCP server is not available in this build; use 'services'")
	}
	return t.opts.Forwarder.ValidateForward(cfg.Forward)
}

// New builds the backend of svc.
func (t *Type) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	if cfg.URL != nil {
		if t.opts.Forwarder == nil {
			return nil, errors.New("config.url: proxying a remote MCP server is not available in this build; use 'services'")
		}
		return newRemote(svc, deps, cfg, t.opts.Forwarder, t.opts.Audit, t.opts.Now)
	}
	if deps.Registry == nil {
		return nil, errors.New("the services form of an mcp service needs the service registry")
	}
	for _, s := range cfg.Services {
		if s == svc.Name {
			return nil, fmt.Errorf("config.services names the mcp service itself (%q)", s)
		}
	}
	if deps.Logger != nil {
		deps.Logger = deps.Logger.With("service", svc.Name)
	}
	return &Backend{Handler: newTools(svc.Name, cfg.Services, deps, t.opts.Audit, t.opts.Now), services: cfg.Services}, nil
}

// Backend is an mcp service.
type Backend struct {
	http.Handler
	services []string
}

var _ service.Backend = (*Backend)(nil)

// ServeHTTP serves the MCP endpoint; each tool call is audited.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reached(r.Context())
	b.Handler.ServeHTTP(w, r)
}

// Close releases nothing: the services form keeps no connections.
func (b *Backend) Close() error { return nil }

// parseRemote reads the url form: url, timeout, and the headers and
// parameters the Forwarder adds (rws's format).
func parseRemote(m map[string]json.RawMessage) (Config, error) {
	c := Config{HeaderTimeout: DefaultTimeout}
	var errs []error
	var raw string
	if err := json.Unmarshal(m["url"], &raw); err != nil {
		errs = append(errs, errors.New("config.url must be a string"))
	} else if u, err := url.Parse(strings.TrimSpace(raw)); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
		errs = append(errs, fmt.Errorf("config.url %q must be an absolute http or https URL without a fragment", raw))
	} else {
		c.URL = u
	}
	if v, ok := m["timeout"]; ok && string(v) != "null" {
		var n float64
		if err := json.Unmarshal(v, &n); err != nil || n < 0 || n > math.MaxInt32 {
			errs = append(errs, errors.New("config.timeout must be a number of seconds, 0 (no bound) or more"))
		} else {
			c.HeaderTimeout = time.Duration(n * float64(time.Second))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	fwd := map[string]any{"base_url": c.URL.String(), "timeout": 0}
	for _, k := range []string{"headers", "parameters"} {
		if v, ok := m[k]; ok {
			fwd[k] = v
		}
	}
	c.Forward, _ = json.Marshal(fwd)
	return c, nil
}

// ConfigSchema describes both forms' keys for /system/service_type: give
// url (a remote server) or services (tools over database services).
func (*Type) ConfigSchema() []service.ConfigField {
	return []service.ConfigField{
		{Name: "url", Label: "Remote MCP server URL", Type: "string",
			Description: "Remote form: the endpoint of a remote MCP server (streamable HTTP, or the event stream of the HTTP+SSE transport). Give url or services, not both."},
		{Name: "headers", Label: "Headers", Type: "array",
			Description: "Remote form: headers added to every forwarded request, as an rws service takes them ({name, value, pass_from_client, action}); values may use lookups such as {user.email}. The platform's API key and session token are never forwarded."},
		{Name: "parameters", Label: "Query parameters", Type: "array",
			Description: "Remote form: query parameters added or removed, as an rws service takes them."},
		{Name: "timeout", Label: "Timeout (seconds)", Type: "number", Default: DefaultTimeout.Seconds(),
			Description: "Remote form: how long to wait for the remote server to start answering (504 past it); 0 means no bound. Event streams then last as long as they do."},
		{Name: "services", Label: "Services", Type: "array",
			Description: "Services form: the database services exposed as MCP tools (list_tables, describe_table, query_records, create_records, update_records, delete_records, call_procedure, call_function), each call made as the caller."},
	}
}
