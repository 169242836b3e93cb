package system

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// populate gives an instance one of everything.
func populate(t *testing.T, e *env) {
	t.Helper()
	svc := e.createID("service", map[string]any{"name": "crm", "label": "CRM", "type": "pgsql",
		"config": map[string]any{"database": "crm", "host": "db.internal", "username": "app", "password": "pa55word",
			"options": map[string]any{"api_token": "tok"}}})
	role := e.createID("role", map[string]any{"name": "sales", "description": "Sales team",
		"role_service_access_by_role_id": []any{
			map[string]any{"service_id": svc, "component": "_table/*", "verb_mask": 3, "requestor_mask": 3,
				"filters": []any{map[string]any{"name": "owner", "operator": "=", "value": "{user.id}"}}, "fields": []any{"id", "name"}},
			map[string]any{"service_id": nil, "component": "*", "verb_mask": 1},
		},
		"lookup_by_role_id": []any{map[string]any{"name": "region", "value": "emea"}, map[string]any{"name": "key", "value": "hidden", "private": true}},
	})
	app := e.createID("app", map[string]any{"name": "crm_web", "label": "CRM Web", "role_id": role, "type": 2, "url": "https://crm.example.com",
		"lookup_by_app_id": []any{map[string]any{"name": "theme", "value": "dark"}}})
	user := e.createID("user", map[string]any{"email": "seller@example.com", "name": "Seller", "password": "seller-pass",
		"default_app_id":                 app,
		"user_to_app_to_role_by_user_id": []any{map[string]any{"app_id": app, "role_id": role}},
		"lookup_by_user_id":              []any{map[string]any{"name": "quota", "value": "10"}}})
	e.createID("limit", map[string]any{"name": "seller hourly", "type": "instance.user.service", "user_id": user, "service_id": svc, "rate": 100, "period": "hour"})
	e.createID("limit", map[string]any{"name": "sales daily", "type": "instance.role", "role_id": role, "rate": 1000, "period": "day", "verb": "POST"})
	e.createID("cors", map[string]any{"path": "api/v2/crm/*", "origin": "https://crm.example.com", "method": []any{"GET", "POST"}})
	e.createID("lookup", map[string]any{"name": "company", "value": "ACME"})
	e.createID("email_template", map[string]any{"name": "welcome", "to": []any{"{email}"}, "subject": "Hi", "body_text": "Welcome"})
	e.must(http.StatusCreated, http.MethodPost, "custom", map[string]any{"name": "ui", "value": map[string]any{"logo": "x.png"}})
	e.must(http.StatusCreated, http.MethodPost, "event_script/crm._table.{table_name}.get.pre_process", map[string]any{"type": "lua", "content": "return"})
}

// comparable returns the configuration of an instance in a form that does
// not depend on ids: the export without the manifest.
func comparable(t *testing.T, e *env) map[string]any {
	t.Helper()
	doc := e.must(http.StatusOK, http.MethodPost, "package?secrets=true", nil).obj(t)
	sys := doc["system"].(map[string]any)
	// Keys are generated per instance for built-in apps.
	for _, a := range sys["app"].([]any) {
		delete(a.(map[string]any), "api_key")
	}
	for _, a := range sys["admin"].([]any) {
		delete(a.(map[string]any), "password_hash")
	}
	return sys
}

