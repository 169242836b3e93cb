package proxy_test

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/portcullis-dev/portcullis/"

// allowed says which of the module's packages a package may import directly,
// as ARCHITECTURE.md and STYLE.md fix it. Patterns ending in "/..." match a
// folder and everything below it.
func allowed(pkg string) (rules []string, ok bool) {
	// Leaves import nothing of the module; any package may use them.
	// proxy/upstream: every backend that dials a configured host goes
	// through the one upstream allow list.
	leaves := []string{"proxy/apierr", "proxy/caller", "proxy/upstream"}
	storeTier := append([]string{"proxy/store", "dialects/..."}, leaves...)
	serviceTier := append([]string{"proxy/service", "proxy/identity", "proxy/sqldb/filter"}, storeTier...)
	switch {
	case pkg == "proxy/apierr", pkg == "proxy/caller", pkg == "proxy/upstream", pkg == "limiter", strings.HasPrefix(pkg, "limiter/"):
		return nil, true
	case pkg == "dialects" || strings.HasPrefix(pkg, "dialects/"):
		return []string{"dialects/..."}, true
	case pkg == "policy" || strings.HasPrefix(pkg, "policy/"):
		return []string{"proxy/caller", "policy/..."}, true
	case pkg == "proxy/store":
		return storeTier, true
	case pkg == "proxy/service":
		return append([]string{"proxy/store"}, storeTier...), true
	case pkg == "proxy/identity", pkg == "proxy/sqldb/filter":
		return storeTier, true
	case pkg == "handlers":
		return nil, true
	case strings.HasPrefix(pkg, "handlers/"):
		r := append([]string{"handlers/requestid"}, serviceTier...)
		switch pkg {
		case "handlers/rbac":
			r = append(r, "policy/...")
		case "handlers/ratelimit":
			r = append(r, "limiter/...")
		case "handlers/enforce":
			// schema-contract runtime enforcement fronts the contract engine.
			r = append(r, "proxy/contract")
		}
		return r, true
	case pkg == "proxy", pkg == "proxy/proxytest", strings.HasPrefix(pkg, "cmd/"),
		strings.HasPrefix(pkg, "examples/"), pkg == "bench" || strings.HasPrefix(pkg, "bench/"):
		return []string{"..."}, true
	case strings.HasPrefix(pkg, "proxy/"):
		// A backend: the leaves, service, store, the engines, and its own
		// subpackages.
		own := strings.SplitN(strings.TrimPrefix(pkg, "proxy/"), "/", 2)[0]
		r := append([]string{"proxy/" + own + "/..."}, serviceTier...)
		if own == "system" {
			// system/limit_cache serves the limiter's counters and system/limit
			// validates records with it.
			r = append(r, "limiter/...")
			// system/schema_contract fronts the schema-contract engine.
			r = append(r, "proxy/contract")
		}
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
		for _, imp := range fields[1:] {
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
