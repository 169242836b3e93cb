package system

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Issue 16: the admin service listing showed database passwords and DSNs
// in clear; DreamFactory masks them.
func TestServiceSecretsMasked(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		id := e.createID("service", map[string]any{"name": "pg", "label": "PG", "type": "pgsql", "config": map[string]any{
			"host": "db", "database": "app", "username": "app", "password": "hunter2-pw",
			"dsn":     "postgres://app:hunter2-dsn@db:5432/app?sslmode=disable",
			"options": map[string]any{"client_secret": "hunter2-nested", "mode": "x"},
		}})
		path := "service/" + itoa(id)
		stored := func() string {
			var s store.Service
			if err := e.st.DB.NewSelect().Model(&s).Where("id = ?", id).Scan(t.Context()); err != nil {
				t.Fatalf("read: %v", err)
			}
			return s.Config
		}
		clear := func(t *testing.T, body []byte) {
			t.Helper()
			if strings.Contains(string(body), "hunter2") {
				t.Fatalf("a secret is shown in clear: %s", body)
			}
		}

		for _, p := range []string{path, "service", "service?related=role_service_access_by_service_id", path + "?secrets=false"} {
			clear(t, e.must(http.StatusOK, http.MethodGet, p, nil).body)
		}
		got := e.must(http.StatusOK, http.MethodGet, path, nil).obj(t)["config"].(map[string]any)
		if got["password"] != secretMask || got["host"] != "db" || got["username"] != "app" {
			t.Fatalf("config %v", got)
		}
		if got["dsn"] != "postgres://app:***@db:5432/app?sslmode=disable" {
			t.Fatalf("dsn %v", got["dsn"])
		}
		if got["options"].(map[string]any)["client_secret"] != secretMask {
			t.Fatalf("nested secret %v", got["options"])
		}

		t.Run("secrets=true shows them to an administrator", func(t *testing.T) {
			r := e.must(http.StatusOK, http.MethodGet, path+"?secrets=true", nil)
			for _, s := range []string{"hunter2-pw", "hunter2-dsn", "hunter2-nested"} {
				if !strings.Contains(string(r.body), s) {
					t.Errorf("%s missing from %s", s, r.body)
				}
			}
		})
		t.Run("but not to a role-granted user", func(t *testing.T) {
			u := &caller.Identity{UserID: 999, UserEmail: "u@example.com", Requestor: caller.API}
			r := e.doCtx(u, true, http.MethodGet, path+"?secrets=true", nil)
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			clear(t, r.body)
		})
		t.Run("writes answer masked", func(t *testing.T) {
			r := e.must(http.StatusOK, http.MethodPatch, path, map[string]any{"label": "PG2"})
			clear(t, r.body)
		})
		t.Run("sending the masks back keeps the stored secrets", func(t *testing.T) {
			before := stored()
			for _, m := range []string{http.MethodPut, http.MethodPatch} {
				e.must(http.StatusOK, m, path, map[string]any{"config": got})
				if after := stored(); after != before {
					t.Fatalf("%s changed the stored config:\n%s\n%s", m, before, after)
				}
			}
		})
		t.Run("a new value replaces the secret", func(t *testing.T) {
			e.must(http.StatusOK, http.MethodPatch, path, map[string]any{"config": map[string]any{
				"password": "new-pw", "dsn": "postgres://app:new-dsn@db:5432/app?sslmode=disable"}})
			s := stored()
			if !strings.Contains(s, "new-pw") || !strings.Contains(s, "new-dsn") || !strings.Contains(s, "hunter2-nested") {
				t.Fatalf("stored %s", s)
			}
		})
	})
}

