package system

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// serveServiceTypes serves GET /service_type[/{name}]: every type the
// build implements (types that are only listed, which refuse to be
// created with 501, are left out), with its config_schema when the type
// describes its configuration, fields= and group= (comma-separated
// groups).
func (b *Backend) serveServiceTypes(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	p := newParams(r.URL.Query())
	sel, err := p.fields()
	if err != nil {
		return err
	}
	known := []string{"name", "label", "group", "description", "singleton", "implemented", "config_schema"}
	for _, f := range sel {
		if !contains(known, f) {
			return apierr.BadRequest("Invalid field '%s' requested for resource 'service_type'; fields are %s.", f, strings.Join(known, ", "))
		}
	}
	encode := func(info service.Info) object {
		t, impl := b.deps.Registry.Type(info.Name)
		var schema []service.ConfigField
		if cs, ok := t.(service.ConfigSchemer); ok {
			schema = cs.ConfigSchema()
		}
		o := object{{"name", info.Name}, {"label", info.Label}, {"group", info.Group},
			{"description", info.Description}, {"singleton", info.Singleton}, {"implemented", impl},
			{"config_schema", schema}}
		if sel != nil {
			o = o.only(sel)
		}
		return o
	}
	var types []service.Info
	for _, info := range b.deps.Registry.Types() {
		if _, ok := b.deps.Registry.Type(info.Name); ok {
			types = append(types, info)
		}
	}
	if name := ps.ByName("name"); name != "" {
		for _, info := range types {
			if info.Name == name {
				return apierr.WriteJSON(w, http.StatusOK, encode(info))
			}
		}
		for _, info := range b.deps.Registry.Types() {
			if info.Name == name {
				return apierr.NotFound("Service type '%s' is not available in this build.", name)
			}
		}
		return apierr.NotFound("Service type '%s' not found.", name)
	}
	var groups []string
	if g := p.get("group"); g != "" {
		groups = splitList(strings.ToLower(g))
	}
	list := []object{}
	for _, info := range types {
		if groups != nil && !contains(groups, strings.ToLower(info.Group)) {
			continue
		}
		list = append(list, encode(info))
	}
	return apierr.WriteJSON(w, http.StatusOK, object{{"resource", list}})
}

// serveEnvironment serves GET /environment to anyone: what a client reads
// before signing in (authentication, platform), plus the apps of a
// signed-in caller and, for administrators, the server.
func (b *Backend) serveEnvironment(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ctx := r.Context()
	id := caller.IdentityFrom(ctx)
	snap := b.deps.Registry.Snapshot()
	login := func(path string) object {
		return object{{"path", path}, {"verb", http.MethodPost},
			{"payload", object{{"email", "string"}, {"password", "string"}, {"duration", "integer"}, {"remember_me", "bool"}}}}
	}
	var reg struct {
		Allow   bool   `json:"allow_open_registration"`
		EmailID *int64 `json:"open_reg_email_service_id"`
	}
	if snap != nil {
		for _, s := range snap.Services {
			if s.Type == "user" && s.IsActive {
				_ = json.Unmarshal(s.ConfigJSON(), &reg)
				break
			}
		}
	}
	out := object{
		{"authentication", object{
			{"admin", login("system/admin/session")},
			{"user", login("user/session")},
			{"oauth", ssoLogins(snap, "oauth")},
			{"adldap", ssoLogins(snap, "adldap")},
			{"saml", ssoLogins(snap, "saml")},
			{"allow_open_registration", reg.Allow},
			{"open_reg_email_service_id", reg.EmailID},
			{"allow_forever_sessions", false},
			{"login_attribute", "email"},
		}},
		{"apps", b.environmentApps(r, id, snap)},
	}
	platform := object{
		{"version", b.deps.Version},
		{"api_version", "2.0"},
		{"bitnami_demo", false},
		{"is_hosted", false},
		{"is_trial", false},
		{"license", "OPEN SOURCE"},
		{"secured_package_export", false},
		{"install_type", "standalone"},
	}
	admin := id != nil && id.Admin
	if admin {
		platform.set("db_driver", string(b.st.Kind()))
		cache := "none"
		if b.opts.LimitStore != nil {
			cache = b.opts.LimitStore.Kind()
		}
		platform.set("cache_driver", cache)
	}
	out = append(out, member{"platform", platform})
	out = append(out, member{"config", object{
		{"always_wrap_resources", true},
		{"resources_wrapper", "resource"},
		{"db", object{
			{"max_records_returned", maxRecords},
			{"time_format", "H:i:s"},
			{"date_format", "Y-m-d"},
			{"datetime_format", "Y-m-d H:i:s"},
			{"timestamp_format", "Y-m-d H:i:s"},
		}},
	}})
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	locale := r.Header.Get("Accept-Language")
	if i := strings.IndexAny(locale, ",;"); i >= 0 {
		locale = locale[:i]
	}
	out = append(out, member{"client", object{{"user_agent", r.UserAgent()}, {"ip_address", host}, {"locale", strings.TrimSpace(locale)}}})
	if admin {
		hostname, _ := os.Hostname()
		out = append(out, member{"server", object{
			{"server_os", runtime.GOOS},
			{"release", ""},
			{"version", runtime.Version()},
			{"host", hostname},
			{"machine", runtime.GOARCH},
		}})
	}
	return apierr.WriteJSON(w, http.StatusOK, out)
}

