package logstash

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

// Options wires the service types.
type Options struct {
	// Metrics counts every connector's shipped, dropped and failed
	// events; nil counts only in each service's GET.
	Metrics *logship.Metrics
}

// Types returns the logstash type and its synonym gelf.
func Types(opts Options) []service.Type {
	return []service.Type{Type{name: "logstash", opts: opts}, Type{name: "gelf", opts: opts}}
}

// Type is the logstash service type (or its synonym gelf).
type Type struct {
	name string
	opts Options
}

var _ service.Type = Type{}

// Info names the type as the spec lists it; gelf is listed as the
// synonym it is.
func (t Type) Info() service.Info {
	if t.name == "gelf" {
		return service.Info{Name: "gelf", Label: "GELF (Logstash)", Group: service.GroupLog,
			Description: "Ship request logs to a GELF collector (synonym of logstash)."}
	}
	for _, i := range service.Generic {
		if i.Name == "logstash" {
			return i
		}
	}
	return service.Info{Name: "logstash", Label: "Logstash", Group: service.GroupLog}
}

// ValidateConfig checks a configuration; see ParseConfig.
func (Type) ValidateConfig(config json.RawMessage) error {
	_, _, err := ParseConfig(config)
	return err
}

// New builds the service's connector; it connects on the first event.
func (t Type) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, lc, err := ParseConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	lc.Name, lc.Version = svc.Name, deps.Version
	allow, err := upstream.ParseAllowList(deps.UpstreamAllow)
	if err != nil {
		return nil, err
	}
	logger := deps.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c, err := NewConnector(lc, ConnectorOptions{Path: cfg.Path, Allow: allow, Metrics: t.opts.Metrics,
		Logger: logger.With("service", svc.Name)})
	if err != nil {
		return nil, err
	}
	return &backend{Handler: &Handler{Name: svc.Name, Connector: c}}, nil
}

// ConnectorOptions wires NewConnector.
type ConnectorOptions struct {
	// Path is the URL path of protocol http (default /gelf).
	Path string
	// Allow restricts the addresses dialled; the zero AllowList allows
	// all.
	Allow upstream.AllowList
	// Metrics and Logger: see logship.Options.
	Metrics *logship.Metrics
	Logger  *slog.Logger
}

// NewConnector starts a connector for cfg, with every protocol: gelf, udp
// and tcp from logship, http here. A stack assembled in Go uses it with
// handlers/gelf.
func NewConnector(cfg logship.Config, opts ConnectorOptions) (*logship.Connector, error) {
	lo := logship.Options{Dial: opts.Allow.Dialer(), Metrics: opts.Metrics, Logger: opts.Logger}
	n, err := cfg.Normal()
	if err != nil {
		return nil, err
	}
	if n.Protocol == logship.ProtocolHTTP {
		lo.Transport = newHTTPTransport(n, opts.Path, opts.Allow)
	}
	return logship.New(cfg, lo)
}

// ConfigSchema describes a logstash configuration.
func (Type) ConfigSchema() []service.ConfigField {
	return []service.ConfigField{
		{Name: "host", Label: "Host", Type: "string", Default: "127.0.0.1", Description: "The collector's host name or address."},
		{Name: "port", Label: "Port", Type: "integer", Default: logship.DefaultPort},
		{Name: "protocol", Label: "Protocol", Type: "picklist", Default: "gelf", Values: []string{"gelf", "udp", "tcp", "http"},
			Description: "gelf: GELF over UDP, compressed and chunked; udp: the same uncompressed; tcp: GELF over TCP; http: POST to http://host:port/gelf."},
		{Name: "level", Label: "Minimum level", Type: "picklist", Default: "DEBUG",
			Values:      []string{"EMERGENCY", "ALERT", "CRITICAL", "ERROR", "WARNING", "NOTICE", "INFO", "DEBUG"},
			Description: "Events less severe are not shipped. Requests answered 5xx are ERROR, 4xx WARNING, the rest INFO."},
		{Name: "context", Label: "Context", Type: "array", Default: logship.DefaultContext,
			Description: "Keys shipped: _event, _platform, or dotted keys below them such as _event.request.headers.", Values: logship.ContextKeys},
		{Name: "service_event_map", Label: "Event map", Type: "array",
			Description: "[{event, level, message}]: events (db._table.contact.get, db.*, *) shipped at a level and with a message of their own."},
		{Name: "content_limit", Label: "Content limit", Type: "integer", Default: logship.DefaultContentLimit,
			Description: "Most bytes of a request or response body shipped; longer bodies are cut and marked. 0 ships none."},
		{Name: "queue", Label: "Queue", Type: "integer", Default: logship.DefaultQueue, Description: "Events that may wait to be sent; beyond, events are dropped and counted."},
		{Name: "compression", Label: "Compression", Type: "picklist", Default: "gzip", Values: []string{"gzip", "zlib", "none"}, Description: "For protocol gelf."},
		{Name: "hostname", Label: "Host field", Type: "string", Description: "The GELF host field; default the machine's name."},
		{Name: "path", Label: "HTTP path", Type: "string", Default: "/gelf", Description: "For protocol http."},
		{Name: "timeout", Label: "Timeout", Type: "number", Default: 2, Description: "Seconds one send may take."},
	}
}

// backend is a Handler documented as a service.
type backend struct {
	*Handler
}

var (
	_ service.Backend    = (*backend)(nil)
	_ service.Documenter = (*backend)(nil)
)

// ServeHTTP answers a request below the service.
func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.Handler.ServeHTTP(w, r) }

// OpenAPI documents the service's API.
func (b *backend) OpenAPI(context.Context) (*openapi3.T, error) { return Document(), nil }
