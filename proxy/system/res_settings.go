// The platform settings resources: cors, limit, lookup, custom,
// email_template and event_script, each a table of the system API with its
// codecs and validation.

package system

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/filter"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/script"
)

// verbMaskCodec shows a verb bit mask as an array of verb names and
// accepts an array, a comma-separated string or the integer mask.
func verbMaskCodec() fieldOpt {
	return withCodec(func(v reflect.Value) (any, error) {
		return maskVerbs(int(v.Int())), nil
	}, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			v.SetInt(0)
			return nil
		}
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			var x any
			if err := json.Unmarshal(raw, &x); err != nil {
				return fmt.Errorf("is not valid JSON")
			}
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" && !isDigits(strings.TrimSpace(s)) {
				list = splitList(s)
			} else {
				n, err := toInt(jsonNumber(raw))
				if err != nil || n < 0 || n&^verbMaskAll != 0 {
					return fmt.Errorf("must be an array of HTTP verbs or a verb mask between 0 and %d", verbMaskAll)
				}
				v.SetInt(n)
				return nil
			}
		}
		mask := 0
		for _, verb := range list {
			bit := verbBit(verb)
			if bit == 0 {
				return fmt.Errorf("'%s' is not an HTTP verb", verb)
			}
			mask |= bit
		}
		v.SetInt(int64(mask))
		return nil
	})
}

// jsonNumber decodes raw keeping numbers as json.Number.
func jsonNumber(raw json.RawMessage) any {
	var x any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	_ = dec.Decode(&x)
	return x
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func verbBit(verb string) int {
	for _, vb := range verbBits {
		if strings.EqualFold(strings.TrimSpace(verb), vb.Verb) {
			return vb.Bit
		}
	}
	return 0
}

func maskVerbs(mask int) []string {
	out := []string{}
	for _, vb := range verbBits {
		if mask&vb.Bit != 0 {
			out = append(out, vb.Verb)
		}
	}
	return out
}

func (b *Backend) corsTable() *table[store.CORS] {
	return &table[store.CORS]{
		name: "cors",
		key:  "id",
		fields: append([]*field{
			col("id", filter.KindInteger, readOnly),
			col("path", filter.KindString, readWrite),
			col("description", filter.KindString, readWrite),
			col("origin", filter.KindString, readWrite),
			col("header", filter.KindString, readWrite),
			col("exposed_header", filter.KindString, readWrite),
			col("max_age", filter.KindInteger, readWrite),
			col("method", filter.KindInteger, readWrite, verbMaskCodec()),
			col("supports_credentials", filter.KindBoolean, readWrite),
			col("enabled", filter.KindBoolean, readWrite),
		}, auditFields()...),
		defaults: func(_ *writer, c *store.CORS) { c.Enabled = true },
		validate: func(c *check, r, old *store.CORS, p *problems) error {
			if strings.TrimSpace(r.Path) == "" {
				p.add("path", "The path is required.")
			}
			if strings.TrimSpace(r.Origin) == "" {
				p.add("origin", "The origin is required.")
			}
			text(p, "path", &r.Path, false, 255)
			text(p, "origin", &r.Origin, false, 0)
			text(p, "description", &r.Description, false, 255)
			if strings.HasPrefix(r.Path, "^") {
				if _, err := regexp.Compile("(?i)" + r.Path); err != nil {
					p.add("path", "path is not a valid regular expression: %v", err)
				}
			}
			if r.MaxAge < 0 {
				p.add("max_age", "max_age must not be negative")
			}
			if r.SupportsCredentials && strings.TrimSpace(r.Origin) == "*" {
				p.add("supports_credentials", "credentials cannot be allowed for origin '*': browsers refuse it; list the origins")
			}
			if !p.empty() || old != nil && r.Path == old.Path {
				return nil
			}
			taken, err := exists[store.CORS](c.w, "path = ? AND id <> ?", r.Path, r.ID)
			if err != nil {
				return err
			}
			if taken {
				return conflict("A CORS rule for path '%s' already exists.", r.Path)
			}
			return nil
		},
	}
}

// periodCodec accepts a period name or DreamFactory's index (0..4).
func periodCodec() fieldOpt {
	return withCodec(nil, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			v.SetString("")
			return nil
		}
		s, ok := scalarText(raw)
		if !ok {
			return fmt.Errorf("must be minute, hour, day, 7-day or 30-day")
		}
		s = strings.ToLower(strings.TrimSpace(s))
		if n, err := strconv.Atoi(s); err == nil {
			per, ok := limiter.PeriodFromIndex(n)
			if !ok {
				return fmt.Errorf("index %d is not a period (0 minute … 4 30-day)", n)
			}
			s = string(per)
		}
		v.SetString(s)
		return nil
	})
}

