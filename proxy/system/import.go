package system

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// importLog is what an import reports: notices (created, updated, skipped
// because present) and warnings (left out, or imported without a secret).
type importLog struct {
	Notice  []string `json:"notice"`
	Warning []string `json:"warning"`
	created int
}

func (l *importLog) notice(format string, args ...any) {
	l.Notice = append(l.Notice, fmt.Sprintf(format, args...))
}

func (l *importLog) warn(format string, args ...any) {
	l.Warning = append(l.Warning, fmt.Sprintf(format, args...))
}

// importer writes one package in one transaction.
type importer struct {
	b         *Backend
	w         *writer
	log       *importLog
	overwrite bool
}

// importPackage imports a package document in one transaction: records
// whose name (e-mail, path) already exists are skipped, or updated with
// overwrite=true; a record that fails validation fails the whole import.
// 201 when something was created, 200 otherwise.
func (b *Backend) importPackage(w http.ResponseWriter, r *http.Request, body map[string]json.RawMessage, p *params) error {
	ctx := r.Context()
	if raw, ok := body["manifest"]; ok {
		var man struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(raw, &man); err != nil {
			return apierr.BadRequest("Cannot read package manifest: %v", err)
		}
		if man.Version != "" && man.Version != packageVersion {
			return apierr.BadRequest("Cannot read package manifest: version %q is not supported (expected %q).", man.Version, packageVersion)
		}
	}
	var sys map[string]json.RawMessage
	if err := json.Unmarshal(body["system"], &sys); err != nil || sys == nil {
		return apierr.BadRequest("Cannot read package manifest: 'system' must be an object of sections (%s).", strings.Join(packageSections, ", "))
	}
	for k := range sys {
		if !contains(packageSections, k) {
			return apierr.BadRequest("Cannot read package manifest: unknown section '%s'; sections are %s.", k, strings.Join(packageSections, ", "))
		}
	}
	sections := map[string][]fields{}
	for _, name := range packageSections {
		raw, ok := sys[name]
		if !ok || isNullJSON(raw) {
			continue
		}
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return apierr.BadRequest("Cannot read package manifest: section '%s' must be an array of records.", name)
		}
		recs, err := decodeRecords(list)
		if err != nil {
			return apierr.BadRequest("Cannot read package manifest: section '%s': %s", name, apierr.As(err).Message)
		}
		sections[name] = recs
	}
	log := &importLog{Notice: []string{}, Warning: []string{}}
	err := b.inTx(ctx, func(wr *writer) error {
		im := &importer{b: b, w: wr, log: log, overwrite: p.flag("overwrite")}
		steps := []struct {
			name string
			fn   func(fields) error
		}{
			{"service", im.service}, {"role", im.role}, {"app", im.app},
			{"admin", func(f fields) error { return im.user(f, true) }},
			{"user", func(f fields) error { return im.user(f, false) }},
			{"limit", im.limit}, {"cors", im.cors}, {"lookup", im.lookup},
			{"event_script", im.eventScript}, {"email_template", im.emailTemplate}, {"custom", im.custom},
			{"schema_contract", im.schemaContract},
		}
		for _, st := range steps {
			for i, rec := range sections[st.name] {
				if err := st.fn(rec); err != nil {
					return prefixed(err, fmt.Sprintf("Import failed at %s %d (%s): ", st.name, i, describe(rec)))
				}
			}
		}
		return nil
	})
	if err != nil {
		e := apierr.As(err)
		ctxObj := object{{"log", log}}
		if e.Context != nil {
			ctxObj.set("detail", e.Context)
		}
		return e.WithContext(ctxObj)
	}
	b.reload(ctx)
	status := http.StatusOK
	if log.created > 0 {
		status = http.StatusCreated
	}
	return apierr.WriteJSON(w, status, object{{"success", true}, {"log", log}})
}

// prefixed returns err as an API error whose message starts with prefix.
func prefixed(err error, prefix string) error {
	c := *apierr.As(err)
	c.Message = prefix + c.Message
	c.Err = err
	return &c
}

// describe names a record of a package for messages.
func describe(f fields) string {
	for _, k := range []string{"email", "name", "path", "service"} {
		if s := f.stringOr(k); s != "" {
			return s
		}
	}
	return "unnamed"
}

// pick returns the members of f named in keys.
func pick(f fields, keys ...string) fields {
	out := fields{}
	for _, k := range keys {
		if v, ok := f[k]; ok {
			out[k] = v
		}
	}
	return out
}

