package proxy_test

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/portcullis-dev/portcullis/"

// leaves are the packages below proxy/ that are not backends: the shared
// vocabulary and the engines with no HTTP in them (ARCHITECTURE.md,
// "proxy/ leaves"). Every stage and backend may import them; they import
// each other and the top-level engines, never a backend, a stage or the
// proxy root. Each entry says why it is shared.
var leaves = map[string]string{
	"proxy/apierr":      "the error envelope, written in one place",
	"proxy/caller":      "the request's identity, grants, lookups and request id, put in the context by the stages",
	"proxy/service":     "what a backend is (Type, Backend, Target, Registry) and inner calls through the pipeline",
	"proxy/store":       "the system database: models, migrations, configuration snapshots",
	"proxy/identity":    "the sign-in engine: credentials, tokens, revocation, throttling",
	"proxy/contract":    "the schema-contract engine: canonical table shapes and drift",
	"proxy/filter":      "DreamFactory's filter language, compiled by sqldb and by the system API",
	"proxy/mail":        "the one Mailer the composition root hands to every backend that sends mail",
	"proxy/upstream":    "the upstream allow list and its dialer, for every backend that dials a configured host",
	"proxy/logship":     "the log-shipping engine: events, redaction, GELF connectors; fed by the handlers/gelf stage, configured by the logstash backend",
	"proxy/scriptevent": "a script's event and platform over HTTP, shared by the handlers/script stage and the scripted-service backend",
}

// engines have no HTTP in them: they may not import net/http.
var engines = []string{"policy/...", "limiter/...", "script/...", "dialects/...", "proxy/caller", "proxy/store",
	"proxy/identity", "proxy/contract", "proxy/filter", "proxy/logship"}

// topEngines are the top-level engine folders; leaves may use them.
var topEngines = []string{"dialects/...", "policy/...", "limiter/...", "script/..."}

// fronts lists, for a stage or backend, the engine it fronts beyond the
// leaves, with the reason.
var fronts = map[string][]string{
	"handlers/rbac":      {"policy/..."},                // role-based access decisions
	"handlers/ratelimit": {"limiter/..."},               // counts requests against limits
	"proxy/system":       {"limiter/...", "script/..."}, // system/limit_cache reads and resets the counters; system/limit validates limits; system/event_script checks a script's syntax on save
	"handlers/enforce":   {"dialects/..."},              // keys shapes by the live *dialects.Table the backend serves
	"handlers/script":    {"script/..."},                // runs event scripts
	"proxy/scriptsvc":    {"script/..."},                // runs scripted services
	"proxy/oidc":         {"proxy/user"},                // a sign-in service: implements user.ServiceSignIn and answers identity errors through user.APIError, as password sign-in does
	"proxy/ldap":         {"proxy/user"},                // a sign-in service, as proxy/oidc
	"proxy/saml":         {"proxy/user"},                // a sign-in service, as proxy/oidc
}

func isLeaf(pkg string) bool { _, ok := leaves[pkg]; return ok }

// allowed says which of the module's packages pkg may import directly.
func allowed(pkg string) (rules []string, ok bool) {
	var leafRules []string
	for l := range leaves {
		leafRules = append(leafRules, l)
	}
	switch {
	case pkg == "limiter" || strings.HasPrefix(pkg, "limiter/"):
		return []string{"limiter/..."}, true
	case pkg == "dialects" || strings.HasPrefix(pkg, "dialects/"):
		return []string{"dialects/..."}, true
	case pkg == "script" || strings.HasPrefix(pkg, "script/"):
		return []string{"script/..."}, true
	case pkg == "policy" || strings.HasPrefix(pkg, "policy/"):
		return []string{"proxy/caller", "policy/..."}, true
	case isLeaf(pkg):
		return append(leafRules, topEngines...), true
	case pkg == "handlers":
		return nil, true
	case strings.HasPrefix(pkg, "handlers/"):
		// A stage: the leaves and the engine it fronts; never another stage.
		return append(leafRules, fronts[pkg]...), true
	case pkg == "proxy", pkg == "proxy/proxytest", strings.HasPrefix(pkg, "cmd/"),
		strings.HasPrefix(pkg, "examples/"), pkg == "bench" || strings.HasPrefix(pkg, "bench/"):
		return []string{"..."}, true
	case strings.HasPrefix(pkg, "proxy/"):
		// A backend: the leaves, dialects, the engine it fronts and its own
		// subpackages; never another backend.
		own := strings.SplitN(strings.TrimPrefix(pkg, "proxy/"), "/", 2)[0]
		r := append(append(leafRules, "proxy/"+own+"/...", "dialects/..."), fronts["proxy/"+own]...)
		return r, true
	}
	return nil, false
}

func match(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func TestImportsFollowTheArchitecture(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		rules, ok := allowed(pkg)
		if !ok {
			t.Errorf("package %s is in no folder ARCHITECTURE.md allows", pkg)
			continue
		}
		engine := false
		for _, e := range engines {
			engine = engine || match(e, pkg)
		}
		for _, imp := range fields[1:] {
			if engine && (imp == "net/http" || strings.HasPrefix(imp, "net/http/")) {
				t.Errorf("%s is an engine and imports %s: engines have no HTTP in them", pkg, imp)
			}
			dep, ours := strings.CutPrefix(imp, mod)
			if !ours || dep == pkg {
				continue
			}
			permitted := false
			for _, r := range rules {
				if match(r, dep) {
					permitted = true
					break
				}
			}
			if !permitted {
				t.Errorf("%s imports %s, which the architecture forbids", pkg, dep)
			}
		}
	}
}

// TestImportRulesBite checks the rules on made-up imports: a stage
// importing a backend or another stage, a backend importing another
// backend, and a leaf importing a backend are refused.
func TestImportRulesBite(t *testing.T) {
	for _, tc := range []struct{ pkg, dep string }{
		{"handlers/session", "proxy/sqldb"},
		{"handlers/session", "handlers/requestid"},
		{"proxy/sqldb", "proxy/system"},
		{"proxy/mcp", "proxy/rws"},
		{"proxy/identity", "proxy/user"},
		{"proxy/store", "handlers/rbac"},
		{"handlers/rbac", "proxy"},
	} {
		rules, ok := allowed(tc.pkg)
		if !ok {
			t.Errorf("%s: no rules", tc.pkg)
			continue
		}
		for _, r := range rules {
			if match(r, tc.dep) {
				t.Errorf("%s may import %s (rule %q)", tc.pkg, tc.dep, r)
			}
		}
	}
}
