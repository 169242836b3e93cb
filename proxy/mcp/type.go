package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// TypeName is the service type's name.
const TypeName = "mcp"

// Options configures the mcp service type.
type Options struct {
	// Audit receives one event per tool call of every services-form
	// service; nil records nothing.
	Audit *Audit
	// Now is the clock; nil means time.Now.
	Now func() time.Time
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
}

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
		return c, errors.New("config.url: proxying a remote MCP server is not available in this build yet; use 'services'")
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

// ValidateConfig checks a service's configuration; see ParseConfig.
func (*Type) ValidateConfig(config json.RawMessage) error {
	_, err := ParseConfig(config)
	return err
}

// New builds the backend of svc.
func (t *Type) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
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

// Close releases nothing: the services form keeps no connections.
func (b *Backend) Close() error { return nil }