func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// findID returns the id of the record of model M whose column equals
// value, or 0.
func findID[M any](w *writer, where string, args ...any) (int64, error) {
	var id int64
	err := w.tx.NewSelect().Model((*M)(nil)).Column("id").Where(where, args...).Limit(1).Scan(w.ctx, &id)
	if store.IsNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, dbError(err)
	}
	return id, nil
}

// ref resolves the name held in member src of f (a service, role, app or
// user reference) into an id stored in member dst; a name that resolves to
// nothing is a warning and, when required, skips the record (ok false).
func (im *importer) ref(f fields, src, dst string, resolve func(string) (int64, error), what, owner string) (ok bool, err error) {
	name := f.stringOr(src)
	delete(f, src)
	if name == "" {
		f[dst] = json.RawMessage("null")
		return true, nil
	}
	id, err := resolve(name)
	if err != nil {
		return false, err
	}
	if id == 0 {
		im.log.warn("%s: %s '%s' does not exist here; left out", owner, what, name)
		f[dst] = json.RawMessage("null")
		return false, nil
	}
	f[dst] = rawJSON(id)
	return true, nil
}

func (im *importer) serviceID(name string) (int64, error) {
	return findID[store.Service](im.w, "name = ?", name)
}
func (im *importer) roleID(name string) (int64, error) {
	return findID[store.Role](im.w, "name = ?", name)
}
func (im *importer) appID(name string) (int64, error) {
	return findID[store.App](im.w, "name = ?", name)
}
func (im *importer) userID(email string) (int64, error) {
	return findID[store.User](im.w, "LOWER(email) = LOWER(?)", email)
}

// upsert creates rec with t, or handles an existing record with key
// (skip, or update with overwrite; prepare runs before an update).
func upsert[T any](im *importer, t *table[T], label string, existing any, rec fields, prepare func(key any) error) (key any, err error) {
	if existing != nil {
		if !im.overwrite {
			im.log.notice("%s '%s' already exists; skipped", label, describe(rec))
			return nil, nil
		}
		if prepare != nil {
			if err := prepare(existing); err != nil {
				return nil, err
			}
		}
		if _, err := t.update(im.w, existing, rec); err != nil {
			return nil, err
		}
		im.log.notice("%s '%s' updated", label, describe(rec))
		return existing, nil
	}
	r, err := t.create(im.w, rec)
	if err != nil {
		return nil, err
	}
	im.log.created++
	im.log.notice("%s '%s' created", label, describe(rec))
	return t.keyOf(r), nil
}

