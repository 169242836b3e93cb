package apidocs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// APIPrefix is where the services are served, below any mount prefix.
const APIPrefix = "/api/v2"

// Builder builds the OpenAPI documents of the services a registry hosts,
// as the caller in a request's context may see them.
type Builder struct {
	// Registry hosts the services (required).
	Registry service.Registry
	// Access decides what the caller reaches; nil shows everything (a
	// stack without roles).
	Access service.AccessChecker
	// Version is Portcullis's version, each document's info.version.
	Version string
	// Logger receives documents that fail validation (a bug) and
	// services left out of the combined document.
	Logger *slog.Logger
}

// jsonDoc is a document as generic JSON, the form filtering and merging
// work on.
type jsonDoc = map[string]any

// componentKinds are the components that references point at and that
// are pruned when nothing refers to them any more.
var componentKinds = []string{"schemas", "responses", "parameters", "requestBodies", "headers", "examples", "links", "callbacks"}

// methods are the operation keys of a path item.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// ServiceJSON returns the validated document of the service called name,
// as the caller in ctx may see it. base is the URL path the API is served
// at ("/api/v2", or with the mount prefix before it).
func (b *Builder) ServiceJSON(ctx context.Context, name, base string) ([]byte, error) {
	svc, err := b.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	d, err := b.serviceDoc(ctx, svc)
	if err != nil {
		return nil, err
	}
	d["servers"] = []any{map[string]any{"url": base + "/" + url.PathEscape(svc.Name),
		"description": "Service '" + svc.Name + "'"}}
	return b.finish(ctx, d)
}

// CombinedJSON returns the validated document of every active service the
// caller reaches, paths prefixed with the service name and components
// (but the shared ones) with "{service}.". Services whose document cannot
// be made now (a database that does not answer) are left out and named in
// info.description.
func (b *Builder) CombinedJSON(ctx context.Context, base string) ([]byte, error) {
	snap := b.Registry.Snapshot()
	if snap == nil {
		return nil, apierr.Unavailable("The configuration is being loaded; try again.")
	}
	services := append([]*store.Service(nil), snap.Services...)
	sort.Slice(services, func(i, j int) bool { return services[i].Name < services[j].Name })

	out := jsonDoc{}
	shared := service.NewDocument("")
	raw, err := json.Marshal(shared)
	if err != nil {
		return nil, apierr.Internal(fmt.Errorf("apidocs: %w", err))
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, apierr.Internal(fmt.Errorf("apidocs: %w", err))
	}
	paths := map[string]any{}
	tags := []any{}
	var missing []string
	for _, svc := range services {
		if !svc.IsActive || !b.reaches(ctx, svc.Name) {
			continue
		}
		d, err := b.serviceDoc(ctx, svc)
		if err != nil {
			b.logger().WarnContext(ctx, "service left out of the combined API document", "service", svc.Name, "error", err)
			missing = append(missing, fmt.Sprintf("%s (%s)", svc.Name, apierr.As(err).Message))
			continue
		}
		if err := mergeService(out, paths, svc.Name, d); err != nil {
			return nil, apierr.Internal(err)
		}
		tag := map[string]any{"name": svc.Name}
		if desc := serviceTitle(svc); desc != "" {
			tag["description"] = desc
		}
		tags = append(tags, tag)
	}
	desc := "Every service of this Portcullis instance that the caller's role reaches. Each service's own document is at " +
		base + "/api_docs/{service} and " + base + "/{service}/_spec."
	if len(missing) > 0 {
		desc += "\n\nNot documented now: " + strings.Join(missing, "; ") + "."
	}
	out["info"] = map[string]any{"title": "Portcullis API", "description": desc, "version": b.version()}
	out["paths"] = paths
	out["tags"] = tags
	out["servers"] = []any{map[string]any{"url": base, "description": "All services"}}
	return b.finish(ctx, out)
}

// lookup finds an active service the caller reaches.
func (b *Builder) lookup(ctx context.Context, name string) (*store.Service, error) {
	snap := b.Registry.Snapshot()
	if snap == nil {
		return nil, apierr.Unavailable("The configuration is being loaded; try again.")
	}
	svc := snap.Service(name)
	if svc == nil {
		return nil, apierr.NotFound("Service '%s' not found.", name)
	}
	if !b.reaches(ctx, name) {
		return nil, apierr.Forbidden("Access Forbidden. The role grants no access to service '%s', so its API document is not shown.", name)
	}
	if !svc.IsActive {
		return nil, apierr.Forbidden("Service %s is deactivated.", name)
	}
	return svc, nil
}

