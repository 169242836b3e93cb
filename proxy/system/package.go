package system

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"

	"github.com/julienschmidt/httprouter"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// packageVersion is the version of the package document format.
const packageVersion = "0.1"

// packageSections are the parts of a package's "system" member, in the
// order they are exported and imported (references point backwards).
var packageSections = []string{"service", "role", "app", "admin", "user", "limit", "cors", "lookup",
	"event_script", "email_template", "custom", "schema_contract"}

// servePackage serves GET /package (the manifest of what an export holds)
// and POST /package: a body holding a package document ({"manifest",
// "system"}, as JSON or as a multipart file) is imported; any other body
// ({} or {"secrets": true, "description": "…"}) exports the whole
// configuration as such a document.
func (b *Backend) servePackage(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ctx := r.Context()
	p := newParams(r.URL.Query())
	if r.Method == http.MethodGet {
		m, err := b.manifest(ctx)
		if err != nil {
			return err
		}
		return apierr.WriteJSON(w, http.StatusOK, m)
	}
	data, err := packageBody(r)
	if err != nil {
		return err
	}
	var body map[string]json.RawMessage
	if len(bytes.TrimSpace(data)) > 0 {
		if err := apierr.Unmarshal(data, &body, false); err != nil {
			return err
		}
	}
	if _, ok := body["system"]; ok {
		return b.importPackage(w, r, body, p)
	}
	opts := newParams(r.URL.Query())
	opts.body = map[string]string{}
	for k, v := range body {
		if s, ok := scalarText(v); ok {
			opts.body[k] = s
		}
	}
	doc, err := b.export(ctx, b.db, opts.flag("secrets"), opts.get("description"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", `attachment; filename="portcullis-package.json"`)
	return apierr.WriteJSON(w, http.StatusOK, doc)
}

// packageBody returns the JSON of the request: the body, or the first file
// of a multipart form (DreamFactory's "files" upload).
func packageBody(r *http.Request) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return readBody(r)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, apierr.BadRequest("Invalid multipart body: %v", err)
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, apierr.BadRequest("Cannot read package manifest: the upload holds no file.")
		}
		if err != nil {
			return nil, apierr.As(err)
		}
		if part.FileName() == "" {
			continue
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, apierr.As(err)
		}
		return data, nil
	}
}

// manifest lists, per section, the names of what an export holds.
func (b *Backend) manifest(ctx context.Context) (object, error) {
	doc, err := b.export(ctx, b.db, false, "")
	if err != nil {
		return nil, err
	}
	sys, _ := doc.get("system")
	names := object{}
	for _, m := range sys.(object) {
		list := []any{}
		for _, rec := range m.Value.([]object) {
			switch m.Key {
			case "admin", "user":
				list = append(list, rec.only([]string{"email", "name", "first_name", "last_name"}))
			case "cors":
				v, _ := rec.get("path")
				list = append(list, v)
			case "schema_contract":
				v, _ := rec.get("service")
				list = append(list, v)
			default:
				v, _ := rec.get("name")
				list = append(list, v)
			}
		}
		names = append(names, member{m.Key, list})
	}
	man, _ := doc.get("manifest")
	out := append(object{}, man.(object)...)
	out.set("service", object{{b.svc.Name, names}})
	return out, nil
}

// redactConfig removes credentials from a service configuration, recording
// each removed path.
func redactConfig(raw json.RawMessage, path string, redacted *[]string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return raw
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		switch {
		case service.SecretKey(k):
			if !isNullJSON(v) && string(v) != `""` {
				delete(m, k)
				*redacted = append(*redacted, path+"."+k)
			}
		case strings.EqualFold(k, "dsn"):
			var s string
			if json.Unmarshal(v, &s) == nil {
				if red := dialects.Redact(s); red != s {
					m[k], _ = json.Marshal(red)
					*redacted = append(*redacted, path+"."+k)
				}
			}
		default:
			if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' {
				m[k] = redactConfig(v, path+"."+k, redacted)
			} else if len(t) > 0 && t[0] == '[' {
				m[k] = redactEntries(v, path+"."+k, redacted)
			}
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// redactEntries removes the value of each credential entry of a list in a
// service configuration (a header such as Authorization, a parameter such
// as api_key: service.SecretEntry), recording each removed path, and
// redacts the objects in the list.
func redactEntries(raw json.RawMessage, path string, redacted *[]string) json.RawMessage {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return raw
	}
	for i, el := range list {
		at := fmt.Sprintf("%s[%d]", path, i)
		if e, name, ok := entryOf(el); ok && service.SecretEntry(name) {
			if vk := valueKey(e); vk != "" {
				delete(e, vk)
				list[i], _ = json.Marshal(e)
				*redacted = append(*redacted, at+"."+vk)
			}
			continue
		}
		if t := bytes.TrimSpace(el); len(t) > 0 && t[0] == '{' {
			list[i] = redactConfig(el, at, redacted)
		}
	}
	out, _ := json.Marshal(list)
	return out
}