func TestPackageRoundTrip(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		src := newEnv(t, cfg)
		populate(t, src)

		t.Run("manifest", func(t *testing.T) {
			m := src.must(http.StatusOK, http.MethodGet, "package", nil).obj(t)
			if m["version"] != packageVersion || m["secured"] != false {
				t.Errorf("manifest = %v", m)
			}
			sys := m["service"].(map[string]any)["system"].(map[string]any)
			if !slices.Contains(sys["role"].([]any), any("sales")) || !slices.Contains(sys["service"].([]any), any("crm")) {
				t.Errorf("manifest lists %v", sys)
			}
		})

		t.Run("export without secrets leaves credentials out", func(t *testing.T) {
			r := src.must(http.StatusOK, http.MethodPost, "package", map[string]any{"description": "nightly"})
			body := string(r.body)
			for _, secret := range []string{"pa55word", `"tok"`, "hidden", "$2a$"} {
				if strings.Contains(body, secret) {
					t.Errorf("export without secrets holds %s", secret)
				}
			}
			doc := r.obj(t)
			man := doc["manifest"].(map[string]any)
			red := man["redacted"].([]any)
			for _, want := range []string{"service.crm.config.password", "service.crm.config.options.api_token", "app.crm_web.api_key", "role.sales.lookup.key", "user.seller@example.com.password"} {
				if !slices.Contains(red, any(want)) {
					t.Errorf("redacted lacks %s: %v", want, red)
				}
			}
			if man["description"] != "nightly" || !strings.Contains(r.header.Get("Content-Disposition"), "attachment") {
				t.Errorf("manifest %v, headers %v", man, r.header)
			}
		})

		doc := src.must(http.StatusOK, http.MethodPost, "package?secrets=true", nil)
		if !strings.Contains(string(doc.body), "pa55word") || !strings.Contains(string(doc.body), "hidden") {
			t.Fatalf("export with secrets lacks them")
		}

		dst := newEnv(t, dbtest.Fresh(t, cfg.Kind))
		v := dst.version()
		r := dst.must(http.StatusCreated, http.MethodPost, "package", json.RawMessage(doc.body))
		log := r.obj(t)["log"].(map[string]any)
		notices := log["notice"].([]any)
		for _, want := range []string{"service 'crm' created", "role 'sales' created", "app 'crm_web' created", "user 'seller@example.com' created", "service 'system' already exists; skipped", "app 'admin' already exists; skipped"} {
			if !slices.Contains(notices, any(want)) {
				t.Errorf("log lacks %q: %v", want, notices)
			}
		}
		if dst.version() != v+1 {
			t.Errorf("import bumped the version from %d to %d, want one transaction", v, dst.version())
		}

		t.Run("the same configuration", func(t *testing.T) {
			if diff := cmp.Diff(comparable(t, src), comparable(t, dst)); diff != "" {
				t.Error(diff)
			}
		})

		t.Run("secrets survive: the app key and the user's password", func(t *testing.T) {
			var a, b store.App
			for _, x := range []struct {
				st  *store.Store
				app *store.App
			}{{src.st, &a}, {dst.st, &b}} {
				if err := x.st.DB.NewSelect().Model(x.app).Where("name = ?", "crm_web").Scan(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if a.APIKey != b.APIKey {
				t.Errorf("api key %s became %s", a.APIKey, b.APIKey)
			}
			var u store.User
			if err := dst.st.DB.NewSelect().Model(&u).Where("email = ?", "seller@example.com").Scan(t.Context()); err != nil {
				t.Fatal(err)
			}
			if !store.CheckPassword(u.Password, "seller-pass") {
				t.Errorf("password hash not imported")
			}
			snap := dst.reg.Snapshot()
			if snap.Service("crm") == nil || len(snap.Limits) != 2 || snap.AppByKey(a.APIKey) == nil {
				t.Errorf("the importer's registry was not reloaded")
			}
		})

		t.Run("importing again skips everything", func(t *testing.T) {
			r := dst.must(http.StatusOK, http.MethodPost, "package", json.RawMessage(doc.body))
			if !strings.Contains(string(r.body), "role 'sales' already exists; skipped") {
				t.Errorf("log = %s", r.body)
			}
		})

		t.Run("overwrite updates in place", func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(doc.body, &d); err != nil {
				t.Fatal(err)
			}
			role := d["system"].(map[string]any)["role"].([]any)[0].(map[string]any)
			role["description"] = "changed"
			role["role_service_access_by_role_id"] = []any{map[string]any{"service": "crm", "component": "*", "verb_mask": 31}}
			dst.must(http.StatusOK, http.MethodPost, "package?overwrite=true", d)
			got := dst.must(http.StatusOK, http.MethodGet, "role?filter=name%3D'sales'&related=role_service_access_by_role_id", nil).list(t)[0]
			if got["description"] != "changed" || len(got["role_service_access_by_role_id"].([]any)) != 1 {
				t.Errorf("role = %v", got)
			}
		})

		t.Run("a bad record fails the whole import", func(t *testing.T) {
			fresh := newEnv(t, dbtest.Fresh(t, cfg.Kind))
			var d map[string]any
			if err := json.Unmarshal(doc.body, &d); err != nil {
				t.Fatal(err)
			}
			sys := d["system"].(map[string]any)
			sys["cors"] = []any{map[string]any{"path": "", "origin": ""}}
			v := fresh.version()
			r := fresh.must(http.StatusBadRequest, http.MethodPost, "package", d)
			if !strings.Contains(r.errMsg(t), "Import failed at cors 0") {
				t.Errorf("message %q", r.errMsg(t))
			}
			if fresh.version() != v || count[store.Service](fresh, "name = ?", "crm") != 0 {
				t.Errorf("a failed import left changes")
			}
		})
	})
}