// serviceDoc is the service's document filtered for the caller, as
// generic JSON, without servers.
func (b *Builder) serviceDoc(ctx context.Context, svc *store.Service) (jsonDoc, error) {
	var doc *openapi3.T
	be, live := b.Registry.Backend(svc.Name)
	_, implemented := b.Registry.Type(svc.Type)
	switch {
	case live:
		if dm, ok := be.(service.Documenter); ok {
			var err error
			if doc, err = dm.OpenAPI(ctx); err != nil {
				return nil, err
			}
		} else {
			doc = service.NewDocument("The service documents no routable endpoints.")
		}
	case implemented:
		// Built but failed: its requests get the configuration error.
		return nil, apierr.Unavailable("Service '%s' cannot be documented now: its configuration has an error or it is being reloaded. Its own requests say which.", svc.Name)
	default:
		doc = service.NewDocument("The service's type '" + svc.Type + "' is not implemented by this build, so it has no routable endpoints.")
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, apierr.Internal(fmt.Errorf("apidocs: encode the document of %s: %w", svc.Name, err))
	}
	d := jsonDoc{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return nil, apierr.Internal(fmt.Errorf("apidocs: decode the document of %s: %w", svc.Name, err))
	}
	info, _ := d["info"].(map[string]any)
	desc := svc.Description
	if extra, _ := info["description"].(string); extra != "" {
		if desc != "" {
			desc += "\n\n"
		}
		desc += extra
	}
	info = map[string]any{"title": serviceTitle(svc), "version": b.version()}
	if desc != "" {
		info["description"] = desc
	}
	d["info"] = info
	d["openapi"] = service.OpenAPIVersion
	b.filterPaths(ctx, svc.Name, d)
	pruneComponents(d)
	return d, nil
}

func serviceTitle(svc *store.Service) string {
	if svc.Label != "" {
		return svc.Label
	}
	return svc.Name
}

func (b *Builder) version() string {
	if b.Version == "" {
		return "dev"
	}
	return b.Version
}

func (b *Builder) logger() *slog.Logger {
	if b.Logger == nil {
		return slog.Default()
	}
	return b.Logger
}

func (b *Builder) reaches(ctx context.Context, name string) bool {
	return b.Access == nil || b.Access.Reaches(ctx, name)
}

// filterPaths drops the operations the caller may not call, and the paths
// left without one.
func (b *Builder) filterPaths(ctx context.Context, svcName string, d jsonDoc) {
	paths, _ := d["paths"].(map[string]any)
	if paths == nil {
		d["paths"] = map[string]any{}
		return
	}
	if b.Access == nil {
		return
	}
	for p, v := range paths {
		item, _ := v.(map[string]any)
		comp := component(p)
		kept := 0
		for _, m := range methods {
			if _, ok := item[m]; !ok {
				continue
			}
			if b.Access.Allowed(ctx, svcName, comp, strings.ToUpper(m)) {
				kept++
			} else {
				delete(item, m)
			}
		}
		if kept == 0 {
			delete(paths, p)
		}
	}
}

// component turns a document path into the resource path the access rules
// match: no surrounding slashes, literal segments unescaped, placeholders
// kept ("/_table/my%20table/{id}" → "_table/my table/{id}").
func component(p string) string {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			continue
		}
		if u, err := url.PathUnescape(s); err == nil {
			segs[i] = u
		}
	}
	return strings.Join(segs, "/")
}

// refPrefix starts every internal reference.
const refPrefix = "#/components/"

// collectRefs adds to refs every internal reference under v.
func collectRefs(v any, refs map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				refs[s] = true
				continue
			}
			collectRefs(e, refs)
		}
	case []any:
		for _, e := range x {
			collectRefs(e, refs)
		}
	}
}

// pruneComponents removes the components no path refers to, directly or
// through other components; the shared ones stay.
func pruneComponents(d jsonDoc) {
	comps, _ := d["components"].(map[string]any)
	if comps == nil {
		return
	}
	used := map[string]bool{}
	for k, v := range d {
		if k != "components" {
			collectRefs(v, used)
		}
	}
	queue := make([]string, 0, len(used))
	for r := range used {
		queue = append(queue, r)
	}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		kind, name, ok := splitRef(r)
		if !ok {
			continue
		}
		m, _ := comps[kind].(map[string]any)
		found := map[string]bool{}
		collectRefs(m[name], found)
		for f := range found {
			if !used[f] {
				used[f] = true
				queue = append(queue, f)
			}
		}
	}
	for _, kind := range componentKinds {
		m, _ := comps[kind].(map[string]any)
		for name := range m {
			if !used[refPrefix+kind+"/"+escapePointer(name)] && !service.SharedComponent(name) {
				delete(m, name)
			}
		}
		if m != nil && len(m) == 0 {
			delete(comps, kind)
		}
	}
}

