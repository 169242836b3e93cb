package system

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func TestLimitsAndCascades(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		user := e.createID("user", map[string]any{"email": "l@example.com", "name": "L"})
		role := e.createID("role", map[string]any{"name": "limited"})
		svc := e.createID("service", map[string]any{"name": "data", "label": "Data", "type": "sqlite", "config": map[string]any{"database": "d.db"}})

		t.Run("validation messages", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPost, "limit", map[string]any{"name": "bad", "type": "instance.user.service", "rate": 0, "period": "week", "verb": "FETCH"})
			for _, want := range []string{"Limit rate must be a positive integer", "period \"week\" is not valid", "Verb is invalid", "user_id must be specified", "service_id must be specified"} {
				if !strings.Contains(r.errMsg(t), want) {
					t.Errorf("%q lacks %q", r.errMsg(t), want)
				}
			}
			r = e.must(http.StatusBadRequest, http.MethodPost, "limit", map[string]any{"name": "ghost", "type": "instance.service", "rate": 5, "period": "hour", "service_id": 9999})
			if !strings.Contains(r.errMsg(t), "No service exists for ghost limit.") {
				t.Errorf("message %q", r.errMsg(t))
			}
		})

		mk := func(name, typ string, extra map[string]any) int64 {
			rec := map[string]any{"name": name, "type": typ, "rate": 10, "period": 0}
			for k, v := range extra {
				rec[k] = v
			}
			return e.createID("limit", rec)
		}
		lu := mk("per user", "instance.user", map[string]any{"user_id": user, "role_id": role, "service_id": svc})
		lr := mk("per role", "instance.role", map[string]any{"role_id": role})
		ls := mk("per service endpoint", "instance.service.endpoint", map[string]any{"service_id": svc, "endpoint": "_table/contact/17", "verb": "get"})
		mk("instance", "instance", nil)

		t.Run("key text, period names and unused fields cleared", func(t *testing.T) {
			got := e.must(http.StatusOK, http.MethodGet, "limit/"+itoa(lu), nil).obj(t)
			if got["key_text"] != "instance.user:"+itoa(user)+".minute" || got["period"] != "minute" || got["role_id"] != nil || got["service_id"] != nil || got["is_active"] != true {
				t.Errorf("got %v", got)
			}
			got = e.must(http.StatusOK, http.MethodGet, "limit/"+itoa(ls)+"?related=service_by_service_id", nil).obj(t)
			if got["verb"] != "GET" || got["key_text"] != "instance.service:"+itoa(svc)+".endpoint:_table/contact/:id.verb:GET.minute" {
				t.Errorf("got %v", got)
			}
			if s, _ := got["service_by_service_id"].(map[string]any); s == nil || s["name"] != "data" {
				t.Errorf("service_by_service_id = %v", got["service_by_service_id"])
			}
		})

		t.Run("duplicate parameters are a conflict", func(t *testing.T) {
			r := e.must(http.StatusConflict, http.MethodPost, "limit", map[string]any{"name": "again", "type": "instance.role", "role_id": role, "rate": 3, "period": "minute"})
			if !strings.Contains(r.errMsg(t), "A limit already exists with those parameters") {
				t.Errorf("message %q", r.errMsg(t))
			}
		})

		t.Run("deactivate and reactivate", func(t *testing.T) {
			got := e.must(http.StatusOK, http.MethodPatch, "limit/"+itoa(lr), map[string]any{"is_active": false}).obj(t)
			if got["is_active"] != false {
				t.Errorf("got %v", got)
			}
			e.must(http.StatusOK, http.MethodPatch, "limit/"+itoa(lr), map[string]any{"is_active": true})
			if e.reg.Snapshot().Limits[1].IsActive != true {
				t.Errorf("snapshot not reloaded")
			}
		})

		t.Run("deleting a user, a role and a service deletes their limits", func(t *testing.T) {
			e.must(http.StatusOK, http.MethodDelete, "user/"+itoa(user), nil)
			e.must(http.StatusNotFound, http.MethodGet, "limit/"+itoa(lu), nil)
			e.must(http.StatusOK, http.MethodDelete, "role/"+itoa(role), nil)
			e.must(http.StatusNotFound, http.MethodGet, "limit/"+itoa(lr), nil)
			e.must(http.StatusOK, http.MethodDelete, "service/"+itoa(svc), nil)
			e.must(http.StatusNotFound, http.MethodGet, "limit/"+itoa(ls), nil)
			if n := count[store.Limit](e, ""); n != 1 {
				t.Errorf("%d limits left, want the instance limit", n)
			}
			if n := len(e.reg.Snapshot().Limits); n != 1 {
				t.Errorf("snapshot holds %d limits", n)
			}
		})
	})
}

