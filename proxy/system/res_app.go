package system

import (
	"reflect"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func (b *Backend) appTable() *table[store.App] {
	return &table[store.App]{
		name: "app",
		key:  "id",
		fields: append([]*field{
			col("id", filter.KindInteger, readOnly),
			col("name", filter.KindString, readWrite),
			col("label", filter.KindString, readWrite),
			col("description", filter.KindString, readWrite),
			col("is_active", filter.KindBoolean, readWrite),
			col("api_key", filter.KindString, readWrite),
			col("type", filter.KindInteger, readWrite),
			col("path", filter.KindString, readWrite),
			col("url", filter.KindString, readWrite),
			col("storage_service_id", filter.KindInteger, readWrite),
			col("storage_container", filter.KindString, readWrite),
			col("requires_fullscreen", filter.KindBoolean, readWrite),
			col("allow_fullscreen_toggle", filter.KindBoolean, readWrite),
			col("toggle_location", filter.KindString, readWrite),
			col("role_id", filter.KindInteger, readWrite),
			computed("launch_url", func(rec reflect.Value) any {
				return b.deps.Registry.Snapshot().LaunchURL(rec.Addr().Interface().(*store.App))
			}),
		}, auditFields()...),
		relations: []*relation{
			{name: "role_by_role_id", target: b.model("role"), fk: "role_id"},
			{name: "service_by_storage_service_id", target: b.model("service"), fk: "storage_service_id"},
			{name: "lookup_by_app_id", target: b.model("lookup_child"), many: true, fk: "app_id", writable: true},
			{name: "user_to_app_to_role_by_app_id", target: b.model("user_to_app_to_role"), many: true, fk: "app_id"},
		},
		defaults: func(_ *writer, a *store.App) {
			a.IsActive, a.AllowFullscreenToggle, a.ToggleLocation = true, true, "top"
		},
		validate:     validateApp,
		beforeDelete: beforeDeleteApp,
		// The spec returns an app's api_key on create as well as in lists.
		created: func(a *store.App) object { return object{{"api_key", a.APIKey}} },
	}
}

func validateApp(c *check, a, old *store.App, p *problems) error {
	w := c.w
	text(p, "name", &a.Name, true, 64)
	text(p, "label", &a.Label, false, 255)
	text(p, "description", &a.Description, false, 255)
	text(p, "path", &a.Path, false, 255)
	text(p, "storage_container", &a.StorageContainer, false, 255)
	text(p, "toggle_location", &a.ToggleLocation, false, 64)
	if a.Label == "" {
		a.Label = a.Name
	}
	switch a.ToggleLocation {
	case "", "top", "bottom", "left", "right":
	default:
		p.add("toggle_location", "toggle_location must be top, bottom, left or right")
	}
	if a.Type < store.AppTypeNone || a.Type > store.AppTypeGit {
		p.add("type", "type must be 0 (no storage), 1 (storage service), 2 (URL), 3 (path) or 4 (git)")
	}
	if a.Type == store.AppTypeURL && strings.TrimSpace(a.URL) == "" {
		p.add("url", "an app of type 2 (URL) needs a url")
	}
	keyGiven := c.in.has("api_key") && !c.in.isNull("api_key")
	switch {
	case !c.create && w.flag("regenerate"):
		a.APIKey = store.NewAPIKey()
	case keyGiven && (old == nil || a.APIKey != old.APIKey):
		a.APIKey = strings.ToLower(strings.TrimSpace(a.APIKey))
		if err := store.ValidateAPIKey(a.APIKey); err != nil {
			p.add("api_key", "%s", err.Error())
		}
	case old != nil:
		a.APIKey = old.APIKey
	default:
		a.APIKey = store.NewAPIKey()
	}
	if err := reference[store.Role](w, p, "role_id", "role", a.RoleID); err != nil {
		return err
	}
	if err := reference[store.Service](w, p, "storage_service_id", "service", a.StorageServiceID); err != nil {
		return err
	}
	if old != nil && old.Name == "admin" && a.Name != "admin" {
		p.add("name", "the admin app cannot be renamed: administrators sign in with its API key")
	}
	if !p.empty() {
		return nil
	}
	if old == nil || a.Name != old.Name {
		taken, err := exists[store.App](w, "name = ? AND id <> ?", a.Name, a.ID)
		if err != nil {
			return err
		}
		if taken {
			return conflict("An app named '%s' already exists.", a.Name)
		}
	}
	if old == nil || a.APIKey != old.APIKey {
		taken, err := exists[store.App](w, "api_key = ? AND id <> ?", a.APIKey, a.ID)
		if err != nil {
			return err
		}
		if taken {
			return conflict("The API key is already used by another app.")
		}
	}
	return nil
}

func beforeDeleteApp(_ *writer, a *store.App) error {
	if a.Name == "admin" {
		return apierr.BadRequest("The admin app cannot be deleted: administrators sign in with its API key.")
	}
	return nil
}