func TestMaskConfig(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"password":"x","host":"h"}`, `{"host":"h","password":"**********"}`},
		{`{"password":""}`, `{"password":""}`},
		{`{"password":null}`, `{"password":null}`},
		{`{"dsn":"sqlite:///tmp/a.db"}`, `{"dsn":"sqlite:///tmp/a.db"}`},
		{`{"dsn":"mysql://u:p@tcp(h:3306)/d"}`, `{"dsn":"mysql://u:***@tcp(h:3306)/d"}`},
		{`{"smtp":{"Password":"x"}}`, `{"smtp":{"Password":"**********"}}`},
		{`not json`, `not json`},
		{`{"headers":[{"name":"Authorization","value":"Bearer x"},{"name":"Accept","value":"application/json"}]}`,
			`{"headers":[{"name":"Authorization","value":"**********"},{"name":"Accept","value":"application/json"}]}`},
		{`{"headers":[{"name":"X-Api-Key","value":"k","pass_from_client":false},{"name":"cookie","value":""}]}`,
			`{"headers":[{"name":"X-Api-Key","pass_from_client":false,"value":"**********"},{"name":"cookie","value":""}]}`},
		{`{"parameters":[{"name":"api_key","value":"k"},{"name":"region","value":"eu"}],"tags":["a","b"]}`,
			`{"parameters":[{"name":"api_key","value":"**********"},{"name":"region","value":"eu"}],"tags":["a","b"]}`},
		{`{"list":[{"smtp":{"password":"p"}}]}`, `{"list":[{"smtp":{"password":"**********"}}]}`},
		{`{"headers":[{"type":"wsse","name":"password","data":"p"},{"type":"wsse","name":"username","data":"u"},{"name":"Auth","data":{"Token":"t","Org":"o"}}]}`,
			`{"headers":[{"data":"**********","name":"password","type":"wsse"},{"type":"wsse","name":"username","data":"u"},{"data":{"Org":"o","Token":"**********"},"name":"Auth"}]}`},
	} {
		if got := string(maskConfig([]byte(tc.in))); got != tc.want {
			t.Errorf("maskConfig(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// Credentials in a configuration's lists (an rws service's Authorization
// header, an api_key parameter) are masked on read like a password, and
// sending the masks back keeps them. The masking does not depend on the
// service type; this registry knows database types only.
func TestServiceEntrySecretsMasked(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		id := e.createID("service", map[string]any{"name": "up", "label": "Up", "type": "pgsql", "config": map[string]any{
			"host": "db", "database": "app",
			"headers": []any{map[string]any{"name": "Authorization", "value": "Bearer hunter2-h"},
				map[string]any{"name": "Accept", "value": "application/json"}},
			"parameters": []any{map[string]any{"name": "api_key", "value": "hunter2-p"}},
		}})
		path := "service/" + itoa(id)
		stored := func() string {
			var s store.Service
			if err := e.st.DB.NewSelect().Model(&s).Where("id = ?", id).Scan(t.Context()); err != nil {
				t.Fatalf("read: %v", err)
			}
			return s.Config
		}
		r := e.must(http.StatusOK, http.MethodGet, path, nil)
		if strings.Contains(string(r.body), "hunter2") || !strings.Contains(string(r.body), "application/json") {
			t.Fatalf("read: %s", r.body)
		}
		got := r.obj(t)["config"]
		before := stored()
		e.must(http.StatusOK, http.MethodPatch, path, map[string]any{"config": got})
		if after := stored(); after != before {
			t.Fatalf("sending the masks back changed the stored config:\n%s\n%s", before, after)
		}
		if r := e.must(http.StatusOK, http.MethodGet, path+"?secrets=true", nil); !strings.Contains(string(r.body), "hunter2-h") {
			t.Fatalf("secrets=true: %s", r.body)
		}
		// A new value replaces the stored one.
		e.must(http.StatusOK, http.MethodPatch, path, map[string]any{"config": map[string]any{
			"headers": []any{map[string]any{"name": "authorization", "value": "Bearer new-h"}}}})
		if s := stored(); !strings.Contains(s, "new-h") || strings.Contains(s, "hunter2-h") || strings.Contains(s, "application/json") {
			t.Fatalf("stored %s", s)
		}
		// An export without secrets leaves the values out.
		r = e.must(http.StatusOK, http.MethodPost, "package", nil)
		if strings.Contains(string(r.body), "new-h") || strings.Contains(string(r.body), "hunter2-p") {
			t.Fatalf("export holds a credential: %s", r.body)
		}
		red := fmt.Sprint(r.obj(t)["manifest"].(map[string]any)["redacted"])
		for _, want := range []string{"service.up.config.headers[0].value", "service.up.config.parameters[0].value"} {
			if !strings.Contains(red, want) {
				t.Errorf("redacted lacks %s: %s", want, red)
			}
		}
	})
}
