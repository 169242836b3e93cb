package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/portcullis-dev/portcullis/handlers/ratelimit"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// A program without a system database configures its limits in Go. Here
// every signed-in user may make two calls a minute; the identity would come
// from the apikey and session stages (or the program's own authentication).
func ExampleStatic() {
	limits, err := ratelimit.Static([]limiter.Limit{
		{ID: 1, Name: "two a minute", Type: limiter.TypeEachUser, Rate: 2, Period: limiter.PeriodMinute, Active: true},
	}, nil) // nil: counters in this process's memory
	if err != nil {
		panic(err)
	}
	stage, err := ratelimit.New(ratelimit.Options{Limits: limits})
	if err != nil {
		panic(err)
	}
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))

	user := &caller.Identity{UserID: 42, Requestor: caller.API}
	for range 3 {
		r := httptest.NewRequest(http.MethodGet, "/hello", nil)
		r = r.WithContext(caller.WithIdentity(r.Context(), user))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		fmt.Println(rec.Code, rec.Header().Get("X-RateLimit-Remaining"))
	}
	// Output:
	// 200 1
	// 200 0
	// 429 0
}