// existingKey returns the key of the record of t whose column equals
// value (within t's scope), or nil.
func existingKey[T any](im *importer, t *table[T], where string, args ...any) (any, error) {
	var recs []*T
	q := t.selectQ(im.w.tx, &recs).Where(where, args...).Limit(1)
	if err := q.Scan(im.w.ctx); err != nil && !store.IsNoRows(err) {
		return nil, dbError(err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return t.keyOf(recs[0]), nil
}

func (im *importer) service(f fields) error {
	name, typ := f.stringOr("name"), f.stringOr("type")
	rec := pick(f, "name", "label", "description", "is_active", "type", "config")
	existing, err := existingKey(im, im.b.serviceT, "name = ?", name)
	if err != nil {
		return err
	}
	if _, ok := im.b.deps.Registry.Type(typ); !ok && existing == nil {
		im.log.warn("service '%s' left out: service type '%s' is not implemented by this build", name, typ)
		return nil
	}
	_, err = upsert(im, im.b.serviceT, "service", existing, rec, nil)
	return err
}

// lookupsOf converts a package's lookups for a nested write.
func lookupsOf(f fields, member string) []fields {
	var list []fields
	if raw, ok := f[member]; ok {
		var items []map[string]json.RawMessage
		_ = json.Unmarshal(raw, &items)
		for _, it := range items {
			list = append(list, pick(fields(it), "name", "value", "private", "description"))
		}
	}
	return list
}

// clearChildren deletes the nested records of an existing parent before
// an overwrite rewrites them.
func (im *importer) clearChildren(model any, col string, key any) error {
	_, err := im.w.tx.NewDelete().Model(model).Where("? = ?", bun.Ident(col), key).Exec(im.w.ctx)
	return dbError(err)
}

func (im *importer) role(f fields) error {
	name := f.stringOr("name")
	rec := pick(f, "name", "description", "is_active")
	var accesses []fields
	if raw, ok := f["role_service_access_by_role_id"]; ok {
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return apierr.BadRequest("role_service_access_by_role_id must be an array of records")
		}
		for _, it := range items {
			a := pick(fields(it), "service", "component", "verb_mask", "requestor_mask", "filters", "filter_op", "fields")
			ok, err := im.ref(a, "service", "service_id", im.serviceID, "service", "role '"+name+"' access")
			if err != nil {
				return err
			}
			if ok {
				accesses = append(accesses, a)
			}
		}
	}
	rec["role_service_access_by_role_id"] = rawJSON(accesses)
	rec["lookup_by_role_id"] = rawJSON(lookupsOf(f, "lookup_by_role_id"))
	existing, err := existingKey(im, im.b.roleT, "name = ?", name)
	if err != nil {
		return err
	}
	_, err = upsert(im, im.b.roleT, "role", existing, rec, func(key any) error {
		if err := im.clearChildren((*store.RoleServiceAccess)(nil), "role_id", key); err != nil {
			return err
		}
		return im.clearChildren((*store.Lookup)(nil), "role_id", key)
	})
	return err
}

func (im *importer) app(f fields) error {
	name := f.stringOr("name")
	rec := pick(f, "name", "label", "description", "is_active", "type", "path", "url", "storage_container",
		"requires_fullscreen", "allow_fullscreen_toggle", "toggle_location", "role", "storage_service", "api_key")
	if _, err := im.ref(rec, "role", "role_id", im.roleID, "role", "app '"+name+"'"); err != nil {
		return err
	}
	if _, err := im.ref(rec, "storage_service", "storage_service_id", im.serviceID, "service", "app '"+name+"'"); err != nil {
		return err
	}
	rec["lookup_by_app_id"] = rawJSON(lookupsOf(f, "lookup_by_app_id"))
	existing, err := existingKey(im, im.b.appT, "name = ?", name)
	if err != nil {
		return err
	}
	if key := rec.stringOr("api_key"); key != "" {
		used, err := findID[store.App](im.w, "api_key = ? AND name <> ?", strings.ToLower(key), name)
		if err != nil {
			return err
		}
		if used != 0 {
			delete(rec, "api_key")
			im.log.warn("app '%s': its API key is used by another app here; a new key was generated", name)
		}
	} else if existing == nil {
		im.log.warn("app '%s': the package holds no API key; a new key was generated", name)
	}
	_, err = upsert(im, im.b.appT, "app", existing, rec, func(key any) error {
		return im.clearChildren((*store.Lookup)(nil), "app_id", key)
	})
	return err
}

// isBcrypt reports whether h looks like a bcrypt hash.
func isBcrypt(h string) bool {
	return len(h) == 60 && (strings.HasPrefix(h, "$2a$") || strings.HasPrefix(h, "$2b$") || strings.HasPrefix(h, "$2y$"))
}

func (im *importer) user(f fields, admin bool) error {
	t, label := im.b.userT, "user"
	if admin {
		t, label = im.b.adminT, "admin"
	}
	email := f.stringOr("email")
	rec := pick(f, "name", "username", "first_name", "last_name", "email", "is_active", "phone",
		"security_question", "default_app", "password")
	if _, err := im.ref(rec, "default_app", "default_app_id", im.appID, "app", label+" '"+email+"'"); err != nil {
		return err
	}
	var maps []fields
	if raw, ok := f["user_to_app_to_role_by_user_id"]; ok {
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return apierr.BadRequest("user_to_app_to_role_by_user_id must be an array of records")
		}
		for _, it := range items {
			m := pick(fields(it), "app", "role")
			okApp, err := im.ref(m, "app", "app_id", im.appID, "app", label+" '"+email+"' app role")
			if err != nil {
				return err
			}
			okRole, err := im.ref(m, "role", "role_id", im.roleID, "role", label+" '"+email+"' app role")
			if err != nil {
				return err
			}
			if okApp && okRole {
				maps = append(maps, m)
			}
		}
	}
	rec["user_to_app_to_role_by_user_id"] = rawJSON(maps)
	rec["lookup_by_user_id"] = rawJSON(lookupsOf(f, "lookup_by_user_id"))
	existingAny, err := existingKey(im, im.b.anyUserT, "LOWER(email) = LOWER(?)", email)
	if err != nil {
		return err
	}
	if existingAny != nil {
		if own, err := existingKey(im, t, "LOWER(email) = LOWER(?)", email); err != nil {
			return err
		} else if own == nil {
			im.log.warn("%s '%s' left out: a user with that e-mail address exists here on the other side of admin/user", label, email)
			return nil
		}
	}
	key, err := upsert(im, t, label, existingAny, rec, func(key any) error {
		if err := im.clearChildren((*store.UserAppRole)(nil), "user_id", key); err != nil {
			return err
		}
		return im.clearChildren((*store.Lookup)(nil), "user_id", key)
	})
	if err != nil || key == nil {
		return err
	}
	set := map[string]string{}
	if h := f.stringOr("password_hash"); isBcrypt(h) {
		set["password"] = h
	} else if !rec.has("password") && (existingAny == nil) {
		im.log.warn("%s '%s' was imported without a password: set one, or have the user reset it", label, email)
	}
	if h := f.stringOr("security_answer_hash"); isBcrypt(h) {
		set["security_answer"] = h
	}
	for col, v := range set {
		if _, err := im.w.tx.NewUpdate().Model((*store.User)(nil)).Set("? = ?", bun.Ident(col), v).Where("id = ?", key).Exec(im.w.ctx); err != nil {
			return dbError(err)
		}
	}
	return nil
}

