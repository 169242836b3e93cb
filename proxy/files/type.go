package files

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

// LocalType is the local_file service type: files in a folder of the data
// directory (or an absolute folder). Its zero value is ready to use.
type LocalType struct{}

var _ service.Type = LocalType{}

// Types returns every file service type this package implements.
func Types() []service.Type { return []service.Type{LocalType{}, SFTPType{}, WebDAVType{}} }

// info finds a generic type's description by name.
func info(name, label string) service.Info {
	for _, i := range service.Generic {
		if i.Name == name {
			return i
		}
	}
	return service.Info{Name: name, Label: label, Group: service.GroupFile}
}

// Info names the type as the spec lists it.
func (LocalType) Info() service.Info { return info("local_file", "Local File Storage") }

// ValidateConfig checks a local_file configuration; see ParseLocalConfig.
func (LocalType) ValidateConfig(config json.RawMessage) error {
	_, err := ParseLocalConfig(config)
	return err
}

// New builds the backend of svc: its root folder is opened (and created)
// on first use.
func (LocalType) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseLocalConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	if deps.DataDir == "" && !isAbs(cfg.Container) {
		return nil, errors.New("files: a relative container needs a data directory")
	}
	h := &Handler{Name: svc.Name, Storage: NewLocal(cfg.Root(deps.DataDir)), PublicPaths: cfg.PublicPath}
	if deps.Logger != nil {
		h.Logger = deps.Logger.With("service", svc.Name)
	}
	return &backend{Handler: h}, nil
}

// backend is a Handler documented as a service.
type backend struct {
	*Handler
}

var (
	_ service.Backend      = (*backend)(nil)
	_ service.Documenter   = (*backend)(nil)
	_ service.BodyStreamer = (*backend)(nil)
)

// ServeHTTP answers a request below the service.
func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.Handler.ServeHTTP(w, r) }

// StreamsBodies says that uploads are streamed to storage, never held:
// the pipeline caps them at its upload limit.
func (b *backend) StreamsBodies() bool { return true }

// OpenAPI documents the file API.
func (b *backend) OpenAPI(context.Context) (*openapi3.T, error) { return Document(), nil }

// SFTPType is the sftp_file service type: files on an SSH server. Its zero
// value is ready to use.
type SFTPType struct{}

var _ service.Type = SFTPType{}

// Info names the type as the spec lists it.
func (SFTPType) Info() service.Info { return info("sftp_file", "SFTP File Storage") }

// ValidateConfig checks an sftp_file configuration; see ParseSFTPConfig.
func (SFTPType) ValidateConfig(config json.RawMessage) error {
	_, err := ParseSFTPConfig(config)
	return err
}

// New builds the backend of svc; it connects on the first request.
func (SFTPType) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseSFTPConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	logger := deps.Logger
	if logger != nil {
		logger = logger.With("service", svc.Name)
	}
	allow, err := upstream.ParseAllowList(deps.UpstreamAllow)
	if err != nil {
		return nil, err
	}
	return &backend{Handler: &Handler{Name: svc.Name, Storage: NewSFTP(cfg, logger, allow.Dialer()), Logger: logger, PublicPaths: cfg.PublicPath}}, nil
}

// WebDAVType is the webdav_file service type: files on a WebDAV server.
// Its zero value is ready to use.
type WebDAVType struct{}

var _ service.Type = WebDAVType{}

// Info names the type as the spec lists it.
func (WebDAVType) Info() service.Info { return info("webdav_file", "WebDAV File Storage") }

// ValidateConfig checks a webdav_file configuration; see ParseWebDAVConfig.
func (WebDAVType) ValidateConfig(config json.RawMessage) error {
	_, err := ParseWebDAVConfig(config)
	return err
}

// New builds the backend of svc.
func (WebDAVType) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseWebDAVConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	logger := deps.Logger
	if logger != nil {
		logger = logger.With("service", svc.Name)
	}
	allow, err := upstream.ParseAllowList(deps.UpstreamAllow)
	if err != nil {
		return nil, err
	}
	return &backend{Handler: &Handler{Name: svc.Name, Storage: NewWebDAV(cfg, allow.Dialer()), Logger: logger, PublicPaths: cfg.PublicPath}}, nil
}