// environmentApps lists the active apps a signed-in caller may launch:
// every one for an administrator, those with a role for the user (their
// own mapping or the app's default role) otherwise; none before sign-in.
func (b *Backend) environmentApps(r *http.Request, id *caller.Identity, snap *store.Snapshot) []object {
	out := []object{}
	if id == nil || !id.Authenticated() || snap == nil {
		return out
	}
	var defaultApp int64
	var u store.User
	if err := b.db.NewSelect().Model(&u).Column("default_app_id").Where("id = ?", id.UserID).Scan(r.Context()); err == nil && u.DefaultAppID != nil {
		defaultApp = *u.DefaultAppID
	}
	for _, a := range snap.Apps {
		if !a.IsActive {
			continue
		}
		if !id.Admin {
			_, mapped := snap.UserAppRole(id.UserID, a.ID)
			if !mapped && a.RoleID == nil {
				continue
			}
		}
		out = append(out, object{
			{"id", a.ID}, {"name", a.Name}, {"label", a.Label}, {"description", a.Description},
			{"type", a.Type}, {"launch_url", snap.LaunchURL(a)},
			{"requires_fullscreen", a.RequiresFullscreen}, {"allow_fullscreen_toggle", a.AllowFullscreenToggle},
			{"toggle_location", a.ToggleLocation}, {"is_default", a.ID == defaultApp},
		})
	}
	return out
}

// constants are the read-only values of /system/constant.
func constants() []member {
	verbs := object{}
	for _, vb := range verbBits {
		verbs = append(verbs, member{vb.Verb, vb.Bit})
	}
	limitTypes := object{}
	describe := map[limiter.Type]string{
		limiter.TypeInstance:                "every request to the instance",
		limiter.TypeUser:                    "the requests of one user (user_id)",
		limiter.TypeEachUser:                "the requests of each authenticated user, separately",
		limiter.TypeRole:                    "the requests of every caller in one role (role_id)",
		limiter.TypeService:                 "the requests to one service (service_id)",
		limiter.TypeUserService:             "one user's requests to one service",
		limiter.TypeEachUserService:         "each user's requests to one service, separately",
		limiter.TypeServiceEndpoint:         "the requests to one endpoint of a service (endpoint)",
		limiter.TypeUserServiceEndpoint:     "one user's requests to one endpoint",
		limiter.TypeEachUserServiceEndpoint: "each user's requests to one endpoint, separately",
	}
	for _, t := range limiter.Types() {
		limitTypes = append(limitTypes, member{string(t), describe[t]})
	}
	periods := object{}
	for _, p := range limiter.Periods() {
		periods = append(periods, member{string(p), int64(p.Duration().Seconds())})
	}
	groups := []string{service.GroupDatabase, service.GroupFile, service.GroupRemote, service.GroupMCP,
		service.GroupEmail, service.GroupNotification, service.GroupOAuth, service.GroupCache, service.GroupIoT,
		service.GroupSystem, service.GroupAPIDoc, service.GroupUser, service.GroupLog, service.GroupScript}
	return []member{
		{"verb_mask", verbs},
		{"requestor_mask", object{{"API", requestorAPI}, {"SCRIPT", requestorScript}}},
		{"app_type", object{{"NONE", store.AppTypeNone}, {"STORAGE_SERVICE", store.AppTypeStorage}, {"URL", store.AppTypeURL}, {"PATH", store.AppTypePath}, {"GIT", store.AppTypeGit}}},
		{"limit_type", limitTypes},
		{"limit_period", periods},
		{"filter_operator", filterOperators},
		{"filter_op", []string{"AND", "OR"}},
		{"script_type", scriptTypes},
		{"event_phase", []string{"pre_process", "post_process", "queued"}},
		{"service_type_group", groups},
	}
}

// serveConstants serves GET /constant (every group with its values) and
// GET /constant/{name} (the values of one group).
func (b *Backend) serveConstants(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	all := constants()
	if name := ps.ByName("name"); name != "" {
		for _, c := range all {
			if c.Key == name {
				return apierr.WriteJSON(w, http.StatusOK, c.Value)
			}
		}
		return apierr.NotFound("Constant '%s' not found.", name)
	}
	list := make([]object, len(all))
	for i, c := range all {
		list[i] = object{{"name", c.Key}, {"value", c.Value}}
	}
	return apierr.WriteJSON(w, http.StatusOK, object{{"resource", list}})
}
