package handlers

import "net/http"

// Stage is one pipeline stage.
type Stage = func(http.Handler) http.Handler

// Chain composes stages so that the first one given sees a request first:
// Chain(a, b)(h) is a(b(h)). Nil stages are skipped, so optional stages can
// be listed in place.
func Chain(stages ...Stage) Stage {
	return func(next http.Handler) http.Handler {
		for i := len(stages) - 1; i >= 0; i-- {
			if stages[i] != nil {
				next = stages[i](next)
			}
		}
		return next
	}
}