// splitRef splits "#/components/schemas/contact" into its kind and name.
func splitRef(r string) (kind, name string, ok bool) {
	rest, ok := strings.CutPrefix(r, refPrefix)
	if !ok {
		return "", "", false
	}
	kind, name, ok = strings.Cut(rest, "/")
	return kind, unescapePointer(name), ok
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// mergeService adds the service's document d to the combined document out:
// its paths below /{name}, its components (but the shared ones) as
// "{name}.{component}", its operation ids as "{name}.{id}" and its
// operations tagged with the service name.
func mergeService(out jsonDoc, paths map[string]any, name string, d jsonDoc) error {
	rename := func(r string) string {
		kind, comp, ok := splitRef(r)
		if !ok || service.SharedComponent(comp) {
			return r
		}
		return refPrefix + kind + "/" + escapePointer(name+"."+comp)
	}
	rewriteRefs(d, rename)
	if comps, _ := d["components"].(map[string]any); comps != nil {
		outComps, _ := out["components"].(map[string]any)
		if outComps == nil {
			outComps = map[string]any{}
			out["components"] = outComps
		}
		for _, kind := range componentKinds {
			m, _ := comps[kind].(map[string]any)
			for comp, v := range m {
				if service.SharedComponent(comp) {
					continue
				}
				om, _ := outComps[kind].(map[string]any)
				if om == nil {
					om = map[string]any{}
					outComps[kind] = om
				}
				om[name+"."+comp] = v
			}
		}
	}
	src, _ := d["paths"].(map[string]any)
	prefix := "/" + url.PathEscape(name)
	for p, v := range src {
		item, _ := v.(map[string]any)
		for _, m := range methods {
			op, _ := item[m].(map[string]any)
			if op == nil {
				continue
			}
			if id, _ := op["operationId"].(string); id != "" {
				op["operationId"] = name + "." + id
			}
			op["tags"] = []any{name}
		}
		full := prefix + p
		if p == "/" {
			full = prefix
		}
		if _, dup := paths[full]; dup {
			return fmt.Errorf("apidocs: path %s documented twice", full)
		}
		paths[full] = item
	}
	return nil
}

// rewriteRefs replaces every internal reference under v with fn's.
func rewriteRefs(v any, fn func(string) string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				x[k] = fn(s)
				continue
			}
			rewriteRefs(e, fn)
		}
	case []any:
		for _, e := range x {
			rewriteRefs(e, fn)
		}
	}
}

// finish encodes d and checks it with kin-openapi: it must load (every
// reference resolves, no external ones) and validate. A document that does
// not is a bug here or in a backend: 500, logged with the reason.
func (b *Builder) finish(ctx context.Context, d jsonDoc) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, apierr.Internal(fmt.Errorf("apidocs: encode: %w", err))
	}
	sum := sha256.Sum256(buf.Bytes())
	if !validated.has(sum) {
		if err := Validate(ctx, buf.Bytes()); err != nil {
			b.logger().ErrorContext(ctx, "generated API document is invalid", "error", err)
			return nil, apierr.InternalMsg("The generated API document is invalid: %v", err).WithCause(err)
		}
		validated.add(sum)
	}
	return buf.Bytes(), nil
}

// validated remembers the SHA-256 of documents that passed validation, so
// that the same document (same service, schema and role) is validated
// once, not on every request: loading and validating is most of the cost
// of a large database's document. Bounded; it starts over when full.
var validated = &digestSet{m: map[[sha256.Size]byte]struct{}{}}

const maxValidated = 512

type digestSet struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]struct{}
}

func (d *digestSet) has(k [sha256.Size]byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.m[k]
	return ok
}

func (d *digestSet) add(k [sha256.Size]byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.m) >= maxValidated {
		clear(d.m)
	}
	d.m[k] = struct{}{}
}

// Validate loads an OpenAPI 3 document with kin-openapi, refusing external
// references, and validates it.
func Validate(ctx context.Context, data []byte) error {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	return nil
}

// basePath is the URL path the API is served at for r: APIPrefix, after
// the prefix the server is mounted under when it was stripped before the
// request reached Portcullis.
func basePath(r *http.Request) string {
	prefix := ""
	if r.RequestURI != "" {
		if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
			if p, ok := strings.CutSuffix(u.Path, r.URL.Path); ok && strings.HasPrefix(p, "/") {
				prefix = strings.TrimRight(p, "/")
			}
		}
	}
	return prefix + APIPrefix
}

// ServeService writes the document of the service called name (GET
// /api/v2/api_docs/{name} and /api/v2/{name}/_spec).
func (b *Builder) ServeService(w http.ResponseWriter, r *http.Request, name string) {
	if err := allowRead(r); err != nil {
		apierr.Write(w, err)
		return
	}
	data, err := b.ServiceJSON(r.Context(), name, basePath(r))
	writeDoc(w, r, data, err)
}

// ServeCombined writes the combined document (GET /api/v2/api_docs).
func (b *Builder) ServeCombined(w http.ResponseWriter, r *http.Request) {
	if err := allowRead(r); err != nil {
		apierr.Write(w, err)
		return
	}
	data, err := b.CombinedJSON(r.Context(), basePath(r))
	writeDoc(w, r, data, err)
}

// allowRead refuses verbs other than GET (and HEAD) on documents.
func allowRead(r *http.Request) error {
	verb := r.Method
	if t := service.TargetFrom(r.Context()); t != nil && t.Verb != "" {
		verb = t.Verb
	}
	if verb != http.MethodGet && verb != http.MethodHead {
		return apierr.BadRequest("%s requests for API documents are not supported; use GET.", verb)
	}
	return nil
}

func writeDoc(w http.ResponseWriter, r *http.Request, data []byte, err error) {
	if err != nil {
		var ae *apierr.Error
		if !errors.As(err, &ae) {
			err = apierr.Internal(err)
		}
		apierr.Write(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// A document depends on the caller's role: never shared by caches.
	h.Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}
