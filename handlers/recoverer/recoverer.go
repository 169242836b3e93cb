package recoverer

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// Options configures the stage.
type Options struct {
	// Logger receives the panic and its stack; required.
	Logger *slog.Logger
}

// New returns the stage.
func New(opts Options) (func(http.Handler) http.Handler, error) {
	if opts.Logger == nil {
		return nil, errors.New("recoverer: Logger is required")
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if v == http.ErrAbortHandler {
					panic(v)
				}
				opts.Logger.ErrorContext(r.Context(), "panic serving request",
					"method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				apierr.Write(w, apierr.Internal(fmt.Errorf("panic: %v", v)))
			}()
			next.ServeHTTP(w, r)
		})
	}, nil
}
