package oidc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/oidc"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

func TestTypesDescribeThemselves(t *testing.T) {
	types := oidc.Types()
	if len(types) != len(oidc.Names) {
		t.Fatalf("%d types for %d names", len(types), len(oidc.Names))
	}
	for i, typ := range types {
		info := typ.Info()
		if info.Name != oidc.Names[i] || info.Group != service.GroupOAuth || info.Label == "" || info.Description == "" {
			t.Errorf("info %+v", info)
		}
		cs, ok := typ.(service.ConfigSchemer)
		if !ok {
			t.Fatalf("%s has no config_schema", info.Name)
		}
		seen := map[string]service.ConfigField{}
		for _, f := range cs.ConfigSchema() {
			if _, dup := seen[f.Name]; dup || f.Label == "" || f.Type == "" {
				t.Errorf("%s: field %+v (duplicate: %v)", info.Name, f, dup)
			}
			seen[f.Name] = f
		}
		for _, k := range []string{"client_id", "client_secret", "redirect_url", "default_role", "icon_class", "allow_new_users", "scopes"} {
			if _, ok := seen[k]; !ok {
				t.Errorf("%s: config_schema lacks %s", info.Name, k)
			}
		}
		if !seen["client_id"].Required || !seen["redirect_url"].Required || seen["client_secret"].Type != "password" {
			t.Errorf("%s: %+v %+v %+v", info.Name, seen["client_id"], seen["redirect_url"], seen["client_secret"])
		}
		// Every key the schema names is one the configuration reads.
		var known map[string]any
		cfgJSON, _ := json.Marshal(oidc.Config{})
		_ = json.Unmarshal(cfgJSON, &known)
		for k := range seen {
			if _, ok := known[k]; !ok {
				t.Errorf("%s: config_schema names %s, which Config does not read", info.Name, k)
			}
		}
	}
	doc := oidc.Document("Test")
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Validate(t.Context()); err != nil {
		t.Fatalf("document: %v", err)
	}
	if loaded.Paths.Find("/sso") == nil || loaded.Paths.Find("/sso").Get == nil || loaded.Paths.Find("/sso").Post == nil {
		t.Fatalf("paths: %v", loaded.Paths.InMatchingOrder())
	}
}

func TestConfigValidation(t *testing.T) {
	base := `"client_id":"c","client_secret":"s","redirect_url":"https://api.example.com/api/v2/user/session?oauth_callback=true&service=x"`
	tests := []struct {
		typ, config string
		want        []string // "" means valid
	}{
		{oidc.TypeName, `{"client_id":"c","redirect_url":"https://x/cb","discovery_document":"https://idp.example.com"}`, nil},
		{oidc.TypeName, `{"client_id":"c","redirect_url":"https://x/cb","discovery_document":"http://idp.example.com"}`, []string{"discovery_document", "must be an https URL"}},
		{oidc.TypeName, `{"client_id":"c","redirect_url":"https://x/cb","discovery_document":"http://127.0.0.1:8080"}`, nil},
		{oidc.TypeName, `{"client_id":"c","redirect_url":"https://x/cb","discovery_document":"http://localhost:8080"}`, nil},
		{oidc.TypeName, `{"redirect_url":"https://x/cb"}`, []string{"client_id is required", "issuer is required without discovery_document", "jwks_uri is required"}},
		{oidc.TypeGoogle, `{` + base + `}`, nil},
		{oidc.TypeGoogle, `{"client_id":"c","redirect_url":"https://x/cb"}`, []string{"client_secret is required"}},
		{oidc.TypeGoogle, `{` + base + `,"discovery_document":"ftp://x"}`, []string{"discovery_document"}},
		{oidc.TypeAzureAD, `{` + base + `}`, []string{"tenant_id is required"}},
		{oidc.TypeAzureAD, `{` + base + `,"tenant_id":"contoso.onmicrosoft.com"}`, nil},
		{oidc.TypeAzureAD, `{` + base + `,"tenant_id":"a/b"}`, []string{"tenant_id"}},
		{oidc.TypeAzureAD, `{` + base + `,"tenant_id":"common","authority_url":"http://login.example.com"}`, []string{"authority_url"}},
		{oidc.TypeMicrosoftLive, `{` + base + `}`, nil},
		{oidc.TypeGitHub, `{` + base + `}`, nil},
		{oidc.TypeGitHub, `{` + base + `,"user_endpoint":"https://ghe.example.com/api/v3/user"}`, nil},
		{oidc.TypeGitHub, `{"client_id":" ","redirect_url":"x"}`, []string{"client_id is required", "client_secret is required", "redirect_url"}},
		{oidc.TypeGeneric, `{` + base + `}`, []string{"auth_endpoint is required", "token_endpoint is required", "user_endpoint is required"}},
		{oidc.TypeGeneric, `{` + base + `,"auth_endpoint":"https://a","token_endpoint":"https://a/t","user_endpoint":"https://a/u"}`, nil},
		{oidc.TypeGeneric, `{` + base + `,"auth_endpoint":"https://a","token_endpoint":"http://a/t","user_endpoint":"https://a/u"}`, []string{"token_endpoint", "https"}},
		{oidc.TypeGitHub, `[]`, []string{"config"}},
		{oidc.TypeLinkedIn, `{` + base + `}`, nil},
		{oidc.TypeFacebook, `{` + base + `}`, nil},
		{oidc.TypeBitbucket, `{` + base + `,"user_endpoint":"http://api.bitbucket.example/2.0/user"}`, []string{"user_endpoint", "https"}},
	}
	for _, tc := range tests {
		t.Run(tc.typ+" "+tc.config, func(t *testing.T) {
			err := oidc.Type{Name: tc.typ}.ValidateConfig(json.RawMessage(tc.config))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v lacks %q", err, w)
				}
			}
		})
	}
}