// strip drops the members named in drop.
func strip(o object, drop ...string) object {
	out := make(object, 0, len(o))
	for _, m := range o {
		if !contains(drop, m.Key) {
			out = append(out, m)
		}
	}
	return out
}

var auditNames = []string{"created_date", "last_modified_date", "created_by_id", "last_modified_by_id"}

// exportIndex maps ids to names for the references of an export.
type exportIndex struct {
	services, roles, apps, users map[int64]string
}

func (x *exportIndex) name(m map[int64]string, id any) any {
	switch v := id.(type) {
	case *int64:
		if v == nil {
			return nil
		}
		return m[*v]
	case int64:
		if v == 0 {
			return nil
		}
		return m[v]
	}
	return nil
}

// export renders the whole configuration as a package document. Records
// refer to one another by name (ids differ between instances).
// Credentials (service configuration passwords and tokens, app API keys,
// user password hashes and security answers, private lookup values) are
// included only with secrets; each one left out is listed in
// manifest.redacted.
func (b *Backend) export(ctx context.Context, db bun.IDB, secrets bool, description string) (object, error) {
	x := &exporter{b: b, db: db, secrets: secrets,
		idx: exportIndex{services: map[int64]string{}, roles: map[int64]string{}, apps: map[int64]string{}, users: map[int64]string{}}}
	if err := x.load(ctx); err != nil {
		return nil, err
	}
	sys := object{}
	for _, part := range []struct {
		name string
		fn   func(context.Context) ([]object, error)
	}{
		{"service", x.services}, {"role", x.roles}, {"app", x.apps},
		{"admin", func(ctx context.Context) ([]object, error) { return x.users(ctx, "admin", true) }},
		{"user", func(ctx context.Context) ([]object, error) { return x.users(ctx, "user", false) }},
		{"limit", x.limits}, {"cors", x.cors}, {"lookup", x.globalLookups}, {"event_script", x.scripts},
		{"email_template", x.templates}, {"custom", x.custom}, {"schema_contract", x.contracts},
	} {
		out, err := part.fn(ctx)
		if err != nil {
			return nil, err
		}
		sys = append(sys, member{part.name, out})
	}
	redacted := x.redacted
	if redacted == nil {
		redacted = []string{}
	}
	man := object{
		{"version", packageVersion},
		{"platform", "portcullis"},
		{"platform_version", b.deps.Version},
		{"secured", false},
		{"secrets", secrets},
		{"description", description},
		{"created_date", now().Format("2006-01-02 15:04:05")},
		{"redacted", redacted},
	}
	return object{{"manifest", man}, {"system", sys}}, nil
}

// exporter builds one package export: the records it read, their names
// by id (references are exported by name), and the secrets it left out.
type exporter struct {
	b        *Backend
	db       bun.IDB
	secrets  bool
	redacted []string
	idx      exportIndex

	svcRecs  []*store.Service
	roleRecs []*store.Role
	appRecs  []*store.App
	userRecs []*store.User
}

// load reads the records other records refer to, and indexes their names.
func (x *exporter) load(ctx context.Context) error {
	for _, q := range []*bun.SelectQuery{
		x.db.NewSelect().Model(&x.svcRecs).Order("id"),
		x.db.NewSelect().Model(&x.roleRecs).Order("id"),
		x.db.NewSelect().Model(&x.appRecs).Order("id"),
		x.db.NewSelect().Model(&x.userRecs).Order("id"),
	} {
		if err := q.Scan(ctx); err != nil && !store.IsNoRows(err) {
			return dbError(err)
		}
	}
	for _, s := range x.svcRecs {
		x.idx.services[s.ID] = s.Name
	}
	for _, r := range x.roleRecs {
		x.idx.roles[r.ID] = r.Name
	}
	for _, a := range x.appRecs {
		x.idx.apps[a.ID] = a.Name
	}
	for _, u := range x.userRecs {
		x.idx.users[u.ID] = u.Email
	}
	return nil
}

// lookups strips ids and audit fields from a record's lookups.
func lookups(list []object) []object {
	out := make([]object, 0, len(list))
	for _, o := range list {
		out = append(out, strip(o, append([]string{"id", "app_id", "role_id", "user_id"}, auditNames...)...))
	}
	return out
}

