package system

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestAppResource(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		role := e.createID("role", map[string]any{"name": "reader"})
		r := e.must(http.StatusCreated, http.MethodPost, "app?fields=*&related=role_by_role_id", map[string]any{"resource": []any{
			map[string]any{"name": "todo", "description": "Todo app", "role_id": role, "is_active": false, "type": 0},
		}})
		app := r.list(t)[0]
		key, _ := app["api_key"].(string)
		if !hex64.MatchString(key) {
			t.Fatalf("api_key %q is not 64 hex characters", key)
		}
		if app["is_active"] != false {
			t.Errorf("is_active false was not kept: %v", app["is_active"])
		}
		if rel, _ := app["role_by_role_id"].(map[string]any); rel == nil || rel["name"] != "reader" {
			t.Errorf("role_by_role_id = %v", app["role_by_role_id"])
		}
		id := num(t, app["id"])

		t.Run("a plain create returns the id and the api_key", func(t *testing.T) {
			for _, body := range []any{
				map[string]any{"resource": []any{map[string]any{"name": "keyed1"}, map[string]any{"name": "keyed2"}}},
				map[string]any{"name": "keyed3"},
			} {
				for _, got := range e.must(http.StatusCreated, http.MethodPost, "app", body).list(t) {
					if len(got) != 2 || num(t, got["id"]) == 0 || !hex64.MatchString(fmt.Sprint(got["api_key"])) {
						t.Errorf("create answered %v, want id and api_key", got)
						continue
					}
					if a := e.reg.Snapshot().AppByKey(got["api_key"].(string)); a == nil || a.ID != num(t, got["id"]) {
						t.Errorf("api_key %v does not name app %v", got["api_key"], got["id"])
					}
				}
			}
		})

		t.Run("regenerate makes a new key", func(t *testing.T) {
			got := e.must(http.StatusOK, http.MethodPatch, "app/"+itoa(id)+"?regenerate=true", map[string]any{}).obj(t)
			if got["api_key"] == key || !hex64.MatchString(got["api_key"].(string)) {
				t.Fatalf("key not regenerated: %v", got["api_key"])
			}
			if snap := e.reg.Snapshot(); snap.AppByKey(got["api_key"].(string)) == nil {
				t.Errorf("the registry does not know the new key")
			}
		})

		t.Run("a given key must be 64 hex characters and unique", func(t *testing.T) {
			e.must(http.StatusBadRequest, http.MethodPatch, "app/"+itoa(id), map[string]any{"api_key": "short"})
			admin := e.reg.Snapshot().AppByKey(adminKey(e))
			if admin == nil {
				t.Fatal("no admin app")
			}
			e.must(http.StatusConflict, http.MethodPatch, "app/"+itoa(id), map[string]any{"api_key": admin.APIKey})
			k := strings.Repeat("ab", 32)
			got := e.must(http.StatusOK, http.MethodPatch, "app/"+itoa(id), map[string]any{"api_key": strings.ToUpper(k)}).obj(t)
			if got["api_key"] != k {
				t.Errorf("api_key = %v", got["api_key"])
			}
		})

		t.Run("references must exist", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPost, "app", map[string]any{"name": "x", "role_id": 9999, "storage_service_id": 9999, "type": 7})
			for _, want := range []string{"role 9999 does not exist", "service 9999 does not exist", "type must be"} {
				if !strings.Contains(r.errMsg(t), want) {
					t.Errorf("%q lacks %q", r.errMsg(t), want)
				}
			}
		})

		t.Run("the admin app cannot be deleted", func(t *testing.T) {
			admin := e.reg.Snapshot().AppByKey(adminKey(e))
			e.must(http.StatusBadRequest, http.MethodDelete, "app/"+itoa(admin.ID), nil)
		})

		t.Run("deleting a role leaves its apps without a default role", func(t *testing.T) {
			e.must(http.StatusOK, http.MethodDelete, "role/"+itoa(role), nil)
			got := e.must(http.StatusOK, http.MethodGet, "app/"+itoa(id), nil).obj(t)
			if got["role_id"] != nil {
				t.Errorf("role_id = %v", got["role_id"])
			}
		})
	})
}

func adminKey(e *env) string {
	for _, a := range e.reg.Snapshot().Apps {
		if a.Name == "admin" {
			return a.APIKey
		}
	}
	return ""
}

