package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/portcullis-dev/portcullis/handlers"
)

func TestChainRunsStagesInOrderAndSkipsNil(t *testing.T) {
	var order []string
	stage := func(name string) handlers.Stage {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				order = append(order, name)
				next.ServeHTTP(w, r)
			})
		}
	}
	h := handlers.Chain(stage("a"), nil, stage("b"))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		order = append(order, "handler")
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if got := len(order); got != 3 || order[0] != "a" || order[1] != "b" || order[2] != "handler" {
		t.Fatalf("order = %v", order)
	}
}
