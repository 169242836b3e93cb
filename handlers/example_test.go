package handlers_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/handlers/recoverer"
	"github.com/portcullis-dev/portcullis/handlers/requestid"
	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// A stack of stages assembled in Go, without a system database: the API
// key stage checks keys against a fixed set of apps and puts the caller's
// identity in the context, where the final handler (any http.Handler, such
// as an rws.Proxy) reads it. A rejected request never reaches it and gets
// the error envelope.
func ExampleChain() {
	logger := slog.New(slog.DiscardHandler)
	recover, _ := recoverer.New(recoverer.Options{Logger: logger})
	reqID, _ := requestid.New(requestid.Options{})
	keys, _ := apikey.New(apikey.Options{Apps: apikey.NewStatic(
		apikey.App{ID: 7, Name: "mobile", APIKey: "k-mobile", Active: true, RoleID: 3, RoleName: "reader"},
	)})

	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := caller.IdentityFrom(r.Context())
		fmt.Fprintf(w, "app %s, role %s", id.AppName, id.RoleName)
	})
	h := handlers.Chain(recover, reqID, keys)(api)

	for _, key := range []string{"k-mobile", "wrong"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/anything", nil)
		req.Header.Set("X-Platform-API-Key", key)
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	// Output:
	// 200 app mobile, role reader
	// 401 {"error":{"code":401,"message":"Invalid API Key: the key supplied is not tied to any app.","context":null,"status_code":401}}
}
