package system_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// signIn logs the administrator in and returns a client with the session.
func signIn(t *testing.T, in *proxytest.Instance, email, password string) *proxytest.Client {
	t.Helper()
	c := in.API()
	r := c.Do(t, http.MethodPost, "/api/v2/system/admin/session", map[string]any{"email": email, "password": password})
	if r.Status != http.StatusOK {
		t.Fatalf("admin login: %d %s", r.Status, r.Body)
	}
	tok, _ := r.Map(t)["session_token"].(string)
	if tok == "" {
		t.Fatalf("no session token: %s", r.Body)
	}
	c.Session = tok
	return c
}

func status(t *testing.T, r *proxytest.Response, want int) *proxytest.Response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
	return r
}

func idOf(t *testing.T, r *proxytest.Response) int64 {
	t.Helper()
	var out struct {
		Resource []struct {
			ID int64 `json:"id"`
		} `json:"resource"`
	}
	r.JSON(t, &out)
	if len(out.Resource) != 1 || out.Resource[0].ID == 0 {
		t.Fatalf("no id in %s", r.Body)
	}
	return out.Resource[0].ID
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		in := proxytest.Start(t, cfg, nil)
		admin := signIn(t, in, proxytest.AdminEmail, proxytest.AdminPassword)

		t.Run("only administrators reach system resources", func(t *testing.T) {
			// The admin app has no default role: with its key alone a
			// session token is what is missing (401).
			status(t, in.API().Do(t, http.MethodGet, "/api/v2/system/app", nil), http.StatusUnauthorized)
			status(t, in.API().Do(t, http.MethodGet, "/api/v2/system/environment", nil), http.StatusOK)
			status(t, admin.Do(t, http.MethodGet, "/api/v2/system/app", nil), http.StatusOK)
		})

		t.Run("admin session, profile and password", func(t *testing.T) {
			r := status(t, admin.Do(t, http.MethodGet, "/api/v2/system/admin/session", nil), http.StatusOK).Map(t)
			if r["email"] != proxytest.AdminEmail || r["is_sys_admin"] != true {
				t.Errorf("session %v", r)
			}
			p := status(t, admin.Do(t, http.MethodGet, "/api/v2/system/admin/profile", nil), http.StatusOK).Map(t)
			if p["email"] != proxytest.AdminEmail {
				t.Errorf("profile %v", p)
			}
			status(t, in.API().Do(t, http.MethodGet, "/api/v2/system/admin/profile", nil), http.StatusUnauthorized)
			bad := in.API().Do(t, http.MethodPost, "/api/v2/system/admin/session", map[string]any{"email": proxytest.AdminEmail, "password": "wrong-password"})
			if bad.Status != http.StatusUnauthorized {
				t.Errorf("wrong password: %d %s", bad.Status, bad.Body)
			}
		})

		t.Run("a signed-in user who is not an administrator gets 403", func(t *testing.T) {
			role := idOf(t, status(t, admin.Do(t, http.MethodPost, "/api/v2/system/role", map[string]any{"resource": []any{
				map[string]any{"name": "everything", "role_service_access_by_role_id": []any{
					map[string]any{"service_id": nil, "component": "*", "verb_mask": 31, "requestor_mask": 3}}}}}), http.StatusCreated))
			appKeyResp := status(t, admin.Do(t, http.MethodPost, "/api/v2/system/app?fields=api_key", map[string]any{"resource": []any{
				map[string]any{"name": "web", "role_id": role}}}), http.StatusCreated)
			var keys struct {
				Resource []struct {
					APIKey string `json:"api_key"`
				} `json:"resource"`
			}
			appKeyResp.JSON(t, &keys)
			status(t, admin.Do(t, http.MethodPost, "/api/v2/system/user", map[string]any{"resource": []any{
				map[string]any{"email": "joe@example.com", "name": "Joe", "password": "joe-password"}}}), http.StatusCreated)
			joe := &proxytest.Client{Inst: in, APIKey: keys.Resource[0].APIKey}
			r := status(t, joe.Do(t, http.MethodPost, "/api/v2/user/session", map[string]any{"email": "joe@example.com", "password": "joe-password"}), http.StatusOK)
			joe.Session, _ = r.Map(t)["session_token"].(string)
			status(t, joe.Do(t, http.MethodGet, "/api/v2/system/role", nil), http.StatusForbidden)
			status(t, joe.Do(t, http.MethodPost, "/api/v2/system/admin/session", map[string]any{"email": "joe@example.com", "password": "joe-password"}), http.StatusUnauthorized)
		})

		t.Run("a role may delegate system components", func(t *testing.T) {
			if r := in.API().Do(t, http.MethodGet, "/api/v2/system/app", nil); strings.Contains(string(r.Body), "Admin endpoint used by non-admin") {
				t.Skip("the RBAC stage is not in this build's pipeline")
			}
			var svcs struct {
				Resource []struct {
					ID   int64  `json:"id"`
					Name string `json:"name"`
				} `json:"resource"`
			}
			status(t, admin.Do(t, http.MethodGet, "/api/v2/system/service?filter=name%3D'system'", nil), http.StatusOK).JSON(t, &svcs)
			sys := svcs.Resource[0].ID
			role := idOf(t, status(t, admin.Do(t, http.MethodPost, "/api/v2/system/role", map[string]any{"resource": []any{
				map[string]any{"name": "help desk", "role_service_access_by_role_id": []any{
					map[string]any{"service_id": sys, "component": "user/*", "verb_mask": 1}}}}}), http.StatusCreated))
			var keys struct {
				Resource []struct {
					APIKey string `json:"api_key"`
				} `json:"resource"`
			}
			status(t, admin.Do(t, http.MethodPost, "/api/v2/system/app?fields=api_key", map[string]any{"resource": []any{
				map[string]any{"name": "desk", "role_id": role}}}), http.StatusCreated).JSON(t, &keys)
			status(t, admin.Do(t, http.MethodPost, "/api/v2/system/user", map[string]any{"resource": []any{
				map[string]any{"email": "desk@example.com", "name": "Desk", "password": "desk-password"}}}), http.StatusCreated)
			desk := &proxytest.Client{Inst: in, APIKey: keys.Resource[0].APIKey}
			r := status(t, desk.Do(t, http.MethodPost, "/api/v2/user/session", map[string]any{"email": "desk@example.com", "password": "desk-password"}), http.StatusOK)
			desk.Session, _ = r.Map(t)["session_token"].(string)
			status(t, desk.Do(t, http.MethodGet, "/api/v2/system/user", nil), http.StatusOK)
			status(t, desk.Do(t, http.MethodPost, "/api/v2/system/user", map[string]any{"email": "x@example.com", "name": "X"}), http.StatusForbidden)
			status(t, desk.Do(t, http.MethodGet, "/api/v2/system/app", nil), http.StatusForbidden)
		})

		t.Run("a new service and limit work at once", func(t *testing.T) {
			cfgJSON := proxytest.SQLiteService(t)
			var c map[string]any
			if err := json.Unmarshal([]byte(cfgJSON), &c); err != nil {
				t.Fatal(err)
			}
			svc := idOf(t, status(t, admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{"resource": []any{
				map[string]any{"name": "notes", "label": "Notes", "type": "sqlite", "config": c}}}), http.StatusCreated))
			status(t, admin.Do(t, http.MethodGet, "/api/v2/notes/_table", nil), http.StatusOK)
			status(t, admin.Do(t, http.MethodPost, "/api/v2/system/limit", map[string]any{"resource": []any{
				map[string]any{"name": "notes per minute", "type": "instance.service", "service_id": svc, "rate": 1, "period": "minute"}}}), http.StatusCreated)
			status(t, admin.Do(t, http.MethodDelete, "/api/v2/system/service/"+strconv.FormatInt(svc, 10), nil), http.StatusOK)
			status(t, admin.Do(t, http.MethodGet, "/api/v2/notes/_table", nil), http.StatusNotFound)
			var lim struct {
				Meta struct {
					Count int `json:"count"`
				} `json:"meta"`
			}
			status(t, admin.Do(t, http.MethodGet, "/api/v2/system/limit?count_only=true", nil), http.StatusOK).JSON(t, &lim)
			if lim.Meta.Count != 0 {
				t.Errorf("%d limits left after their service was deleted", lim.Meta.Count)
			}
		})

		t.Run("another instance on the same database sees a change within a second", func(t *testing.T) {
			if cfg.Kind == dialects.SQLite {
				t.Skip("instances share PostgreSQL or MySQL in the scale-out setup")
			}
			other := proxytest.Start(t, cfg, nil)
			r := status(t, admin.Do(t, http.MethodPost, "/api/v2/system/app?fields=api_key", map[string]any{"resource": []any{
				map[string]any{"name": "late"}}}), http.StatusCreated)
			var keys struct {
				Resource []struct {
					APIKey string `json:"api_key"`
				} `json:"resource"`
			}
			r.JSON(t, &keys)
			c := &proxytest.Client{Inst: other, APIKey: keys.Resource[0].APIKey}
			deadline := time.Now().Add(time.Second)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				if c.Do(t, http.MethodGet, "/api/v2/system/environment", nil).Status == http.StatusOK {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the other instance does not accept the new app's key after a second")
				}
				<-tick.C
			}
		})

		t.Run("package from this instance into a fresh one", func(t *testing.T) {
			doc := status(t, admin.Do(t, http.MethodPost, "/api/v2/system/package?secrets=true", nil), http.StatusOK)
			fresh := proxytest.Start(t, dbtest.Fresh(t, cfg.Kind), nil)
			fadmin := signIn(t, fresh, proxytest.AdminEmail, proxytest.AdminPassword)
			status(t, fadmin.Do(t, http.MethodPost, "/api/v2/system/package", doc.Body), http.StatusCreated)
			for _, res := range []string{"service", "role", "app", "limit"} {
				want := names(t, admin.Do(t, http.MethodGet, "/api/v2/system/"+res+"?fields=name", nil))
				got := names(t, fadmin.Do(t, http.MethodGet, "/api/v2/system/"+res+"?fields=name", nil))
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: %s", res, diff)
				}
			}
		})
	})
}

func names(t *testing.T, r *proxytest.Response) []string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var out struct {
		Resource []struct {
			Name string `json:"name"`
		} `json:"resource"`
	}
	r.JSON(t, &out)
	var s []string
	for _, x := range out.Resource {
		s = append(s, x.Name)
	}
	return s
}
