package system

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// serviceName is what a service name may be: lowercase letters, digits and
// underscores (it is a URL segment matched case-sensitively).
var serviceName = regexp.MustCompile(`^[a-z0-9_]+$`)

// configCodec shows a service's configuration as a JSON object and merges
// a client's object into it key by key (PUT and PATCH alike), as
// DreamFactory's config models fill only the keys they are given.
func configCodec() fieldOpt {
	return withCodec(func(v reflect.Value) (any, error) {
		s := strings.TrimSpace(v.String())
		if s == "" {
			return json.RawMessage("{}"), nil
		}
		return json.RawMessage(s), nil
	}, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			v.SetString("{}")
			return nil
		}
		var in map[string]json.RawMessage
		if err := json.Unmarshal(raw, &in); err != nil || in == nil {
			return fmt.Errorf("must be a JSON object")
		}
		cur := map[string]json.RawMessage{}
		if s := strings.TrimSpace(v.String()); s != "" {
			_ = json.Unmarshal([]byte(s), &cur)
		}
		for k, val := range in {
			var b bytes.Buffer
			if err := json.Compact(&b, val); err != nil {
				return fmt.Errorf("key %s is not valid JSON", k)
			}
			cur[k] = keepMasked(k, json.RawMessage(b.Bytes()), cur[k])
		}
		out, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		v.SetString(string(out))
		return nil
	})
}

func (b *Backend) serviceTable() *table[store.Service] {
	return &table[store.Service]{
		name: "service",
		key:  "id",
		fields: append([]*field{
			col("id", filter.KindInteger, readOnly),
			col("name", filter.KindString, readWrite),
			col("label", filter.KindString, readWrite),
			col("description", filter.KindString, readWrite),
			col("is_active", filter.KindBoolean, readWrite),
			col("type", filter.KindString, readWrite),
			col("mutable", filter.KindBoolean, readOnly),
			col("deletable", filter.KindBoolean, readOnly),
			col("config", filter.KindString, readWrite, configCodec()),
		}, auditFields()...),
		relations: []*relation{
			{name: "role_service_access_by_service_id", target: b.model("role_service_access"), many: true, fk: "service_id"},
			{name: "limits_by_service_id", target: b.model("limit"), many: true, fk: "service_id"},
		},
		defaults: func(_ *writer, s *store.Service) {
			s.IsActive, s.Mutable, s.Deletable, s.Config = true, true, true, "{}"
		},
		output: func(ctx context.Context, s *store.Service, o *object) {
			o.set("mutable", s.Mutable && !builtinLocked(s))
			o.set("deletable", s.Deletable && !builtinLocked(s))
			if !revealSecrets(ctx) {
				if v, ok := o.get("config"); ok {
					if raw, ok := v.(json.RawMessage); ok {
						o.set("config", maskConfig(raw))
					}
				}
			}
		},
		validate:     b.validateService,
		beforeDelete: b.beforeDeleteService,
		afterDelete:  b.afterDeleteService,
	}
}

func (b *Backend) validateService(c *check, s, old *store.Service, p *problems) error {
	text(p, "name", &s.Name, true, 64)
	if s.Name != "" && !serviceName.MatchString(s.Name) {
		p.add("name", "service name '%s' is invalid: use lowercase letters, digits and '_' only", s.Name)
	}
	text(p, "label", &s.Label, true, 255)
	text(p, "description", &s.Description, false, 255)
	text(p, "type", &s.Type, true, 64)
	if old != nil && (!old.Mutable || builtinLocked(old)) {
		if s.Name != old.Name {
			p.add("name", "built-in service '%s' cannot be renamed", old.Name)
		}
		if s.Type != old.Type {
			p.add("type", "the type of built-in service '%s' cannot be changed", old.Name)
		}
	}
	if s.Type == "system" && !s.IsActive {
		p.add("is_active", "the system service cannot be deactivated")
	}
	typeChanged := old == nil || s.Type != old.Type
	configChanged := old == nil || s.Config != old.Config || typeChanged
	if s.Type != "" {
		typ, implemented := b.deps.Registry.Type(s.Type)
		switch {
		case implemented:
			if configChanged {
				p.addErr("config", typ.ValidateConfig(json.RawMessage(s.Config)))
			}
			if typ.Info().Singleton && typeChanged {
				taken, err := exists[store.Service](c.w, "type = ? AND id <> ?", s.Type, s.ID)
				if err != nil {
					return err
				}
				if taken {
					p.add("type", "only one service of type '%s' may exist", s.Type)
				}
			}
		case typeChanged && b.listedType(s.Type):
			if p.empty() {
				return apierr.NotImplemented("Service type '%s' is not implemented by this build.", s.Type)
			}
			p.add("type", "service type '%s' is not implemented by this build", s.Type)
		case typeChanged:
			p.add("type", "Service type '%s' not found.", s.Type)
		}
	}
	if !p.empty() || (old != nil && s.Name == old.Name) {
		return nil
	}
	taken, err := exists[store.Service](c.w, "name = ? AND id <> ?", s.Name, s.ID)
	if err != nil {
		return err
	}
	if taken {
		return conflict("A service named '%s' already exists.", s.Name)
	}
	return nil
}

// builtinLocked reports whether s is one of the built-in services that may
// be neither renamed nor deleted (system, user, api_docs), whatever its
// mutable and deletable columns say.
func builtinLocked(s *store.Service) bool {
	for _, b := range store.BuiltinServices {
		if b.Name == s.Name && b.Type == s.Type {
			return !b.Deletable || !b.Mutable
		}
	}
	return false
}

// listedType reports whether name is a type the build lists (implemented
// or not).
func (b *Backend) listedType(name string) bool {
	for _, info := range b.deps.Registry.Types() {
		if info.Name == name {
			return true
		}
	}
	return false
}

func (b *Backend) beforeDeleteService(_ *writer, s *store.Service) error {
	if !s.Deletable || builtinLocked(s) {
		return apierr.BadRequest("Service '%s' is a built-in service and cannot be deleted.", s.Name)
	}
	return nil
}

// afterDeleteService clears the references that have no foreign key (the
// access entries, limits and contracts of the service cascade).
func (b *Backend) afterDeleteService(w *writer, s *store.Service) error {
	for _, m := range []any{(*store.App)(nil), (*store.EventScript)(nil)} {
		_, err := w.tx.NewUpdate().Model(m).Set("storage_service_id = NULL").Where("storage_service_id = ?", s.ID).Exec(w.ctx)
		if err != nil {
			return dbError(err)
		}
	}
	return nil
}
