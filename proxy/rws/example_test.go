package rws_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/portcullis-dev/portcullis/proxy/rws"
)

// A remote HTTP service used alone, in front of any URL, with its
// configuration in Go: no system database, no pipeline. The proxy adds a
// header, drops the client's cache-buster parameter and forwards the rest.
func ExampleNew() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s?%s key=%s", r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Api-Key"))
	}))
	defer upstream.Close()

	weather, err := rws.New(rws.Config{
		BaseURL:    upstream.URL + "/v1",
		Headers:    []rws.Header{{Name: "X-Api-Key", Value: "upstream-secret"}},
		Parameters: []rws.Parameter{{Name: "_", Exclude: true}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer weather.Close()

	mux := http.NewServeMux()
	mux.Handle("/weather/", http.StripPrefix("/weather", weather))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/weather/today/paris?units=metric&_=1700000000")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 GET /v1/today/paris?units=metric key=upstream-secret
}

// A service's JSON configuration, as the system API stores it, in
// DreamFactory's shape.
func ExampleParseConfig() {
	cfg, err := rws.ParseConfig([]byte(`{
		"base_url": "https://api.example.com/v2",
		"headers": [{"name": "X-User", "value": "{user.email}", "action": 31}],
		"parameters": {"api_version": "2"},
		"cache_enabled": true, "cache_ttl": 60, "timeout": 10
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.BaseURL, cfg.Headers[0].Name, cfg.Parameters[0].Name, cfg.CacheTTL, cfg.Timeout)

	_, err = rws.ParseConfig([]byte(`{"base_url": "ftp://x", "cache_ttl": -5}`))
	fmt.Println(err)
	// Output:
	// https://api.example.com/v2 X-User api_version 1m0s 10s
	// cache_ttl must be a whole number of seconds, 0 or more
	// base_url "ftp://x" must be an absolute http or https URL
}