// lookupSecrets fills in the values of private lookups (which records
// never show) when secrets are exported, or records them as redacted.
// ownerCol is the owner's column ("" for global lookups).
func (x *exporter) lookupSecrets(ctx context.Context, owner string, ownerCol string, ownerID int64, list []object) ([]object, error) {
	for i, o := range list {
		priv, _ := o.get("private")
		if priv != true {
			continue
		}
		name, _ := o.get("name")
		if !x.secrets {
			o = strip(o, "value")
			x.redacted = append(x.redacted, fmt.Sprintf("%s.lookup.%v", owner, name))
			list[i] = o
			continue
		}
		var l store.Lookup
		q := x.db.NewSelect().Model(&l).Where("name = ?", name)
		if ownerCol == "" {
			q = q.Where("app_id IS NULL AND role_id IS NULL AND user_id IS NULL")
		} else {
			q = q.Where("? = ?", bun.Ident(ownerCol), ownerID)
		}
		if err := q.Limit(1).Scan(ctx); err != nil {
			return nil, dbError(err)
		}
		o.set("value", l.Value)
		list[i] = o
	}
	return list, nil
}

// services exports services, with credentials removed from their
// configuration unless secrets are exported.
func (x *exporter) services(ctx context.Context) ([]object, error) {
	out := []object{}
	for _, s := range x.svcRecs {
		o, err := x.b.serviceT.encode(ctx, s)
		if err != nil {
			return nil, err
		}
		o = strip(o, append([]string{"id", "mutable", "deletable"}, auditNames...)...)
		if x.secrets {
			o.set("config", s.ConfigJSON())
		} else {
			o.set("config", redactConfig(s.ConfigJSON(), "service."+s.Name+".config", &x.redacted))
		}
		out = append(out, o)
	}
	return out, nil
}

// roles exports roles with their access entries (services by name) and
// lookups.
func (x *exporter) roles(ctx context.Context) ([]object, error) {
	b := x.b
	out := []object{}
	for _, r := range x.roleRecs {
		objs, err := b.roleT.render(ctx, x.db, []*store.Role{r}, shape{relations: []*relation{
			b.roleT.relation("role_service_access_by_role_id"), b.roleT.relation("lookup_by_role_id")}})
		if err != nil {
			return nil, err
		}
		o := strip(objs[0], append([]string{"id"}, auditNames...)...)
		acc, _ := o.get("role_service_access_by_role_id")
		accOut := []object{}
		for _, a := range acc.([]object) {
			sid, _ := a.get("service_id")
			a = strip(a, append([]string{"id", "role_id", "service_id"}, auditNames...)...)
			a = append(object{{"service", x.idx.name(x.idx.services, sid)}}, a...)
			accOut = append(accOut, a)
		}
		o.set("role_service_access_by_role_id", accOut)
		lk, _ := o.get("lookup_by_role_id")
		lkOut, err := x.lookupSecrets(ctx, "role."+r.Name, "role_id", r.ID, lookups(lk.([]object)))
		if err != nil {
			return nil, err
		}
		o.set("lookup_by_role_id", lkOut)
		out = append(out, o)
	}
	return out, nil
}

// apps exports apps with their role and storage service by name; API keys
// only with secrets.
func (x *exporter) apps(ctx context.Context) ([]object, error) {
	b := x.b
	out := []object{}
	for _, a := range x.appRecs {
		objs, err := b.appT.render(ctx, x.db, []*store.App{a}, shape{relations: []*relation{b.appT.relation("lookup_by_app_id")}})
		if err != nil {
			return nil, err
		}
		o := strip(objs[0], append([]string{"id", "role_id", "storage_service_id", "launch_url"}, auditNames...)...)
		o.set("role", x.idx.name(x.idx.roles, a.RoleID))
		o.set("storage_service", x.idx.name(x.idx.services, a.StorageServiceID))
		if !x.secrets {
			o = strip(o, "api_key")
			x.redacted = append(x.redacted, "app."+a.Name+".api_key")
		}
		lk, _ := o.get("lookup_by_app_id")
		lkOut, err := x.lookupSecrets(ctx, "app."+a.Name, "app_id", a.ID, lookups(lk.([]object)))
		if err != nil {
			return nil, err
		}
		o.set("lookup_by_app_id", lkOut)
		out = append(out, o)
	}
	return out, nil
}

