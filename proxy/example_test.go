package proxy_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Portcullis embedded in a program's own net/http server, under a path
// prefix, next to the program's routes. The system database is SQLite in
// the data directory; Init seeds it once and prints nothing on later runs.
func ExampleNew() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "portcullis-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	cfg := proxy.Config{DataDir: dir, Logger: slog.New(slog.DiscardHandler)}
	if _, err := proxy.Init(ctx, cfg, store.InitOptions{
		Email: "admin@example.com", Password: "change-me-now", Name: "Admin",
	}); err != nil {
		fmt.Println(err)
		return
	}
	srv, err := proxy.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from the program\n")
	})
	mux.Handle("/portcullis/", http.StripPrefix("/portcullis", srv))

	for _, path := range []string{"/hello", "/portcullis/healthz", "/portcullis/api/v2/nosuch"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		fmt.Println(path, rec.Code, firstLine(rec.Body.String()))
	}
	// Output:
	// /hello 200 hello from the program
	// /portcullis/healthz 200 {"status":"ok","version":"0.1.0-dev"}
	// /portcullis/api/v2/nosuch 404 {"error":{"code":404,"message":"Service 'nosuch' not found.","context":null,"status_code":404}}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