func TestAdminAndUserResources(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		uid := e.createID("user", map[string]any{"email": "jane@example.com", "first_name": "Jane", "last_name": "Doe", "password": "s3cret-pass"})

		t.Run("users and admins are kept apart", func(t *testing.T) {
			users := e.must(http.StatusOK, http.MethodGet, "user", nil).list(t)
			if len(users) != 1 || users[0]["email"] != "jane@example.com" || users[0]["name"] != "Jane Doe" {
				t.Fatalf("users = %v", users)
			}
			admins := e.must(http.StatusOK, http.MethodGet, "admin", nil).list(t)
			if len(admins) != 1 || admins[0]["email"] != testAdminEmail {
				t.Fatalf("admins = %v", admins)
			}
			e.must(http.StatusNotFound, http.MethodGet, "admin/"+itoa(uid), nil)
			e.must(http.StatusNotFound, http.MethodGet, "user/"+itoa(e.adminID), nil)
		})

		t.Run("hidden fields are never returned", func(t *testing.T) {
			got := e.must(http.StatusOK, http.MethodGet, "user/"+itoa(uid), nil).obj(t)
			for _, k := range []string{"password", "security_answer", "confirm_code", "is_sys_admin", "tokens_valid_after"} {
				if _, ok := got[k]; ok {
					t.Errorf("%s returned: %v", k, got)
				}
			}
			e.must(http.StatusBadRequest, http.MethodGet, "user?fields=password", nil)
			e.must(http.StatusBadRequest, http.MethodGet, "user?filter=password%20like%20'%25'", nil)
			var u store.User
			if err := e.st.DB.NewSelect().Model(&u).Where("id = ?", uid).Scan(t.Context()); err != nil {
				t.Fatal(err)
			}
			if !store.CheckPassword(u.Password, "s3cret-pass") {
				t.Errorf("password not stored as a verifiable hash")
			}
		})

		t.Run("passwords need 8 characters", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPost, "user", map[string]any{"email": "bob@example.com", "name": "Bob", "password": "short"})
			if !strings.Contains(r.errMsg(t), "at least 8") {
				t.Errorf("message %q", r.errMsg(t))
			}
		})

		t.Run("a password change revokes sessions", func(t *testing.T) {
			e.must(http.StatusOK, http.MethodPatch, "user/"+itoa(uid), map[string]any{"password": "another-pass"})
			var u store.User
			if err := e.st.DB.NewSelect().Model(&u).Where("id = ?", uid).Scan(t.Context()); err != nil {
				t.Fatal(err)
			}
			if u.TokensValidAfter == nil || !store.CheckPassword(u.Password, "another-pass") {
				t.Errorf("tokens_valid_after %v, password changed %v", u.TokensValidAfter, store.CheckPassword(u.Password, "another-pass"))
			}
		})

		t.Run("e-mail addresses are unique and valid", func(t *testing.T) {
			e.must(http.StatusConflict, http.MethodPost, "admin", map[string]any{"email": "JANE@example.com", "name": "J"})
			r := e.must(http.StatusBadRequest, http.MethodPost, "user", map[string]any{"email": "not-an-address"})
			for _, want := range []string{"not a valid e-mail address", "name is required"} {
				if !strings.Contains(r.errMsg(t), want) {
					t.Errorf("%q lacks %q", r.errMsg(t), want)
				}
			}
		})

		t.Run("the last administrator stays", func(t *testing.T) {
			e.must(http.StatusBadRequest, http.MethodDelete, "admin/"+itoa(e.adminID), nil)
			e.must(http.StatusBadRequest, http.MethodPatch, "admin/"+itoa(e.adminID), map[string]any{"is_active": false})
			second := e.createID("admin", map[string]any{"email": "root2@example.com", "name": "Root Two"})
			got := e.must(http.StatusOK, http.MethodGet, "admin/"+itoa(second), nil).obj(t)
			if got["email"] != "root2@example.com" {
				t.Fatalf("got %v", got)
			}
			e.must(http.StatusOK, http.MethodDelete, "admin/"+itoa(second), nil)
		})

		t.Run("admin sub-resources are not records", func(t *testing.T) {
			e.must(http.StatusNotFound, http.MethodGet, "admin/99999", nil)
			e.must(http.StatusNotFound, http.MethodGet, "admin/abc", nil)
		})
	})
}