func (b *Backend) limitTable() *table[store.Limit] {
	return &table[store.Limit]{
		name: "limit",
		key:  "id",
		fields: append([]*field{
			col("id", filter.KindInteger, readOnly),
			col("type", filter.KindString, readWrite),
			col("key_text", filter.KindString, readOnly),
			col("rate", filter.KindInteger, readWrite),
			col("period", filter.KindString, readWrite, periodCodec()),
			col("user_id", filter.KindInteger, readWrite),
			col("role_id", filter.KindInteger, readWrite),
			col("service_id", filter.KindInteger, readWrite),
			col("endpoint", filter.KindString, readWrite),
			col("verb", filter.KindString, readWrite),
			col("name", filter.KindString, readWrite),
			col("description", filter.KindString, readWrite),
			col("is_active", filter.KindBoolean, readWrite),
		}, auditFields()...),
		relations: []*relation{
			{name: "user_by_user_id", target: b.model("any_user"), fk: "user_id"},
			{name: "role_by_role_id", target: b.model("role"), fk: "role_id"},
			{name: "service_by_service_id", target: b.model("service"), fk: "service_id"},
			{name: "limit_cache_by_limit_id", target: b.model("limit_cache"), many: true, fk: "limit_id"},
		},
		defaults: func(_ *writer, l *store.Limit) { l.IsActive = true },
		validate: validateLimit,
		afterDelete: func(w *writer, l *store.Limit) error {
			if ls := w.b.opts.LimitStore; ls != nil {
				id := l.ID
				w.after = append(w.after, func(ctx context.Context) {
					if err := ls.ResetLimit(ctx, id); err != nil {
						w.b.log.Warn("clearing the counters of a deleted limit failed", "limit_id", id, "error", err)
					}
				})
			}
			return nil
		},
	}
}

// toLimiter converts a stored limit to the engine's form.
func toLimiter(l *store.Limit) limiter.Limit { return l.Engine() }

func validateLimit(c *check, l, old *store.Limit, p *problems) error {
	w := c.w
	l.Type = strings.TrimSpace(l.Type)
	text(p, "name", &l.Name, false, 255)
	text(p, "description", &l.Description, false, 255)
	l.Verb = strings.ToUpper(strings.TrimSpace(l.Verb))
	ll := toLimiter(l)
	if err := ll.Validate(); err != nil {
		var fe *limiter.FieldError
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if errors.As(e, &fe) {
				p.add(fe.Field, "%s", fe.Message)
			} else {
				p.add("", "%s", e.Error())
			}
		}
	}
	if !p.empty() {
		return nil
	}
	// Fields the type does not use are cleared, as DreamFactory does.
	n := ll.Normalized()
	opt := func(id int64) *int64 {
		if id == 0 {
			return nil
		}
		return &id
	}
	l.UserID, l.RoleID, l.ServiceID, l.Endpoint, l.Verb = opt(n.UserID), opt(n.RoleID), opt(n.ServiceID), n.Endpoint, n.Verb
	if err := reference[store.User](w, p, "user_id", "user", l.UserID); err != nil {
		return err
	}
	if err := reference[store.Role](w, p, "role_id", "role", l.RoleID); err != nil {
		return err
	}
	if l.ServiceID != nil {
		ok, err := exists[store.Service](w, "id = ?", *l.ServiceID)
		if err != nil {
			return err
		}
		if !ok {
			p.add("service_id", "No service exists for %s limit.", l.Name)
		}
	}
	l.KeyText = n.KeyText()
	if !p.empty() || old != nil && l.KeyText == old.KeyText {
		return nil
	}
	taken, err := exists[store.Limit](w, "key_text = ? AND id <> ?", l.KeyText, l.ID)
	if err != nil {
		return err
	}
	if taken {
		return conflict("A limit already exists with those parameters. No records added.")
	}
	return nil
}

