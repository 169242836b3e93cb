package policy

import (
	"fmt"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// benchRole builds a role of n entries spread like a real one: a few
// services, exact tables, table wildcards, a service-wide read and an
// all-services root entry, some with filters and fields.
func benchRole(n int) Role {
	r := Role{ID: 1, Name: "bench", Active: true}
	services := []string{"db", "crm", "files", "hr", "erp"}
	for i := 0; len(r.Accesses) < n; i++ {
		svc := services[i%len(services)]
		var a Access
		switch i % 4 {
		case 0:
			a = acc(svc, fmt.Sprintf("_table/t%d", i), VerbGet|VerbPost)
			a.Filters = []caller.Filter{{Name: "owner_id", Operator: "=", Value: "{user.id}"}}
		case 1:
			a = acc(svc, fmt.Sprintf("_table/t%d/*", i), VerbGet|VerbPatch)
			a.Fields = []string{"id", "name"}
		case 2:
			a = acc(svc, fmt.Sprintf("_proc/p%d", i), VerbPost)
		case 3:
			a = acc(svc, fmt.Sprintf("_schema/t%d", i), VerbGet)
		}
		a.RequestorMask = RequestorBoth
		r.Accesses = append(r.Accesses, a)
	}
	r.Accesses[n-2] = acc("db", "*", VerbGet)
	r.Accesses[n-1] = acc("", "", VerbGet)
	return r
}

func benchAuthorizer(b *testing.B, n, cache int) *Authorizer {
	a, err := New([]Role{benchRole(n)}, WithCacheSize(cache))
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func BenchmarkAuthorize(b *testing.B) {
	for _, n := range []int{10, 60} {
		// An allowed call matched by a wildcard entry, and a refused call
		// that no entry matches (Casbin scans every line).
		allow := call{"crm", "_table/t1/5", "PATCH", caller.API}
		deny := call{"mail", "_table/x", "DELETE", caller.API}

		b.Run(fmt.Sprintf("entries=%d/hit", n), func(b *testing.B) {
			a := benchAuthorizer(b, n, DefaultCacheSize)
			if d := a.Authorize(1, allow.service, allow.component, allow.verb, allow.requestor); !d.Allowed {
				b.Fatalf("refused: %+v", d)
			}
			b.ReportAllocs()
			for b.Loop() {
				a.Authorize(1, allow.service, allow.component, allow.verb, allow.requestor)
			}
		})
		b.Run(fmt.Sprintf("entries=%d/hit-parallel", n), func(b *testing.B) {
			a := benchAuthorizer(b, n, DefaultCacheSize)
			comps := make([]string, 256)
			for i := range comps {
				comps[i] = fmt.Sprintf("_table/t1/%d", i)
				a.Authorize(1, "crm", comps[i], "GET", caller.API)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					a.Authorize(1, "crm", comps[i&255], "GET", caller.API)
					i++
				}
			})
		})
		b.Run(fmt.Sprintf("entries=%d/hit-record-ids", n), func(b *testing.B) {
			// Distinct record ids under a table: no entry looks at the id,
			// so they share one cache entry.
			a := benchAuthorizer(b, n, DefaultCacheSize)
			comps := make([]string, 8192)
			for i := range comps {
				comps[i] = fmt.Sprintf("_table/t1/%d", i)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				a.Authorize(1, "crm", comps[i&8191], "PATCH", caller.API)
				i++
			}
		})
		b.Run(fmt.Sprintf("entries=%d/hit-denied", n), func(b *testing.B) {
			a := benchAuthorizer(b, n, DefaultCacheSize)
			b.ReportAllocs()
			for b.Loop() {
				a.Authorize(1, deny.service, deny.component, deny.verb, deny.requestor)
			}
		})
		b.Run(fmt.Sprintf("entries=%d/miss-allow", n), func(b *testing.B) {
			a := benchAuthorizer(b, n, 0)
			b.ReportAllocs()
			for b.Loop() {
				a.Authorize(1, allow.service, allow.component, allow.verb, allow.requestor)
			}
		})
		b.Run(fmt.Sprintf("miss-deny-full-scan/entries=%d", n), func(b *testing.B) {
			a := benchAuthorizer(b, n, 0)
			b.ReportAllocs()
			for b.Loop() {
				a.Authorize(1, deny.service, deny.component, deny.verb, deny.requestor)
			}
		})
		b.Run(fmt.Sprintf("entries=%d/miss-evict", n), func(b *testing.B) {
			// Cache of 1024 cycled through 8192 distinct table names (the
			// role's exact entries make it look at two segments, so each
			// is its own key): every call misses, decides and evicts.
			a := benchAuthorizer(b, n, 1024)
			comps := make([]string, 8192)
			for i := range comps {
				comps[i] = fmt.Sprintf("_table/z%d", i)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				a.Authorize(1, "crm", comps[i&8191], "GET", caller.API)
				i++
			}
		})
	}
}

func BenchmarkNew(b *testing.B) {
	for _, n := range []int{10, 60} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			roles := []Role{benchRole(n)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := New(roles); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSubstituteLookups(b *testing.B) {
	g := &caller.Grant{Filters: []caller.Filter{{Name: "owner_id", Operator: "=", Value: "{user.id}"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SubstituteLookups(g, testLookups); err != nil {
			b.Fatal(err)
		}
	}
}
