package user

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func ptr(n int64) *int64 { return &n }

func TestParseConfig(t *testing.T) {
	cases := []struct {
		name     string
		raw      string
		want     Config
		problems []string
	}{
		{"empty", ``, Config{}, nil},
		{"null", `null`, Config{}, nil},
		{"seeded", `{"allow_open_registration":false,"open_reg_role_id":null,"open_reg_email_service_id":null}`, Config{}, nil},
		{"all set", `{"allow_open_registration":true,"open_reg_role_id":3,"open_reg_email_service_id":6,"password_email_service_id":7,"invite_email_template_id":2}`,
			Config{AllowOpenRegistration: true, OpenRegRoleID: ptr(3), OpenRegEmailServiceID: ptr(6), PasswordEmailServiceID: ptr(7), InviteEmailTemplateID: ptr(2)}, nil},
		{"unknown keys kept and ignored", `{"alt_auth_table":"x","whatever":[1,2]}`, Config{}, nil},
		{"not an object", `[1]`, Config{}, []string{"config must be a JSON object"}},
		{"every problem at once", `{"allow_open_registration":"yes","open_reg_role_id":"3","open_reg_email_service_id":-1,"password_email_service_id":1.5}`, Config{},
			[]string{"allow_open_registration must be true or false", "open_reg_role_id must be", "open_reg_email_service_id must be", "password_email_service_id must be"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig(json.RawMessage(tc.raw))
			if len(tc.problems) == 0 {
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("config (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, p := range tc.problems {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not mention %q", err, p)
				}
			}
		})
	}
	if err := NewType(Options{}).ValidateConfig(json.RawMessage(`{"open_reg_role_id":0}`)); err == nil {
		t.Error("ValidateConfig accepted role id 0")
	}
}

func TestInfo(t *testing.T) {
	info := NewType(Options{}).Info()
	if info.Name != "user" || info.Group != service.GroupUser || !info.Singleton || info.Label == "" {
		t.Errorf("info = %+v", info)
	}
}

func TestBackendRoutes(t *testing.T) {
	st, err := store.OpenConfig(t.Context(), dbtest.Fresh(t, dialects.SQLite))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := &store.Service{ID: 7, Name: "users", Type: "user", IsActive: true, Config: `{"allow_open_registration":false}`}
	b, err := NewType(Options{}).New(t.Context(), svc, service.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := NewType(Options{}).New(t.Context(), svc, service.Deps{}); err == nil {
		t.Error("a backend without a store was built")
	}
	bad := &store.Service{Name: "users", Type: "user", Config: `{"open_reg_role_id":"x"}`}
	if _, err := NewType(Options{}).New(t.Context(), bad, service.Deps{Store: st}); err == nil {
		t.Error("a backend with an invalid config was built")
	}
	cases := []struct {
		method, resource, query string
		status                  int
		body                    string
	}{
		{"GET", "", "", 200, `{"resource":[{"name":"password"},{"name":"profile"},{"name":"register"},{"name":"session"}]}`},
		{"GET", "", "as_list=true", 200, `{"resource":["password","profile","register","session"]}`},
		{"GET", "", "fields=*", 200, `{"resource":[{"label":"Password","name":"password"},{"label":"Profile","name":"profile"},{"label":"Register","name":"register"},{"label":"Session","name":"session"}]}`},
		{"POST", "", "", 400, ""},
		{"GET", "nosuch", "", 404, ""},
		{"GET", "session/extra", "", 404, ""},
		{"POST", "register", "", 403, ""},
		{"GET", "session", "", 401, ""},
		{"GET", "profile", "", 401, ""},
		{"POST", "password", "", 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.resource+" "+tc.query, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/api/v2/users/"+tc.resource+"?"+tc.query, nil)
			r = r.WithContext(service.WithTarget(r.Context(), &service.Target{Service: svc, Resource: tc.resource, Verb: tc.method}))
			w := httptest.NewRecorder()
			b.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("status = %d %s, want %d", w.Code, w.Body, tc.status)
			}
			if tc.body != "" && strings.TrimSpace(w.Body.String()) != tc.body {
				t.Errorf("body = %s", w.Body)
			}
		})
	}
}