func TestCORSResource(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		id := e.createID("cors", map[string]any{"path": "api/v2/*", "origin": "https://app.example.com", "method": []any{"get", "POST"}, "max_age": 600})
		got := e.must(http.StatusOK, http.MethodGet, "cors/"+itoa(id), nil).obj(t)
		if diff := cmp.Diff([]any{"GET", "POST"}, got["method"]); diff != "" {
			t.Error(diff)
		}
		if got["enabled"] != true {
			t.Errorf("enabled = %v", got["enabled"])
		}
		got = e.must(http.StatusOK, http.MethodPatch, "cors/"+itoa(id), map[string]any{"method": 31, "enabled": false}).obj(t)
		if diff := cmp.Diff([]any{"GET", "POST", "PUT", "PATCH", "DELETE"}, got["method"]); diff != "" {
			t.Error(diff)
		}
		got = e.must(http.StatusOK, http.MethodPatch, "cors/"+itoa(id), map[string]any{"method": "GET, DELETE"}).obj(t)
		if diff := cmp.Diff([]any{"GET", "DELETE"}, got["method"]); diff != "" {
			t.Error(diff)
		}
		r := e.must(http.StatusBadRequest, http.MethodPost, "cors", map[string]any{"method": []any{"FETCH"}, "max_age": -1})
		for _, want := range []string{"The path is required.", "The origin is required.", "'FETCH' is not an HTTP verb", "max_age must not be negative"} {
			if !strings.Contains(r.errMsg(t), want) {
				t.Errorf("%q lacks %q", r.errMsg(t), want)
			}
		}
		e.must(http.StatusBadRequest, http.MethodPost, "cors", map[string]any{"path": "^(unclosed", "origin": "*"})
		e.must(http.StatusConflict, http.MethodPost, "cors", map[string]any{"path": "api/v2/*", "origin": "*"})
		if c := e.reg.Snapshot().CORS; len(c) != 1 || c[0].Method != 17 || c[0].Enabled {
			t.Errorf("snapshot CORS = %+v", c)
		}
	})
}

