package proxy

import (
	"log/slog"
	"strings"

	"github.com/portcullis-dev/portcullis/handlers/cors"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// verbBits are DreamFactory's verb mask bits, as CORS records store them.
var verbBits = []struct {
	bit  int
	verb string
}{{1, "GET"}, {2, "POST"}, {4, "PUT"}, {8, "PATCH"}, {16, "DELETE"}, {32, "OPTIONS"}, {64, "HEAD"}}

// corsRules compiles the enabled CORS records of snap. A record whose
// pattern does not compile is skipped and logged (the system API refuses
// such records, so this only guards against edits made behind its back).
func corsRules(snap *store.Snapshot, log *slog.Logger) *cors.Set {
	var rules []cors.Rule
	for _, c := range snap.CORS {
		if !c.Enabled {
			continue
		}
		r := cors.Rule{Path: c.Path, Origins: splitList(c.Origin), Headers: splitList(c.Header),
			ExposedHeaders: splitList(c.ExposedHeader), MaxAge: c.MaxAge, SupportsCredentials: c.SupportsCredentials}
		for _, v := range verbBits {
			if c.Method&v.bit != 0 {
				r.Methods = append(r.Methods, v.verb)
			}
		}
		if _, err := cors.Compile([]cors.Rule{r}); err != nil {
			log.Warn("skipping CORS rule", "id", c.ID, "path", c.Path, "error", err)
			continue
		}
		rules = append(rules, r)
	}
	set, _ := cors.Compile(rules)
	return set
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