func TestPackageImportEdges(t *testing.T) {
	t.Parallel()
	src := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	populate(t, src)
	plain := src.must(http.StatusOK, http.MethodPost, "package", nil).body

	t.Run("a package without secrets imports with warnings", func(t *testing.T) {
		dst := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
		r := dst.must(http.StatusCreated, http.MethodPost, "package", json.RawMessage(plain))
		warn := strings.Join(func() []string {
			var s []string
			for _, w := range r.obj(t)["log"].(map[string]any)["warning"].([]any) {
				s = append(s, w.(string))
			}
			return s
		}(), "\n")
		for _, want := range []string{"app 'crm_web': the package holds no API key", "user 'seller@example.com' was imported without a password"} {
			if !strings.Contains(warn, want) {
				t.Errorf("warnings lack %q:\n%s", want, warn)
			}
		}
	})

	t.Run("services of types this build lacks are left out with their references", func(t *testing.T) {
		var d map[string]any
		if err := json.Unmarshal(plain, &d); err != nil {
			t.Fatal(err)
		}
		for _, s := range d["system"].(map[string]any)["service"].([]any) {
			if m := s.(map[string]any); m["name"] == "crm" {
				m["type"] = "cassandra"
			}
		}
		dst := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
		r := dst.must(http.StatusCreated, http.MethodPost, "package", d)
		body := string(r.body)
		for _, want := range []string{"service 'crm' left out: service type 'cassandra'", "limit 'seller hourly' left out"} {
			if !strings.Contains(body, want) {
				t.Errorf("log lacks %q: %s", want, body)
			}
		}
		got := dst.must(http.StatusOK, http.MethodGet, "role?related=role_service_access_by_role_id", nil).list(t)[0]
		if n := len(got["role_service_access_by_role_id"].([]any)); n != 1 {
			t.Errorf("%d accesses, want the one without a service", n)
		}
	})

	t.Run("multipart upload", func(t *testing.T) {
		dst := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("files", "package.json")
		fw.Write(plain)
		mw.Close()
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v2/system/package", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		ctx := service.WithTarget(caller.WithIdentity(req.Context(), dst.admin), &service.Target{Service: dst.sys, Resource: "package", Verb: http.MethodPost})
		rec := httptest.NewRecorder()
		dst.b.ServeHTTP(rec, req.WithContext(ctx))
		if rec.Code != http.StatusCreated {
			t.Errorf("status %d: %s", rec.Code, rec.Body)
		}
	})

	t.Run("malformed packages", func(t *testing.T) {
		dst := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
		for _, body := range []string{`{"system": 5}`, `{"system": {"roles": []}}`, `{"system": {"role": {}}}`, `{"manifest": {"version": "9"}, "system": {}}`} {
			r := dst.do(http.MethodPost, "package", body)
			if r.status != http.StatusBadRequest || !strings.Contains(r.errMsg(t), "Cannot read package manifest") {
				t.Errorf("%s: %d %s", body, r.status, r.body)
			}
		}
	})
}