func TestLookupCustomTemplatesScripts(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)

		t.Run("global lookups", func(t *testing.T) {
			id := e.createID("lookup", map[string]any{"name": "host", "value": "db.internal"})
			pid := e.createID("lookup", map[string]any{"name": "token", "value": "t0p", "private": true})
			list := e.must(http.StatusOK, http.MethodGet, "lookup", nil).list(t)
			if len(list) != 2 || list[1]["value"] != lookupMask || list[0]["value"] != "db.internal" {
				t.Errorf("list = %v", list)
			}
			if _, ok := list[0]["role_id"]; ok {
				t.Errorf("global lookups show owner columns: %v", list[0])
			}
			e.must(http.StatusConflict, http.MethodPatch, "lookup/"+itoa(pid), map[string]any{"name": "host"})
			e.must(http.StatusBadRequest, http.MethodPost, "lookup", map[string]any{"name": "bad name{}"})
			role := e.createID("role", map[string]any{"name": "r", "lookup_by_role_id": []any{map[string]any{"name": "host", "value": "x"}}})
			if n := len(e.must(http.StatusOK, http.MethodGet, "lookup", nil).list(t)); n != 2 {
				t.Errorf("role lookup listed as global: %d", n)
			}
			e.must(http.StatusNotFound, http.MethodGet, "lookup/"+itoa(role+100), nil)
			e.must(http.StatusOK, http.MethodDelete, "lookup/"+itoa(id), nil)
		})

		t.Run("custom settings return their value by name", func(t *testing.T) {
			r := e.must(http.StatusCreated, http.MethodPost, "custom", map[string]any{"resource": []any{
				map[string]any{"name": "theme", "value": map[string]any{"color": "blue", "sizes": []any{1, 2}}},
				map[string]any{"name": "motd", "value": "hello"},
			}})
			if diff := cmp.Diff([]map[string]any{{"name": "theme"}, {"name": "motd"}}, r.list(t)); diff != "" {
				t.Error(diff)
			}
			got := e.must(http.StatusOK, http.MethodGet, "custom/theme", nil).obj(t)
			if got["color"] != "blue" {
				t.Errorf("value = %v", got)
			}
			var s string
			if err := json.Unmarshal(e.must(http.StatusOK, http.MethodGet, "custom/motd", nil).body, &s); err != nil || s != "hello" {
				t.Errorf("motd = %q, %v", s, err)
			}
			list := e.must(http.StatusOK, http.MethodGet, "custom?order=name", nil).list(t)
			if list[0]["name"] != "motd" || list[1]["value"].(map[string]any)["color"] != "blue" {
				t.Errorf("list = %v", list)
			}
			e.must(http.StatusOK, http.MethodPatch, "custom/motd", map[string]any{"value": "bye", "name": "ignored"})
			e.must(http.StatusNotFound, http.MethodGet, "custom/ignored", nil)
			e.must(http.StatusConflict, http.MethodPost, "custom", map[string]any{"name": "motd", "value": 1})
			e.must(http.StatusOK, http.MethodDelete, "custom/motd", nil)
			e.must(http.StatusNotFound, http.MethodGet, "custom/motd", nil)
		})

		t.Run("e-mail templates keep address lists", func(t *testing.T) {
			id := e.createID("email_template", map[string]any{"name": "invite", "to": "a@example.com, b@example.com", "cc": []any{"c@example.com"},
				"subject": "Welcome", "body_html": "<p>Hi {first_name}</p>", "from_email": "noreply@example.com", "attachment": []any{"x.pdf"}})
			got := e.must(http.StatusOK, http.MethodGet, "email_template/"+itoa(id), nil).obj(t)
			if diff := cmp.Diff([]any{"a@example.com", "b@example.com"}, got["to"]); diff != "" {
				t.Error(diff)
			}
			if diff := cmp.Diff([]any{}, got["bcc"]); diff != "" {
				t.Error(diff)
			}
			if got["body_html"] != "<p>Hi {first_name}</p>" {
				t.Errorf("body_html escaped: %v", got["body_html"])
			}
			r := e.must(http.StatusBadRequest, http.MethodPost, "email_template", map[string]any{"name": "x", "subject": strings.Repeat("s", 81), "from_email": "nope"})
			for _, want := range []string{"subject must have at most 80", "'nope' is not a valid e-mail address"} {
				if !strings.Contains(r.errMsg(t), want) {
					t.Errorf("%q lacks %q", r.errMsg(t), want)
				}
			}
		})

		t.Run("event scripts are keyed by event name", func(t *testing.T) {
			name := "db._table.{table_name}.get.pre_process"
			r := e.must(http.StatusCreated, http.MethodPost, "event_script/"+name, map[string]any{"type": "lua", "content": "return 1"})
			if diff := cmp.Diff(map[string]any{"name": name}, r.obj(t)); diff != "" {
				t.Error(diff)
			}
			r = e.must(http.StatusOK, http.MethodPost, "event_script/"+name+"?fields=*", map[string]any{"content": "return 2", "allow_event_modification": true})
			got := r.obj(t)
			if got["content"] != "return 2" || got["type"] != "lua" || got["is_active"] != true || got["allow_event_modification"] != true {
				t.Errorf("got %v", got)
			}
			if s := e.reg.Snapshot().EventScript(name); s == nil || s.Content != "return 2" {
				t.Errorf("snapshot script = %+v", s)
			}
			r = e.must(http.StatusBadRequest, http.MethodPost, "event_script", map[string]any{"name": "bad name", "type": "cobol"})
			for _, want := range []string{"is not an event name", "script type 'cobol'", "a script needs content"} {
				if !strings.Contains(r.errMsg(t), want) {
					t.Errorf("%q lacks %q", r.errMsg(t), want)
				}
			}
			e.must(http.StatusConflict, http.MethodPost, "event_script", map[string]any{"name": name, "type": "lua", "content": "return 3"})
			got = e.must(http.StatusOK, http.MethodDelete, "event_script/"+name, nil).obj(t)
			if got["name"] != name {
				t.Errorf("deleted %v", got)
			}
		})
	})
}
