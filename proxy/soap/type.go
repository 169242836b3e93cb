package soap

import (
	"context"
	"encoding/json"

	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Type is the soap service type. Its zero value is ready to use.
type Type struct{}

var _ service.Type = Type{}

// Info names the type as the spec lists it.
func (Type) Info() service.Info {
	for _, info := range service.Generic {
		if info.Name == "soap" {
			return info
		}
	}
	return service.Info{Name: "soap", Label: "SOAP Service", Group: service.GroupRemote}
}

// ValidateConfig checks a service's configuration; see ParseConfig.
func (Type) ValidateConfig(config json.RawMessage) error {
	_, _, err := ParseConfig(config)
	return err
}

// New builds the backend of svc; the WSDL is read on the first request.
func (Type) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, opts, err := ParseConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	set := Settings{Name: svc.Name, DataDir: deps.DataDir, UpstreamAllow: deps.UpstreamAllow}
	if deps.Logger != nil {
		set.Logger = deps.Logger.With("service", svc.Name)
	}
	return New(cfg, opts, set)
}