func TestRoleWithNestedRecords(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		db := e.reg.Snapshot().Service("db")
		rel := "?fields=*&related=role_service_access_by_role_id,lookup_by_role_id"
		r := e.must(http.StatusCreated, http.MethodPost, "role"+rel, map[string]any{"resource": []any{map[string]any{
			"name": "MySQL Role", "description": "x", "is_active": true,
			"role_service_access_by_role_id": []any{
				map[string]any{"service_id": db.ID, "component": "_table/employees/*", "verb_mask": 1, "requestor_mask": 3,
					"filters": []any{map[string]any{"name": "owner_id", "operator": "=", "value": "{user.id}"}}, "filter_op": "and",
					"fields": []any{"id", "name"}},
				map[string]any{"service_id": db.ID, "component": "_schema/*", "verb_mask": 31},
			},
			"lookup_by_role_id": []any{map[string]any{"name": "k", "value": "v", "private": false}},
		}}})
		role := r.list(t)[0]
		id := num(t, role["id"])
		acc := role["role_service_access_by_role_id"].([]any)
		if len(acc) != 2 {
			t.Fatalf("accesses = %v", acc)
		}
		first := acc[0].(map[string]any)
		want := map[string]any{"filter_op": "AND", "fields": []any{"id", "name"}, "requestor_mask": json.Number("3"),
			"filters": []any{map[string]any{"name": "owner_id", "operator": "=", "value": "{user.id}"}}}
		for k, v := range want {
			if diff := cmp.Diff(v, first[k]); diff != "" {
				t.Errorf("%s: %s", k, diff)
			}
		}
		if second := acc[1].(map[string]any); num(t, second["requestor_mask"]) != 1 || len(second["fields"].([]any)) != 0 {
			t.Errorf("defaults of an access entry: %v", second)
		}
		if lk := role["lookup_by_role_id"].([]any); len(lk) != 1 {
			t.Errorf("lookups = %v", lk)
		}
		snap := e.reg.Snapshot()
		if sr := snap.Role(id); sr == nil || len(sr.Accesses) != 2 {
			t.Fatalf("snapshot role = %+v", sr)
		}

		other := e.createID("role", map[string]any{"name": "Other"})
		firstID, secondID := num(t, first["id"]), num(t, acc[1].(map[string]any)["id"])

		t.Run("update by id, create, delete with a null key, all in one PATCH", func(t *testing.T) {
			got := e.must(http.StatusOK, http.MethodPatch, "role/"+itoa(id)+rel, map[string]any{
				"role_service_access_by_role_id": []any{
					map[string]any{"id": firstID, "verb_mask": 3},
					map[string]any{"id": secondID, "role_id": nil},
					map[string]any{"service_id": nil, "component": "*", "verb_mask": 1},
				},
			}).obj(t)
			acc := got["role_service_access_by_role_id"].([]any)
			if len(acc) != 2 {
				t.Fatalf("accesses = %v", acc)
			}
			a0 := acc[0].(map[string]any)
			if num(t, a0["id"]) != firstID || num(t, a0["verb_mask"]) != 3 || a0["component"] != "_table/employees/*" {
				t.Errorf("updated entry = %v", a0)
			}
			if a1 := acc[1].(map[string]any); a1["service_id"] != nil || a1["component"] != "*" {
				t.Errorf("created entry = %v", a1)
			}
			if n := count[store.RoleServiceAccess](e, "id = ?", secondID); n != 0 {
				t.Errorf("deleted entry still there")
			}
		})

		t.Run("re-parent an entry", func(t *testing.T) {
			e.must(http.StatusOK, http.MethodPatch, "role/"+itoa(other), map[string]any{
				"role_service_access_by_role_id": []any{map[string]any{"id": firstID, "role_id": other}},
			})
			got := e.must(http.StatusOK, http.MethodGet, "role/"+itoa(other)+"?related=role_service_access_by_role_id", nil).obj(t)
			if acc := got["role_service_access_by_role_id"].([]any); len(acc) != 1 || num(t, acc[0].(map[string]any)["id"]) != firstID {
				t.Errorf("adopted = %v", acc)
			}
		})

		t.Run("an entry of another role cannot be deleted through this one", func(t *testing.T) {
			e.must(http.StatusBadRequest, http.MethodPatch, "role/"+itoa(id), map[string]any{
				"role_service_access_by_role_id": []any{map[string]any{"id": firstID, "role_id": nil}},
			})
		})

		t.Run("a bad nested entry writes nothing and reports every problem", func(t *testing.T) {
			before := count[store.Role](e, "")
			r := e.must(http.StatusBadRequest, http.MethodPost, "role", map[string]any{"name": "Broken",
				"role_service_access_by_role_id": []any{
					map[string]any{"service_id": 9999, "component": "a*b", "verb_mask": 4096, "filter_op": "xor",
						"filters": []any{map[string]any{"name": "", "operator": "~"}}},
				}})
			msg := r.errMsg(t)
			for _, want := range []string{"service 9999 does not exist", "'*' may appear only once", "verb_mask 4096", "filter_op must be AND or OR", "filter 0 has no field name", "operator '~'", "role_service_access_by_role_id[0]."} {
				if !strings.Contains(msg, want) {
					t.Errorf("%q lacks %q", msg, want)
				}
			}
			if count[store.Role](e, "") != before {
				t.Errorf("the role was written")
			}
		})

		t.Run("lookups of a role are unique per role", func(t *testing.T) {
			e.must(http.StatusConflict, http.MethodPatch, "role/"+itoa(id), map[string]any{
				"lookup_by_role_id": []any{map[string]any{"name": "k", "value": "again"}},
			})
			e.must(http.StatusOK, http.MethodPatch, "role/"+itoa(other), map[string]any{
				"lookup_by_role_id": []any{map[string]any{"name": "k", "value": "same name, other role"}},
			})
		})

		t.Run("filters on related records", func(t *testing.T) {
			list := e.must(http.StatusOK, http.MethodGet, "role?filter=role_service_access_by_role_id.component%20%3D%20'*'", nil).list(t)
			if len(list) != 1 || num(t, list[0]["id"]) != id {
				t.Errorf("roles with a '*' entry = %v", list)
			}
		})

		t.Run("deleting a role deletes its entries and lookups", func(t *testing.T) {
			e.must(http.StatusOK, http.MethodDelete, "role/"+itoa(id), nil)
			if n := count[store.RoleServiceAccess](e, "role_id = ?", id); n != 0 {
				t.Errorf("%d entries left", n)
			}
			if n := count[store.Lookup](e, "role_id = ?", id); n != 0 {
				t.Errorf("%d lookups left", n)
			}
		})
	})
}