// users exports administrators (admin) or users with their app roles by
// name and lookups; password hashes only with secrets.
func (x *exporter) users(ctx context.Context, section string, admin bool) ([]object, error) {
	b := x.b
	out := []object{}
	for _, u := range x.userRecs {
		if u.IsSysAdmin != admin {
			continue
		}
		objs, err := b.anyUserT.render(ctx, x.db, []*store.User{u}, shape{relations: []*relation{
			b.anyUserT.relation("user_to_app_to_role_by_user_id"), b.anyUserT.relation("lookup_by_user_id")}})
		if err != nil {
			return nil, err
		}
		o := strip(objs[0], append([]string{"id", "default_app_id", "last_login_date", "confirmed"}, auditNames...)...)
		o.set("default_app", x.idx.name(x.idx.apps, u.DefaultAppID))
		maps, _ := o.get("user_to_app_to_role_by_user_id")
		mapOut := []object{}
		for _, m := range maps.([]object) {
			app, _ := m.get("app_id")
			role, _ := m.get("role_id")
			mapOut = append(mapOut, object{{"app", x.idx.name(x.idx.apps, app)}, {"role", x.idx.name(x.idx.roles, role)}})
		}
		o.set("user_to_app_to_role_by_user_id", mapOut)
		lk, _ := o.get("lookup_by_user_id")
		lkOut, err := x.lookupSecrets(ctx, section+"."+u.Email, "user_id", u.ID, lookups(lk.([]object)))
		if err != nil {
			return nil, err
		}
		o.set("lookup_by_user_id", lkOut)
		if x.secrets {
			if u.Password != "" {
				o.set("password_hash", u.Password)
			}
			if u.SecurityAnswer != "" {
				o.set("security_answer_hash", u.SecurityAnswer)
			}
		} else if u.Password != "" {
			x.redacted = append(x.redacted, section+"."+u.Email+".password")
		}
		out = append(out, o)
	}
	return out, nil
}

// limits exports limits with their user, role and service by name.
func (x *exporter) limits(ctx context.Context) ([]object, error) {
	var limits []*store.Limit
	if err := x.db.NewSelect().Model(&limits).Order("id").Scan(ctx); err != nil && !store.IsNoRows(err) {
		return nil, dbError(err)
	}
	out := []object{}
	for _, l := range limits {
		o, err := x.b.limitT.encode(ctx, l)
		if err != nil {
			return nil, err
		}
		o = strip(o, append([]string{"id", "key_text", "user_id", "role_id", "service_id"}, auditNames...)...)
		o.set("user", x.idx.name(x.idx.users, l.UserID))
		o.set("role", x.idx.name(x.idx.roles, l.RoleID))
		o.set("service", x.idx.name(x.idx.services, l.ServiceID))
		out = append(out, o)
	}
	return out, nil
}

// cors exports the CORS entries.
func (x *exporter) cors(ctx context.Context) ([]object, error) {
	return exportAll(ctx, x.db, x.b.corsT, "id")
}

// globalLookups exports the lookups that belong to no app, role or user.
func (x *exporter) globalLookups(ctx context.Context) ([]object, error) {
	globals, err := exportAll(ctx, x.db, x.b.lookupT, "id")
	if err != nil {
		return nil, err
	}
	return x.lookupSecrets(ctx, "global", "", 0, globals)
}

// scripts exports event scripts with their storage service by name.
func (x *exporter) scripts(ctx context.Context) ([]object, error) {
	var scripts []*store.EventScript
	if err := x.db.NewSelect().Model(&scripts).Order("name").Scan(ctx); err != nil && !store.IsNoRows(err) {
		return nil, dbError(err)
	}
	out := []object{}
	for _, s := range scripts {
		o, err := x.b.scriptT.encode(ctx, s)
		if err != nil {
			return nil, err
		}
		o = strip(o, append([]string{"storage_service_id"}, auditNames...)...)
		o.set("storage_service", x.idx.name(x.idx.services, s.StorageServiceID))
		out = append(out, o)
	}
	return out, nil
}

// templates exports the e-mail templates.
func (x *exporter) templates(ctx context.Context) ([]object, error) {
	return exportAll(ctx, x.db, x.b.emailT, "id")
}

// custom exports the custom settings.
func (x *exporter) custom(ctx context.Context) ([]object, error) {
	return exportAll(ctx, x.db, x.b.customT)
}

// exportAll renders every record of t in key order without the given
// members and the audit columns.
func exportAll[T any](ctx context.Context, db bun.IDB, t *table[T], drop ...string) ([]object, error) {
	var recs []*T
	if err := t.selectQ(db, &recs).OrderExpr("?.? ASC", bun.Ident(t.alias), bun.Ident(t.key)).Scan(ctx); err != nil && !store.IsNoRows(err) {
		return nil, dbError(err)
	}
	out := make([]object, 0, len(recs))
	for _, r := range recs {
		o, err := t.encode(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, strip(o, append(drop, auditNames...)...))
	}
	return out, nil
}
