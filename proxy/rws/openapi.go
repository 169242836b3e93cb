package rws

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/yaml"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// ConfigDocKey is the configuration key holding the remote service's
// OpenAPI document: a JSON object, or JSON or YAML text. Its paths are
// relative to base_url, as clients call them below /api/v2/{service}.
const ConfigDocKey = "openapi"

// maxDocBytes caps the document a configuration may hold.
const maxDocBytes = 2 << 20

// documented is a Proxy with the document its configuration gives.
type documented struct {
	*Proxy
	doc *openapi3.T
}

var (
	_ service.Documenter   = (*documented)(nil)
	_ service.CacheFlusher = (*documented)(nil)
)

// OpenAPI returns the configured document (with the platform's security
// and shared components), or a generic one that says every path is
// forwarded.
func (d *documented) OpenAPI(context.Context) (*openapi3.T, error) {
	if d.doc != nil {
		return d.doc, nil
	}
	return genericDoc(), nil
}

// genericDoc documents a remote service whose configuration holds no
// document: the root and any path below it, with every verb forwarded.
func genericDoc() *openapi3.T {
	doc := service.NewDocument("A remote HTTP service: requests below this service are forwarded to the remote base URL with the platform's configured headers and parameters, and its answers come back as they are. Its configuration holds no OpenAPI document (config key \"" + ConfigDocKey + "\"), so only the forwarding is described.")
	any := openapi3.NewSchemaRef("", &openapi3.Schema{Description: "The remote service's answer, passed through."})
	body := &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
		WithDescription("Sent to the remote service as it is.").WithJSONSchemaRef(any)}
	for _, p := range []struct{ path, what string }{{"/", "the remote service's root"}, {"/{path}", "a path of the remote service"}} {
		for _, verb := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			id := strings.ToLower(verb) + "Root"
			if p.path != "/" {
				id = strings.ToLower(verb) + "Path"
			}
			op := service.NewOperation(id, "remote", verb+" "+p.what,
				"Forwarded with the query string and body. Deeper paths (a/b/c) are forwarded the same way.")
			if p.path != "/" {
				op.AddParameter(service.PathParam("path", "The remote path.", nil).Value)
			}
			if verb != http.MethodGet && verb != http.MethodDelete {
				op.RequestBody = body
			}
			service.AddResponse(op, http.StatusOK, "The remote service's answer (any status it gives is passed on).", any)
			service.AddErrors(op, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable)
			op.Responses.Set("502", &openapi3.ResponseRef{Value: openapi3.NewResponse().
				WithDescription("The remote service gave no usable answer.").WithJSONSchemaRef(service.SchemaRef(service.SchemaError))})
			op.Responses.Set("504", &openapi3.ResponseRef{Value: openapi3.NewResponse().
				WithDescription("The remote service did not answer in time.").WithJSONSchemaRef(service.SchemaRef(service.SchemaError))})
			service.AddOperation(doc, p.path, verb, op)
		}
	}
	return doc
}

// ParseDoc reads the OpenAPI document under ConfigDocKey in a service's
// configuration: nil when there is none. The document must be OpenAPI
// 3.0.x, at most 2 MiB, with only internal references, and valid; its
// security is replaced by the platform's (the proxy sends the remote
// service's credentials itself), components whose names the platform's
// shared components use are renamed with an "_upstream" suffix, and the
// shared components are added.
func ParseDoc(raw json.RawMessage) (*openapi3.T, error) {
	var m map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil, nil // ParseConfig reports a config that is not an object
	}
	v, ok := present(m, ConfigDocKey)
	if !ok {
		return nil, nil
	}
	if len(v) > maxDocBytes {
		return nil, fmt.Errorf("%s: the document is larger than %d bytes", ConfigDocKey, maxDocBytes)
	}
	var text string
	var tree map[string]any
	switch {
	case json.Unmarshal(v, &text) == nil:
		var generic any
		if _, err := yaml.Unmarshal([]byte(text), &generic, yaml.DecodeOpts{DisableTimestamps: true}); err != nil {
			return nil, fmt.Errorf("%s: the text is neither JSON nor YAML: %w", ConfigDocKey, err)
		}
		obj, ok := generic.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: the document must be an object", ConfigDocKey)
		}
		tree = obj
	default:
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&tree); err != nil || tree == nil {
			return nil, fmt.Errorf("%s must be an OpenAPI 3.0 document: a JSON object, or JSON or YAML text", ConfigDocKey)
		}
	}
	ver, _ := tree["openapi"].(string)
	if !strings.HasPrefix(ver, "3.0") {
		if _, swagger := tree["swagger"]; swagger {
			return nil, fmt.Errorf("%s: Swagger 2.0 documents are not supported; convert it to OpenAPI 3.0", ConfigDocKey)
		}
		return nil, fmt.Errorf("%s: the document must be OpenAPI 3.0.x (its openapi field is %q)", ConfigDocKey, ver)
	}
	adaptDoc(tree)
	data, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigDocKey, err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigDocKey, err)
	}
	if doc.Paths != nil {
		for _, p := range doc.Paths.Keys() {
			if !strings.HasPrefix(p, "/") {
				return nil, fmt.Errorf("%s: path %q must start with /", ConfigDocKey, p)
			}
		}
	}
	if doc.Info == nil {
		doc.Info = &openapi3.Info{}
	}
	if doc.Info.Title == "" {
		doc.Info.Title = "Remote service"
	}
	if doc.Info.Version == "" {
		doc.Info.Version = "1"
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("%s: the document is not valid: %w", ConfigDocKey, err)
	}
	service.AddSharedComponents(doc)
	return doc, nil
}

// adaptDoc makes a remote document the platform's: no servers, the
// platform's security only, and components clear of the shared names.
func adaptDoc(tree map[string]any) {
	delete(tree, "servers")
	delete(tree, "security")
	if paths, ok := tree["paths"].(map[string]any); ok {
		for _, item := range paths {
			pi, _ := item.(map[string]any)
			delete(pi, "servers")
			for _, op := range pi {
				if o, ok := op.(map[string]any); ok {
					delete(o, "security")
					delete(o, "servers")
				}
			}
		}
	}
	comps, _ := tree["components"].(map[string]any)
	if comps == nil {
		return
	}
	delete(comps, "securitySchemes")
	renamed := map[string]string{}
	for kind, v := range comps {
		m, _ := v.(map[string]any)
		for name, c := range m {
			if !service.SharedComponent(name) {
				continue
			}
			to := name + "_upstream"
			for m[to] != nil {
				to += "_"
			}
			delete(m, name)
			m[to] = c
			renamed["#/components/"+kind+"/"+name] = "#/components/" + kind + "/" + to
		}
	}
	if len(renamed) > 0 {
		renameRefs(tree, renamed)
	}
}

// renameRefs rewrites the references named in to.
func renameRefs(v any, to map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				if n, ok := to[s]; ok {
					x[k] = n
				}
				continue
			}
			renameRefs(e, to)
		}
	case []any:
		for _, e := range x {
			renameRefs(e, to)
		}
	}
}
