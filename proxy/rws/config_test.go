package rws_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/portcullis-dev/portcullis/proxy/rws"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		json string
		want rws.Config
	}{
		{
			name: "minimal",
			json: `{"base_url":"https://api.example.com"}`,
			want: rws.Config{BaseURL: "https://api.example.com"},
		},
		{
			name: "dreamfactory shape",
			json: `{"base_url":"http://10.0.0.5:8080/v1?k=1",
				"headers":[
					{"id":1,"service_id":9,"name":"X-Key","value":"{secret}","pass_from_client":false,"action":31},
					{"name":"Authorization","value":null,"pass_from_client":"1","action":["GET","post","MERGE"]}],
				"parameters":[
					{"name":"_","exclude":true,"outbound":true,"cache_key":true,"action":1},
					{"name":"limit","value":25,"outbound":false,"cache_key":false},
					{"name":"debug","value":true,"exclude":0}],
				"cache_enabled":"true","cache_ttl":"60","timeout":2.5,
				"options":{"CURLOPT_SSL_VERIFYPEER":false},"replace_link":false}`,
			want: rws.Config{
				BaseURL: "http://10.0.0.5:8080/v1?k=1",
				Headers: []rws.Header{
					{Name: "X-Key", Value: "{secret}", Verbs: rws.AllVerbs &^ rws.VerbOptions &^ rws.VerbHead},
					{Name: "Authorization", PassFromClient: true, Verbs: rws.VerbGet | rws.VerbPost | rws.VerbPatch},
				},
				Parameters: []rws.Parameter{
					{Name: "_", Exclude: true, Verbs: rws.VerbGet},
					{Name: "limit", Value: "25", NotOutbound: true, NotCacheKey: true},
					{Name: "debug", Value: "true"},
				},
				CacheEnabled: true, CacheTTL: time.Minute, Timeout: 2500 * time.Millisecond,
			},
		},
		{
			name: "plain objects",
			json: `{"base_url":"https://x.example","headers":{"X-B":"2","X-A":"{user.email}"},"parameters":{"p":1},"cache_enabled":false}`,
			want: rws.Config{
				BaseURL:    "https://x.example",
				Headers:    []rws.Header{{Name: "X-A", Value: "{user.email}"}, {Name: "X-B", Value: "2"}},
				Parameters: []rws.Parameter{{Name: "p", Value: "1"}},
			},
		},
		{
			name: "timeout 0 lifts the bound; nulls are absent",
			json: `{"base_url":"https://x.example","timeout":0,"headers":null,"cache_ttl":null}`,
			want: rws.Config{BaseURL: "https://x.example", Timeout: -1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rws.ParseConfig(json.RawMessage(tc.json))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(rws.Config{}, "Lookups", "Now")); diff != "" {
				t.Fatalf("config (-want +got):\n%s", diff)
			}
			if err := (rws.Type{}).ValidateConfig(json.RawMessage(tc.json)); err != nil {
				t.Fatalf("ValidateConfig: %v", err)
			}
		})
	}
}

func TestParseConfigReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name string
		json string
		want []string
	}{
		{"empty", ``, []string{"base_url is required"}},
		{"not an object", `[1]`, []string{"config must be a JSON object"}},
		{"missing base url", `{}`, []string{"base_url is required"}},
		{"relative", `{"base_url":"/v1"}`, []string{"absolute http or https URL"}},
		{"ftp", `{"base_url":"ftp://x.example"}`, []string{"absolute http or https URL"}},
		{"no host", `{"base_url":"http://"}`, []string{"has no host"}},
		{"fragment", `{"base_url":"http://x.example/#a"}`, []string{"fragment"}},
		{"base url not a string", `{"base_url":5}`, []string{"base_url must be a string"}},
		{
			"many at once",
			`{"base_url":"gopher://x",
			  "headers":[
				{"name":"Bad Name","value":"v"},
				{"value":"no name"},
				{"name":"X-Platform-API-Key","pass_from_client":true},
				{"name":"Content-Length","value":"3"},
				{"name":"X-A","value":"{shout(user.email)}"},
				{"name":"X-B","value":"{session.token}"},
				{"name":"X-C","value":"{user.emial}"},
				{"name":"X-D","value":"v","action":2048},
				{"name":"X-E","value":"v","action":["FETCH"]},
				{"name":"X-F","value":{"nested":1}},
				"not an object"],
			  "parameters":[{"name":"api_key","value":"x"},{"value":"no name"}],
			  "cache_enabled":"maybe","cache_ttl":-1,"timeout":"soon"}`,
			[]string{
				"absolute http or https URL",
				`headers[0].name "Bad Name" is not a valid header name`,
				"headers[1].name is required",
				"X-Platform-API-Key cannot be passed from the client",
				"Content-Length",
				`modifier "shout" is not allowed`,
				"{session.token} would forward a platform credential",
				"{user.emial} is not a known built-in",
				"headers[7].action",
				`unknown verb "FETCH"`,
				"headers[9].value",
				"headers[10] must be an object",
				`parameters[0].name "api_key" is a platform credential parameter`,
				"parameters[1].name is required",
				"cache_enabled must be true or false",
				"cache_ttl must be a whole number",
				"timeout must be a number",
			},
		},
		{"headers wrong type", `{"base_url":"http://x","headers":"X-A: 1"}`, []string{"headers must be an array"}},
		{"fractional ttl", `{"base_url":"http://x","cache_ttl":1.5}`, []string{"cache_ttl must be a whole number"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rws.ParseConfig(json.RawMessage(tc.json))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	_, err := rws.New(rws.Config{BaseURL: "https://x.example", CacheTTL: -time.Second,
		Headers: []rws.Header{{Name: "Transfer-Encoding", Value: "chunked"}}})
	if err == nil || !strings.Contains(err.Error(), "cache_ttl") || !strings.Contains(err.Error(), "Transfer-Encoding") {
		t.Fatalf("err = %v", err)
	}
}

func TestVerbs(t *testing.T) {
	tests := []struct {
		v      rws.Verbs
		method string
		want   bool
	}{
		{0, "DELETE", true},
		{rws.VerbGet, "GET", true},
		{rws.VerbGet, "get", true},
		{rws.VerbGet, "POST", false},
		{rws.VerbPost | rws.VerbPatch, "PATCH", true},
		{rws.AllVerbs, "TRACE", false},
	}
	for _, tc := range tests {
		if got := tc.v.Has(tc.method); got != tc.want {
			t.Errorf("Verbs(%d).Has(%s) = %v", tc.v, tc.method, got)
		}
	}
}
