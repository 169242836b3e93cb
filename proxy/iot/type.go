package iot

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Types returns the IoT service types: amqp and mqtt.
func Types() []service.Type { return []service.Type{AMQPType{}, MQTTType{}} }

// info finds a generic type's description by name.
func info(name, label string) service.Info {
	return service.GenericInfo(name, service.Info{Name: name, Label: label, Group: service.GroupIoT})
}

// AMQPType is the amqp service type. Its zero value is ready to use.
type AMQPType struct{}

var _ service.Type = AMQPType{}

// Info names the type as the spec lists it.
func (AMQPType) Info() service.Info { return info("amqp", "AMQP Client") }

// ValidateConfig checks an amqp configuration; see ParseAMQPConfig.
func (AMQPType) ValidateConfig(config json.RawMessage) error {
	_, err := ParseAMQPConfig(config)
	return err
}

// New builds the backend of svc; it connects on the first request.
func (AMQPType) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseAMQPConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	return newBackend(svc, deps, "amqp", NewAMQP(cfg.URL(), svc.Name)), nil
}

// MQTTType is the mqtt service type. Its zero value is ready to use.
type MQTTType struct{}

var _ service.Type = MQTTType{}

// Info names the type as the spec lists it.
func (MQTTType) Info() service.Info { return info("mqtt", "MQTT Client") }

// ValidateConfig checks an mqtt configuration; see ParseMQTTConfig.
func (MQTTType) ValidateConfig(config json.RawMessage) error {
	_, err := ParseMQTTConfig(config)
	return err
}

// New builds the backend of svc; it connects on the first request.
func (MQTTType) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseMQTTConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	b, err := NewMQTT(cfg)
	if err != nil {
		return nil, err
	}
	return newBackend(svc, deps, "mqtt", b), nil
}

func newBackend(svc *store.Service, deps service.Deps, kind string, b Broker) *backend {
	h := &Handler{Name: svc.Name, Kind: kind, Broker: b}
	if deps.Registry != nil {
		h.Pipeline = deps.Registry.Handler
	}
	if deps.Logger != nil {
		h.Logger = deps.Logger.With("service", svc.Name)
	}
	return &backend{Handler: h}
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

// OpenAPI documents the service's API for its kind.
func (b *backend) OpenAPI(context.Context) (*openapi3.T, error) { return Document(b.Kind), nil }

// ConfigSchema describes an amqp configuration.
func (AMQPType) ConfigSchema() []service.ConfigField {
	return []service.ConfigField{
		{Name: "host", Label: "Host", Type: "string", Required: true, Description: "The broker's host name or address."},
		{Name: "port", Label: "Port", Type: "integer", Default: 5672, Description: "Default 5672, or 5671 with tls."},
		{Name: "username", Label: "Username", Type: "string", Default: "guest"},
		{Name: "password", Label: "Password", Type: "password", Description: "Default guest when no username is given either."},
		{Name: "vhost", Label: "Virtual host", Type: "string", Default: "/"},
		{Name: "tls", Label: "TLS", Type: "boolean", Default: false, Description: "Connect with amqps, verifying the broker against the system's roots."},
	}
}

// ConfigSchema describes an mqtt configuration.
func (MQTTType) ConfigSchema() []service.ConfigField {
	return []service.ConfigField{
		{Name: "host", Label: "Host", Type: "string", Required: true, Description: "The broker's host name or address."},
		{Name: "port", Label: "Port", Type: "integer", Default: 1883, Description: "Default 1883, or 8883 with use_tls."},
		{Name: "client_id", Label: "Client ID", Type: "string", Default: "portcullis", Description: "Start of every connection's client id; a random suffix makes each unique."},
		{Name: "username", Label: "Username", Type: "string"},
		{Name: "password", Label: "Password", Type: "password"},
		{Name: "use_tls", Label: "Use TLS", Type: "boolean", Default: false},
		{Name: "capath", Label: "CA path", Type: "string", Description: "A folder of PEM certificates (or one file) trusted for the broker's TLS; empty: the system's roots."},
	}
}
