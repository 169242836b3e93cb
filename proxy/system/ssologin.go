package system

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/store"
)

// ssoGroup returns the environment list a service type's sign-in belongs
// to (DreamFactory's groups): "oauth" for OpenID Connect and the OAuth 2.0
// providers, "adldap" for LDAP and Active Directory, "saml" for SAML 2.0;
// "" for any other type.
func ssoGroup(typ string) string {
	switch {
	case typ == "oidc" || strings.HasPrefix(typ, "oauth_"):
		return "oauth"
	case typ == "ldap" || typ == "adldap":
		return "adldap"
	case typ == "saml":
		return "saml"
	}
	return ""
}

// ssoLogins lists the active services of group in DreamFactory's shape of
// the environment's authentication block (getLoginApi), by name; [] when
// none.
func ssoLogins(snap *store.Snapshot, group string) []any {
	out := []any{}
	if snap == nil {
		return out
	}
	var svcs []*store.Service
	for _, s := range snap.Services {
		if s.IsActive && ssoGroup(s.Type) == group {
			svcs = append(svcs, s)
		}
	}
	sort.Slice(svcs, func(i, j int) bool { return svcs[i].Name < svcs[j].Name })
	for _, s := range svcs {
		var cfg struct {
			IconClass *string `json:"icon_class"`
		}
		_ = json.Unmarshal(s.ConfigJSON(), &cfg)
		name := strings.ToLower(s.Name)
		switch group {
		case "oauth":
			out = append(out, object{{"path", "user/session?service=" + name}, {"name", name}, {"label", s.Label},
				{"verb", []string{http.MethodGet, http.MethodPost}}, {"type", s.Type}, {"icon_class", cfg.IconClass}})
		case "adldap":
			out = append(out, object{{"path", "user/session?service=" + name}, {"name", name}, {"label", s.Label},
				{"verb", http.MethodPost}, {"payload", object{{"username", "string"}, {"password", "string"},
					{"service", name}, {"remember_me", "bool"}}}})
		case "saml":
			out = append(out, object{{"path", name + "/sso"}, {"name", name}, {"label", s.Label},
				{"verb", http.MethodGet}, {"type", s.Type}, {"icon_class", cfg.IconClass}})
		}
	}
	return out
}