func TestUserAppRoles(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		role := e.createID("role", map[string]any{"name": "staff"})
		app := e.createID("app", map[string]any{"name": "portal"})
		rel := "?related=user_to_app_to_role_by_user_id,lookup_by_user_id"
		r := e.must(http.StatusCreated, http.MethodPost, "user"+rel, map[string]any{"resource": []any{map[string]any{
			"email": "u@example.com", "name": "U",
			"user_to_app_to_role_by_user_id": []any{map[string]any{"app_id": app, "role_id": role}},
			"lookup_by_user_id":              []any{map[string]any{"name": "secret", "value": "s", "private": true}},
		}}})
		u := r.list(t)[0]
		uid := num(t, u["id"])
		maps := u["user_to_app_to_role_by_user_id"].([]any)
		if len(maps) != 1 || num(t, maps[0].(map[string]any)["user_id"]) != uid {
			t.Fatalf("maps = %v", maps)
		}
		if lk := u["lookup_by_user_id"].([]any); len(lk) != 1 || lk[0].(map[string]any)["value"] != lookupMask {
			t.Errorf("private lookup not masked: %v", lk)
		}
		if rid, ok := e.reg.Snapshot().UserAppRole(uid, app); !ok || rid != role {
			t.Errorf("snapshot user app role = %d, %v", rid, ok)
		}

		t.Run("one role per user and app", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPatch, "user/"+itoa(uid), map[string]any{
				"user_to_app_to_role_by_user_id": []any{map[string]any{"app_id": app, "role_id": role}},
			})
			if !strings.Contains(r.errMsg(t), "Multiple user-to-app-to-role assignment") {
				t.Errorf("message %q", r.errMsg(t))
			}
		})

		t.Run("writing the mask back keeps a private value", func(t *testing.T) {
			lk := u["lookup_by_user_id"].([]any)[0].(map[string]any)
			e.must(http.StatusOK, http.MethodPatch, "user/"+itoa(uid), map[string]any{
				"lookup_by_user_id": []any{map[string]any{"id": lk["id"], "value": lookupMask, "description": "d"}},
			})
			var l store.Lookup
			if err := e.st.DB.NewSelect().Model(&l).Where("id = ?", num(t, lk["id"])).Scan(t.Context()); err != nil {
				t.Fatal(err)
			}
			if l.Value != "s" || l.Description != "d" {
				t.Errorf("lookup = %+v", l)
			}
		})

		t.Run("remove the mapping with a null user_id", func(t *testing.T) {
			m := maps[0].(map[string]any)
			e.must(http.StatusOK, http.MethodPatch, "user/"+itoa(uid), map[string]any{
				"user_to_app_to_role_by_user_id": []any{map[string]any{"id": m["id"], "user_id": nil}},
			})
			if n := count[store.UserAppRole](e, "user_id = ?", uid); n != 0 {
				t.Errorf("%d mappings left", n)
			}
		})
	})
}
