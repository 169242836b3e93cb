package system

import (
	"context"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// eventVerbs are the verbs a service root answers when its backend does
// not list its events.
var eventVerbs = []string{"get", "post", "put", "patch", "delete"}

// maxEventNames bounds the resolved names of one path in as_list, so that a
// service with huge parameter lists cannot blow the response up.
const maxEventNames = 10000

// Events lists the system service's own events (system.role.post.pre_process
// and so on), implementing service.EventLister.
func (b *Backend) Events(context.Context) ([]service.EventPath, error) {
	var out []service.EventPath
	for _, name := range b.endpoints {
		out = append(out,
			service.EventPath{Path: name, Verbs: eventVerbs},
			service.EventPath{Path: name + "/{id}", Verbs: []string{"get", "put", "patch", "delete"}})
	}
	out = append(out,
		service.EventPath{Path: "admin/session", Verbs: []string{"get", "post", "put", "delete"}},
		service.EventPath{Path: "admin/password", Verbs: []string{"post"}},
		service.EventPath{Path: "admin/profile", Verbs: []string{"get", "post"}},
		service.EventPath{Path: "service_type", Verbs: []string{"get"}},
		service.EventPath{Path: "script_type", Verbs: []string{"get"}},
		service.EventPath{Path: "environment", Verbs: []string{"get"}},
		service.EventPath{Path: "constant", Verbs: []string{"get"}},
		service.EventPath{Path: "event", Verbs: []string{"get"}},
		service.EventPath{Path: "cache", Verbs: []string{"get", "delete"}},
		service.EventPath{Path: "cache/{service}", Verbs: []string{"delete"}},
		service.EventPath{Path: "package", Verbs: []string{"get", "post"}},
		service.EventPath{Path: "limit_cache", Verbs: []string{"get", "delete"}},
		service.EventPath{Path: "limit_cache/{id}", Verbs: []string{"get", "delete"}},
	)
	return out, nil
}

// eventPaths returns the event paths of one service: its backend's list,
// or its root with the five verbs.
func (b *Backend) eventPaths(ctx context.Context, svc *store.Service) ([]service.EventPath, error) {
	var be service.Backend
	if svc.Name == b.svc.Name {
		be = b
	} else if x, ok := b.deps.Registry.Backend(svc.Name); ok {
		be = x
	}
	if l, ok := be.(service.EventLister); ok {
		return l.Events(ctx)
	}
	return []service.EventPath{{Path: "", Verbs: eventVerbs}}, nil
}

// eventBase is {service}.{path with "/" as "."}.
func eventBase(svc, path string) string {
	path = strings.Trim(path, "/")
	if path == "" {
		return svc
	}
	return svc + "." + strings.ReplaceAll(path, "/", ".")
}

// serveEvents serves GET /event: per active service, each event path with
// its endpoints (event names) and parameters, as DreamFactory's
// /system/event does, and, where scripts are attached to its events,
// "scripts": each with its type, its source (a record of event_script or
// a file of DIR/scripts), and whether it is the one in force. service= limits it to one service, scriptable=true
// adds the script suffixes (pre_process, post_process, queued),
// as_list=true returns a flat list of names (placeholders also resolved
// with their listed values), services_only=true the service names.
func (b *Backend) serveEvents(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ctx := r.Context()
	p := newParams(r.URL.Query())
	only := p.get("service")
	scriptable, asList := p.flag("scriptable"), p.flag("as_list")
	snap := b.deps.Registry.Snapshot()
	var services []*store.Service
	for _, s := range snap.Services {
		if s.IsActive && (only == "" || s.Name == only) {
			services = append(services, s)
		}
	}
	sort.Slice(services, func(i, j int) bool { return services[i].Name < services[j].Name })
	if only != "" && len(services) == 0 {
		return apierr.NotFound("Service '%s' not found.", only)
	}
	if p.flag("services_only") {
		names := make([]string, len(services))
		for i, s := range services {
			names[i] = s.Name
		}
		return apierr.WriteJSON(w, http.StatusOK, object{{"resource", names}})
	}
	suffix := func(e string) []string {
		if !scriptable {
			return []string{e}
		}
		return []string{e, e + ".pre_process", e + ".post_process", e + ".queued"}
	}
	attached := b.attachedScripts(snap)
	out := object{}
	var flat []string
	seen := map[string]bool{}
	addFlat := func(s string) {
		if !seen[s] {
			seen[s] = true
			flat = append(flat, s)
		}
	}
	for _, s := range services {
		paths, err := b.eventPaths(ctx, s)
		if err != nil {
			b.log.Warn("listing a service's events failed", "event_service", s.Name, "error", err)
			continue
		}
		sv := object{}
		scripts := attached[s.Name]
		for _, ep := range paths {
			base := eventBase(s.Name, ep.Path)
			var endpoints, plain []string
			for _, v := range ep.Verbs {
				plain = append(plain, base+"."+strings.ToLower(v))
				endpoints = append(endpoints, suffix(base+"."+strings.ToLower(v))...)
			}
			if asList {
				for _, e := range endpoints {
					addFlat(e)
					for _, x := range resolveEvent(e, ep.Parameter) {
						addFlat(x)
					}
				}
				continue
			}
			var param any
			if len(ep.Parameter) > 0 {
				param = ep.Parameter
			}
			o := object{{"type", "api"}, {"endpoints", endpoints}, {"parameter", param}}
			if sc := scriptsOf(plain, &scripts); sc != nil {
				o = append(o, member{"scripts", sc})
			}
			sv.set(base, o)
		}
		// Scripts attached to events the service does not list (a typo,
		// or a path its document leaves out) are listed under their own
		// event path, so that none is hidden.
		for _, a := range scripts {
			if asList {
				break
			}
			path, endpoint := eventOf(a.name)
			o := object{{"type", "api"}, {"endpoints", suffix(endpoint)}, {"parameter", nil}}
			if v, ok := sv.get(path); ok {
				o = v.(object)
			}
			l, _ := o.get("scripts")
			list, _ := l.([]object)
			o.set("scripts", append(list, a.object()))
			sv.set(path, o)
		}
		if !asList {
			out.set(s.Name, sv)
		}
	}
	if asList {
		if flat == nil {
			flat = []string{}
		}
		return apierr.WriteJSON(w, http.StatusOK, object{{"resource", flat}})
	}
	return apierr.WriteJSON(w, http.StatusOK, out)
}

var placeholder = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// resolveEvent substitutes the listed values of each placeholder of name
// (placeholders without values stay), up to maxEventNames names.
func resolveEvent(name string, params map[string][]string) []string {
	if len(params) == 0 || !strings.Contains(name, "{") {
		return nil
	}
	names := []string{name}
	for _, m := range placeholder.FindAllStringSubmatch(name, -1) {
		vals := params[m[1]]
		if len(vals) == 0 {
			continue
		}
		var next []string
		for _, n := range names {
			for _, v := range vals {
				if len(next) >= maxEventNames {
					break
				}
				next = append(next, strings.Replace(n, m[0], v, 1))
			}
		}
		names = next
	}
	if len(names) == 1 && names[0] == name {
		return nil
	}
	return names
}

// serveCache serves GET /cache (the services that cache), DELETE /cache
// (flush every cache), DELETE /cache/{service} and DELETE
// /cache/_event/{event}.
func (b *Backend) serveCache(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	ctx := r.Context()
	snap := b.deps.Registry.Snapshot()
	rest := strings.Trim(ps.ByName("rest"), "/")
	flusher := func(name string) (service.CacheFlusher, bool) {
		be, ok := b.deps.Registry.Backend(name)
		if !ok {
			return nil, false
		}
		f, ok := be.(service.CacheFlusher)
		return f, ok
	}
	success := object{{"success", true}}
	switch {
	case r.Method == http.MethodGet:
		list := []object{}
		for _, s := range snap.Services {
			if _, ok := flusher(s.Name); ok {
				list = append(list, object{{"name", s.Name}, {"label", s.Label}})
			}
		}
		return apierr.WriteJSON(w, http.StatusOK, object{{"resource", list}})
	case rest == "":
		var failed []string
		for _, s := range snap.Services {
			if f, ok := flusher(s.Name); ok {
				if err := f.FlushCache(ctx); err != nil {
					b.log.Error("flushing a service's cache failed", "cache_service", s.Name, "error", err)
					failed = append(failed, s.Name)
				}
			}
		}
		b.reload(ctx)
		if len(failed) > 0 {
			return apierr.InternalMsg("Flushing the cache of %s failed.", strings.Join(failed, ", "))
		}
		return apierr.WriteJSON(w, http.StatusOK, success)
	case strings.HasPrefix(rest, "_event/"):
		name := strings.TrimPrefix(rest, "_event/")
		if snap.EventScript(name) == nil {
			return apierr.NotFound("Event script '%s' not found.", name)
		}
		// Scripts are part of the configuration snapshot: a reload reads
		// them afresh.
		b.reload(ctx)
		return apierr.WriteJSON(w, http.StatusOK, success)
	}
	if strings.Contains(rest, "/") || snap.Service(rest) == nil {
		return apierr.NotFound("Service '%s' not found.", rest)
	}
	f, ok := flusher(rest)
	if !ok {
		return apierr.NotImplemented("Service does not implement API controlled cache.")
	}
	if err := f.FlushCache(ctx); err != nil {
		return apierr.InternalMsg("Flushing the cache of service '%s' failed.", rest).WithCause(err)
	}
	return apierr.WriteJSON(w, http.StatusOK, success)
}