func (im *importer) limit(f fields) error {
	name := f.stringOr("name")
	rec := pick(f, "name", "description", "type", "rate", "period", "endpoint", "verb", "is_active", "user", "role", "service")
	owner := "limit '" + name + "'"
	for _, r := range []struct {
		src, dst, what string
		resolve        func(string) (int64, error)
	}{{"user", "user_id", "user", im.userID}, {"role", "role_id", "role", im.roleID}, {"service", "service_id", "service", im.serviceID}} {
		given := rec.stringOr(r.src) != ""
		ok, err := im.ref(rec, r.src, r.dst, r.resolve, r.what, owner)
		if err != nil {
			return err
		}
		if given && !ok {
			im.log.warn("%s left out: it needs the missing %s", owner, r.what)
			return nil
		}
	}
	existing, err := existingKey(im, im.b.limitT, "name = ?", name)
	if err != nil {
		return err
	}
	_, err = upsert(im, im.b.limitT, "limit", existing, rec, nil)
	if ae, ok := err.(*apierr.Error); ok && ae.Status == http.StatusConflict {
		im.log.notice("limit '%s': a limit with the same parameters already exists; skipped", name)
		return nil
	}
	return err
}

func (im *importer) cors(f fields) error {
	path := f.stringOr("path")
	rec := pick(f, "path", "description", "origin", "header", "exposed_header", "max_age", "method", "supports_credentials", "enabled")
	existing, err := existingKey(im, im.b.corsT, "path = ?", path)
	if err != nil {
		return err
	}
	_, err = upsert(im, im.b.corsT, "CORS rule", existing, rec, nil)
	return err
}

func (im *importer) lookup(f fields) error {
	name := f.stringOr("name")
	rec := pick(f, "name", "value", "private", "description")
	if !rec.has("value") && f.stringOr("private") == "true" {
		im.log.warn("lookup '%s': its private value was not exported; imported empty", name)
	}
	existing, err := existingKey(im, im.b.lookupT, "name = ?", name)
	if err != nil {
		return err
	}
	_, err = upsert(im, im.b.lookupT, "lookup", existing, rec, nil)
	return err
}

func (im *importer) eventScript(f fields) error {
	name := f.stringOr("name")
	rec := pick(f, "name", "type", "is_active", "content", "config", "storage_service", "storage_path",
		"scm_repository", "scm_reference", "allow_event_modification")
	if _, err := im.ref(rec, "storage_service", "storage_service_id", im.serviceID, "service", "event script '"+name+"'"); err != nil {
		return err
	}
	existing, err := existingKey(im, im.b.scriptT, "name = ?", name)
	if err != nil {
		return err
	}
	_, err = upsert(im, im.b.scriptT, "event script", existing, rec, nil)
	return err
}

func (im *importer) emailTemplate(f fields) error {
	rec := pick(f, "name", "description", "to", "cc", "bcc", "subject", "attachment", "body_text", "body_html",
		"from_name", "from_email", "reply_to_name", "reply_to_email")
	existing, err := existingKey(im, im.b.emailT, "name = ?", f.stringOr("name"))
	if err != nil {
		return err
	}
	_, err = upsert(im, im.b.emailT, "e-mail template", existing, rec, nil)
	return err
}

func (im *importer) custom(f fields) error {
	rec := pick(f, "name", "value")
	existing, err := existingKey(im, im.b.customT, "name = ?", f.stringOr("name"))
	if err != nil {
		return err
	}
	_, err = upsert(im, im.b.customT, "custom setting", existing, rec, nil)
	return err
}
