// Package scriptsvc is the scripted-service backend: service types lua,
// nodejs, python3, php and v8js (group Script) whose script answers every
// request under /api/v2/{service}/, as DreamFactory's scripted services
// do.
//
// The script is config.content, or, when that is empty, the file
// DIR/scripts/{service}.{lua,js,py,php} (read again when it changes; a
// record's content wins over a file). It runs through the script engine
// (package script) with the objects of an event script: event.request
// (method, parameters, headers, payload, uri, service, resource, where
// resource is the path below the service, "" for its root), event.resource
// (the same path) and platform (platform.api through the pipeline as the
// caller with the script requestor bit, platform.session). It answers by
// setting event.response ({status_code, content, headers, content_type})
// or by returning a value: {status_code, content} is the response, any
// other value is the content with 200, nothing is 200 with null. Raising
// an error aborts as in an event script ({status_code, message}: that
// status; anything else: 500 "Script error: …"); past the time limit the
// answer is 500 "Script error: time limit exceeded"; an engine whose
// interpreter is missing answers 503 naming it.
package scriptsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/scriptevent"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// Type is one scripted-service type.
type Type struct {
	name, label, engine, ext string
}

var _ service.Type = Type{}

// Types returns the scripted-service types: lua, nodejs, python3 (and
// python, run by python3), php and v8js (JavaScript in-process).
func Types() []service.Type {
	return []service.Type{
		Type{name: "lua", label: "Lua Script", engine: "lua", ext: ".lua"},
		Type{name: "v8js", label: "V8js Script", engine: "javascript", ext: ".js"},
		Type{name: "nodejs", label: "Node.js Script", engine: "nodejs", ext: ".js"},
		Type{name: "python3", label: "Python3 Script", engine: "python3", ext: ".py"},
		// DreamFactory's "python" (Python 2 there) runs on python3 here, so
		// that exported python services import and run.
		Type{name: "python", label: "Python Script", engine: "python3", ext: ".py"},
		Type{name: "php", label: "PHP Script", engine: "php", ext: ".php"},
	}
}

// Info names the type.
func (t Type) Info() service.Info {
	return service.Info{Name: t.name, Label: t.label, Group: service.GroupScript,
		Description: fmt.Sprintf("A service written as a %s script that answers every request below the service (config.content, or DIR/scripts/{service}%s).", t.label[:len(t.label)-len(" Script")], t.ext)}
}

// Config is a scripted service's configuration.
type Config struct {
	// Content is the script; empty means DIR/scripts/{service}.{ext}.
	Content string `json:"content"`
}

// ParseConfig reads a configuration (other DreamFactory keys such as
// storage_service_id are ignored).
func ParseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("config is not a JSON object with a content string: %w", err)
	}
	return c, nil
}

// ValidateConfig checks the configuration and the script's syntax.
func (t Type) ValidateConfig(raw json.RawMessage) error {
	c, err := ParseConfig(raw)
	if err != nil {
		return err
	}
	if strings.TrimSpace(c.Content) != "" {
		if err := script.Check(t.engine, c.Content); err != nil {
			return fmt.Errorf("content: %w", err)
		}
	}
	return nil
}

// ConfigSchema describes the configuration.
func (t Type) ConfigSchema() []service.ConfigField {
	return []service.ConfigField{{Name: "content", Label: "Content", Type: "text",
		Description: "The script. Empty: the file DIR/scripts/{service}" + t.ext + " in the data directory, read again when it changes."}}
}

// New builds the backend; the script is compiled on the first request.
func (t Type) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	c, err := ParseConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	b := &Backend{name: svc.Name, typ: t, content: c.Content, timeout: deps.ScriptTimeout}
	if deps.DataDir != "" {
		b.file = filepath.Join(deps.DataDir, "scripts", svc.Name+t.ext)
	}
	if deps.Registry != nil {
		b.api = deps.Registry.Handler
		b.snapshot = deps.Registry.Snapshot
	}
	return b, nil
}