// TestPackageSecretsOnlyRedacted exports without secrets and imports the
// result: keys that merely name a credential in passing (the user
// service's password_email_service_id, an OAuth token_endpoint) survive,
// and passwords, client secrets, private keys and API keys do not.
func TestPackageSecretsOnlyRedacted(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		src := newEnv(t, cfg)
		src.createID("service", map[string]any{"name": "vault", "label": "Vault", "type": "pgsql",
			"config": map[string]any{"database": "v", "host": "db.internal", "username": "app",
				"password": "s-password", "client_secret": "s-client", "sp_privateKey": "s-spkey",
				"private_key": "s-pkey", "api_key": "s-apikey", "ntlm_password": "s-ntlm",
				"token_endpoint": "https://idp.example.com/token", "wsse_username_token": "UsernameToken-1",
				"options": map[string]any{"api_token": "s-token", "mode": "x"}}})
		userConfig := func(e *env) map[string]any {
			t.Helper()
			for _, s := range e.must(http.StatusOK, http.MethodGet, "service?filter=name%3D'user'", nil).list(t) {
				return s["config"].(map[string]any)
			}
			t.Fatal("no user service")
			return nil
		}
		srcUser := userConfig(src)
		for _, k := range []string{"password_email_service_id", "password_email_template_id"} {
			if v, ok := srcUser[k]; !ok || v == nil || v == secretMask {
				t.Fatalf("user config %s = %v (%v)", k, v, srcUser)
			}
		}

		r := src.must(http.StatusOK, http.MethodPost, "package", nil)
		for _, s := range []string{"s-password", "s-client", "s-spkey", "s-pkey", "s-apikey", "s-ntlm", "s-token"} {
			if strings.Contains(string(r.body), s) {
				t.Errorf("export without secrets holds %s", s)
			}
		}
		red := r.obj(t)["manifest"].(map[string]any)["redacted"].([]any)
		for _, k := range []string{"password", "client_secret", "sp_privateKey", "private_key", "api_key", "ntlm_password", "options.api_token"} {
			if !slices.Contains(red, any("service.vault.config."+k)) {
				t.Errorf("redacted lacks %s: %v", k, red)
			}
		}
		for _, p := range red {
			if strings.HasPrefix(p.(string), "service.user.") || strings.Contains(p.(string), "token_endpoint") || strings.Contains(p.(string), "wsse") {
				t.Errorf("redacted %s, which is no secret", p)
			}
		}

		dst := newEnv(t, dbtest.Fresh(t, cfg.Kind))
		dst.must(http.StatusOK, http.MethodPatch, "service/"+itoa(num(t, dst.must(http.StatusOK, http.MethodGet, "service?filter=name%3D'user'", nil).list(t)[0]["id"])),
			map[string]any{"config": map[string]any{"password_email_service_id": nil, "password_email_template_id": nil}})
		dst.must(http.StatusCreated, http.MethodPost, "package?overwrite=true", json.RawMessage(r.body))
		if diff := cmp.Diff(srcUser, userConfig(dst)); diff != "" {
			t.Errorf("user service config after the round trip (-src +dst):\n%s", diff)
		}
		var vault store.Service
		if err := dst.st.DB.NewSelect().Model(&vault).Where("name = ?", "vault").Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(vault.Config), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"database": "v", "host": "db.internal", "username": "app",
			"token_endpoint": "https://idp.example.com/token", "wsse_username_token": "UsernameToken-1",
			"options": map[string]any{"mode": "x"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("imported vault config (-want +got):\n%s", diff)
		}
	})
}
