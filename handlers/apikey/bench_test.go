package apikey

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// BenchmarkStage measures the API key stage on a request whose key names
// one of 200 apps: reading the header, the lookup, the constant-time
// compare and the identity put in the context.
func BenchmarkStage(b *testing.B) {
	var list []App
	for i := range 200 {
		list = append(list, App{ID: int64(i + 1), Name: fmt.Sprintf("app%d", i), APIKey: fmt.Sprintf("%064x", i*7919+1), Active: true, RoleID: 3, RoleName: "readers"})
	}
	stage, err := New(Options{Apps: NewStatic(list...)})
	if err != nil {
		b.Fatal(err)
	}
	var seen *caller.Identity
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = caller.IdentityFrom(r.Context()) }))
	for _, bc := range []struct {
		name string
		set  func(r *http.Request)
		url  string
	}{
		{"header", func(r *http.Request) { r.Header.Set(Header, list[123].APIKey) }, "/api/v2/db/_table/contact"},
		{"query", func(*http.Request) {}, "/api/v2/db/_table/contact?limit=5&api_key=" + list[123].APIKey},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, bc.url, nil)
			bc.set(r)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				seen = nil
				h.ServeHTTP(w, r)
			}
			if seen == nil || seen.AppID != list[123].ID {
				b.Fatalf("identity %+v", seen)
			}
		})
	}
}