// lookupMask is what a private lookup's value reads as.
const lookupMask = "**********"

// lookupValueCodec stores any scalar as text (objects and arrays as JSON)
// and keeps the stored value when a client writes the mask back.
func lookupValueCodec() fieldOpt {
	return withCodec(nil, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			v.SetString("")
			return nil
		}
		s, ok := scalarText(raw)
		if !ok {
			s = string(raw)
		}
		if s == lookupMask {
			return nil
		}
		v.SetString(s)
		return nil
	})
}

// lookupName is what a lookup may be named: a word, optionally dotted
// ({user.id} style names are the platform's, but custom ones may nest).
var lookupName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-]*$`)

// lookupTable is /system/lookup (global lookups, global true) or the
// lookups written under an app, role or user.
func (b *Backend) lookupTable(global bool) *table[store.Lookup] {
	fs := []*field{col("id", filter.KindInteger, readOnly)}
	if !global {
		fs = append(fs,
			col("app_id", filter.KindInteger, readWrite),
			col("role_id", filter.KindInteger, readWrite),
			col("user_id", filter.KindInteger, readWrite))
	}
	fs = append(fs,
		col("name", filter.KindString, readWrite),
		col("value", filter.KindString, readWrite, lookupValueCodec()),
		col("private", filter.KindBoolean, readWrite),
		col("description", filter.KindString, readWrite))
	name := "lookup"
	if !global {
		name = "lookup_child"
	}
	t := &table[store.Lookup]{
		name:   name,
		key:    "id",
		fields: append(fs, auditFields()...),
		output: func(_ context.Context, l *store.Lookup, o *object) {
			if l.Private {
				o.set("value", lookupMask)
			}
		},
		validate: func(c *check, l, old *store.Lookup, p *problems) error { return validateLookup(c, l, old, p, global) },
	}
	if global {
		t.scope = func(q *bun.SelectQuery) *bun.SelectQuery {
			a := bun.Ident(t.alias)
			return q.Where("?.app_id IS NULL AND ?.role_id IS NULL AND ?.user_id IS NULL", a, a, a)
		}
	}
	return t
}

func validateLookup(c *check, l, old *store.Lookup, p *problems, global bool) error {
	w := c.w
	text(p, "name", &l.Name, true, 255)
	if l.Name != "" && !lookupName.MatchString(l.Name) {
		p.add("name", "lookup name '%s' is invalid: use letters, digits, '_', '.' and '-'", l.Name)
	}
	text(p, "description", &l.Description, false, 255)
	owners := 0
	for _, o := range []struct {
		name, what string
		id         *int64
		check      func(*writer, *problems, string, string, *int64) error
	}{
		{"app_id", "app", l.AppID, reference[store.App]},
		{"role_id", "role", l.RoleID, reference[store.Role]},
		{"user_id", "user", l.UserID, reference[store.User]},
	} {
		if o.id == nil {
			continue
		}
		owners++
		if o.name == c.nestedFK {
			continue
		}
		if err := o.check(w, p, o.name, o.what, o.id); err != nil {
			return err
		}
	}
	if owners > 1 {
		p.add("", "a lookup belongs to at most one of an app, a role or a user")
	}
	if !global && owners == 0 && c.nestedFK == "" {
		p.add("", "app_id, role_id or user_id is required")
	}
	if !p.empty() || old != nil && l.Name == old.Name && sameOwner(l, old) {
		return nil
	}
	// Names are unique among the lookups of one owner (or among globals).
	q := w.tx.NewSelect().Model((*store.Lookup)(nil)).Where("name = ? AND id <> ?", l.Name, l.ID)
	for _, o := range []struct {
		col string
		id  *int64
	}{{"app_id", l.AppID}, {"role_id", l.RoleID}, {"user_id", l.UserID}} {
		if o.id == nil || *o.id == 0 {
			q = q.Where("? IS NULL", bun.Ident(o.col))
		} else {
			q = q.Where("? = ?", bun.Ident(o.col), *o.id)
		}
	}
	if c.nestedFK != "" && keyIsZero(l, c.nestedFK) {
		return nil // new parent: it has no lookups yet
	}
	taken, err := q.Exists(w.ctx)
	if err != nil {
		return dbError(err)
	}
	if taken {
		return conflict("Lookup name can not be modified to one that already exists: '%s'.", l.Name)
	}
	return nil
}

func sameOwner(a, b *store.Lookup) bool {
	eq := func(x, y *int64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return eq(a.AppID, b.AppID) && eq(a.RoleID, b.RoleID) && eq(a.UserID, b.UserID)
}

func keyIsZero(l *store.Lookup, fk string) bool {
	var id *int64
	switch fk {
	case "app_id":
		id = l.AppID
	case "role_id":
		id = l.RoleID
	case "user_id":
		id = l.UserID
	}
	return id == nil || *id == 0
}

// customValueCodec stores a custom setting's value: JSON objects and arrays
// as JSON, strings as they are; it returns objects and arrays decoded and
// anything else as a string, as DreamFactory does.
func customValueCodec() fieldOpt {
	return withCodec(func(v reflect.Value) (any, error) {
		return customValue(v.String()), nil
	}, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			v.SetString("")
			return nil
		}
		if s, ok := scalarText(raw); ok {
			v.SetString(s)
			return nil
		}
		var b strings.Builder
		b.Write(raw)
		v.SetString(strings.TrimSpace(b.String()))
		return nil
	})
}

func customValue(s string) any {
	t := strings.TrimSpace(s)
	if (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	return s
}

func (b *Backend) customTable() *table[store.Custom] {
	return &table[store.Custom]{
		name: "custom",
		key:  "name",
		fields: append([]*field{
			col("name", filter.KindString, createOnly),
			col("value", filter.KindString, readWrite, customValueCodec()),
		}, auditFields()...),
		validate: func(c *check, r, old *store.Custom, p *problems) error {
			text(p, "name", &r.Name, true, 255)
			if !p.empty() || old != nil {
				return nil
			}
			taken, err := exists[store.Custom](c.w, "name = ?", r.Name)
			if err != nil {
				return err
			}
			if taken {
				return conflict("A custom setting named '%s' already exists.", r.Name)
			}
			return nil
		},
		http: tableHTTP[store.Custom]{getValue: func(r *store.Custom) any { return customValue(r.Value) }},
	}
}

func (b *Backend) emailTemplateTable() *table[store.EmailTemplate] {
	return &table[store.EmailTemplate]{
		name: "email_template",
		key:  "id",
		fields: append([]*field{
			col("id", filter.KindInteger, readOnly),
			col("name", filter.KindString, readWrite),
			col("description", filter.KindString, readWrite),
			col("to", filter.KindString, readWrite, stringListCodec()),
			col("cc", filter.KindString, readWrite, stringListCodec()),
			col("bcc", filter.KindString, readWrite, stringListCodec()),
			col("subject", filter.KindString, readWrite),
			col("attachment", filter.KindString, readWrite, jsonTextCodec([]any{})),
			col("body_text", filter.KindString, readWrite),
			col("body_html", filter.KindString, readWrite),
			col("from_name", filter.KindString, readWrite),
			col("from_email", filter.KindString, readWrite),
			col("reply_to_name", filter.KindString, readWrite),
			col("reply_to_email", filter.KindString, readWrite),
			col("defaults", filter.KindString, readOnly, jsonTextCodec(nil)),
		}, auditFields()...),
		validate: func(c *check, t, old *store.EmailTemplate, p *problems) error {
			text(p, "name", &t.Name, true, 64)
			text(p, "description", &t.Description, false, 255)
			text(p, "subject", &t.Subject, false, 80)
			text(p, "from_name", &t.FromName, false, 80)
			text(p, "reply_to_name", &t.ReplyToName, false, 80)
			if !strings.Contains(t.FromEmail, "{") {
				email(p, "from_email", &t.FromEmail, false)
			}
			if !strings.Contains(t.ReplyToEmail, "{") {
				email(p, "reply_to_email", &t.ReplyToEmail, false)
			}
			if !p.empty() || old != nil && t.Name == old.Name {
				return nil
			}
			taken, err := exists[store.EmailTemplate](c.w, "name = ? AND id <> ?", t.Name, t.ID)
			if err != nil {
				return err
			}
			if taken {
				return conflict("An e-mail template named '%s' already exists.", t.Name)
			}
			return nil
		},
	}
}

// scriptTypes are the script engines an event script may name (the
// contract's, with DreamFactory's spellings).
var scriptTypes = []string{"lua", "javascript", "v8js", "nodejs", "python", "python3", "php"}

// eventName is what an event script's name (an event) may look like:
// db._table.{table_name}.get.pre_process.
var eventName = regexp.MustCompile(`^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-{}]+)*$`)

func (b *Backend) eventScriptTable() *table[store.EventScript] {
	return &table[store.EventScript]{
		name: "event_script",
		key:  "name",
		fields: append([]*field{
			col("name", filter.KindString, createOnly),
			col("type", filter.KindString, readWrite),
			col("is_active", filter.KindBoolean, readWrite),
			col("content", filter.KindString, readWrite),
			col("config", filter.KindString, readWrite),
			col("storage_service_id", filter.KindInteger, readWrite),
			col("storage_path", filter.KindString, readWrite),
			col("scm_repository", filter.KindString, readWrite),
			col("scm_reference", filter.KindString, readWrite),
			col("allow_event_modification", filter.KindBoolean, readWrite),
		}, auditFields()...),
		relations: []*relation{
			{name: "service_by_storage_service_id", target: b.model("service"), fk: "storage_service_id"},
		},
		defaults: func(_ *writer, s *store.EventScript) { s.IsActive = true },
		validate: func(c *check, s, old *store.EventScript, p *problems) error {
			text(p, "name", &s.Name, true, 255)
			if s.Name != "" && !eventName.MatchString(s.Name) {
				p.add("name", "'%s' is not an event name such as db._table.{table_name}.get.pre_process", s.Name)
			}
			s.Type = strings.ToLower(strings.TrimSpace(s.Type))
			if s.Type == "" {
				p.add("type", "type is required: one of %s", strings.Join(scriptTypes, ", "))
			} else if !contains(scriptTypes, s.Type) {
				p.add("type", "script type '%s' is not one of %s", s.Type, strings.Join(scriptTypes, ", "))
			}
			text(p, "storage_path", &s.StoragePath, false, 255)
			if err := reference[store.Service](c.w, p, "storage_service_id", "service", s.StorageServiceID); err != nil {
				return err
			}
			if strings.TrimSpace(s.Content) == "" && s.StorageServiceID == nil && s.SCMRepository == "" {
				p.add("content", "a script needs content, a storage_service_id and storage_path, or an scm_repository")
			} else if err := script.Check(s.Type, s.Content); err != nil {
				p.add("content", "%v", err)
			}
			if !p.empty() || old != nil {
				return nil
			}
			taken, err := exists[store.EventScript](c.w, "name = ?", s.Name)
			if err != nil {
				return err
			}
			if taken {
				return conflict("A script for event '%s' already exists.", s.Name)
			}
			return nil
		},
		http: tableHTTP[store.EventScript]{upsertByKey: true},
	}
}