// Backend serves one scripted service.
type Backend struct {
	name    string
	typ     Type
	content string
	file    string
	timeout time.Duration
	api     func() http.Handler
	// snapshot is the configuration in force, for the script's lookups.
	snapshot func() *store.Snapshot

	mu     sync.Mutex
	src    string // the source the engine holds
	eng    *script.Engine
	stamp  fileStamp
	loaded time.Time
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// eventName is the name the script runs under (its name in errors).
func (b *Backend) eventName() string { return "service." + b.name }

// engine returns the engine holding the script in force.
func (b *Backend) engine() (*script.Engine, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	src := b.content
	if strings.TrimSpace(src) == "" {
		if b.file == "" {
			return nil, apierr.InternalMsg("Script error: service '%s' has no script: set config.content", b.name)
		}
		// The file is looked at again at most once a second.
		if b.eng != nil && time.Since(b.loaded) < time.Second {
			return b.eng, nil
		}
		fi, err := os.Stat(b.file)
		if err != nil {
			return nil, apierr.InternalMsg("Script error: service '%s' has no script: set config.content or add %s", b.name, b.file).WithCause(err)
		}
		b.loaded = time.Now()
		st := fileStamp{mod: fi.ModTime(), size: fi.Size()}
		if b.eng != nil && st == b.stamp {
			return b.eng, nil
		}
		data, err := os.ReadFile(b.file)
		if err != nil {
			return nil, apierr.InternalMsg("Script error: reading %s: %v", b.file, err).WithCause(err)
		}
		b.stamp, src = st, string(data)
	}
	if b.eng == nil || src != b.src {
		b.eng = script.New([]script.Script{{Name: b.eventName(), Type: b.typ.engine, Content: src, AllowModification: true}},
			script.Options{Timeout: b.timeout, HasLookups: scriptevent.HasLookups})
		b.src = src
	}
	return b.eng, nil
}

// ServeHTTP runs the script over the request.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := service.TargetFrom(r.Context())
	if t == nil {
		apierr.Write(w, apierr.InternalMsg("scripted service: no target in the request"))
		return
	}
	e, err := b.engine()
	if err != nil {
		apierr.Write(w, err)
		return
	}
	req, aerr := scriptevent.RequestEvent(r, t)
	if aerr != nil {
		apierr.Write(w, aerr)
		return
	}
	ev := map[string]any{"request": req, "resource": t.Resource}
	plat := &scriptevent.Platform{Handler: b.api, ID: caller.IdentityFrom(r.Context()), Snapshot: b.snapshot}
	res, _, err := e.Run(r.Context(), b.eventName(), ev, plat)
	if err != nil {
		apierr.Write(w, scriptevent.RunError(err))
		return
	}
	resp := res.Response
	if resp == nil {
		resp = map[string]any{"status_code": http.StatusOK, "content": res.Returned}
	}
	scriptevent.WriteResponse(w, resp, nil)
}

// Close releases nothing: workers belong to the script engine.
func (b *Backend) Close() error { return nil }

// OpenAPI documents the service: every path and method reaches the
// script.
func (b *Backend) OpenAPI(context.Context) (*openapi3.T, error) {
	doc := service.NewDocument(fmt.Sprintf("A %s: every request below the service runs its script, which answers.", b.typ.label))
	anyJSON := openapi3.NewSchemaRef("", openapi3.NewSchema().WithNullable())
	for _, path := range []string{"/", "/{resource}"} {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			id := strings.ToLower(m) + "Script"
			if path != "/" {
				id += "Resource"
			}
			op := service.NewOperation(id, b.name, m+" "+path+" runs the script.",
				"The script sees event.request (this request) and event.resource (the path below the service) and answers.")
			if path != "/" {
				op.AddParameter(openapi3.NewPathParameter("resource").WithDescription("Any path below the service; the script reads it as event.resource.").
					WithSchema(openapi3.NewStringSchema()))
			}
			if m != http.MethodGet && m != http.MethodDelete {
				op.RequestBody = service.JSONBody("What the script reads as event.request.payload.", false, anyJSON)
			}
			service.AddResponse(op, http.StatusOK, "What the script answered.", anyJSON)
			service.AddErrors(op, service.CommonErrors...)
			service.AddOperation(doc, path, m, op)
		}
	}
	return doc, nil
}
