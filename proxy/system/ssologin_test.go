package system

import (
	"encoding/json"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/store"
)

func TestSSOLogins(t *testing.T) {
	snap := &store.Snapshot{Services: []*store.Service{
		{Name: "GitHub", Label: "GitHub", Type: "oauth_github", IsActive: true, Config: `{"icon_class":"fa-github"}`},
		{Name: "corp", Label: "Corp AD", Type: "adldap", IsActive: true},
		{Name: "dir", Label: "Directory", Type: "ldap", IsActive: false},
		{Name: "sso1", Label: "SSO", Type: "saml", IsActive: true},
		{Name: "db", Label: "DB", Type: "sqlite", IsActive: true},
		{Name: "id", Label: "ID", Type: "oidc", IsActive: true},
	}}
	for _, tc := range []struct{ group, want string }{
		{"oauth", `[{"path":"user/session?service=github","name":"github","label":"GitHub","verb":["GET","POST"],"type":"oauth_github","icon_class":"fa-github"},` +
			`{"path":"user/session?service=id","name":"id","label":"ID","verb":["GET","POST"],"type":"oidc","icon_class":null}]`},
		{"adldap", `[{"path":"user/session?service=corp","name":"corp","label":"Corp AD","verb":"POST","payload":{"username":"string","password":"string","service":"corp","remember_me":"bool"}}]`},
		{"saml", `[{"path":"sso1/sso","name":"sso1","label":"SSO","verb":"GET","type":"saml","icon_class":null}]`},
	} {
		got, err := json.Marshal(ssoLogins(snap, tc.group))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.group, got, tc.want)
		}
	}
	if got, _ := json.Marshal(ssoLogins(nil, "saml")); string(got) != "[]" {
		t.Errorf("nil snapshot: %s", got)
	}
}
