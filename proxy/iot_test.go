package proxy_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apidocs"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestIoTServices creates an amqp and an mqtt service through the system
// API, publishes and consumes through the pipeline, and runs a
// subscription that sends every message to the built-in e-mail service,
// whose .eml files show the message text.
func TestIoTServices(t *testing.T) {
	amqpURL, mqttURL := os.Getenv("PORTCULLIS_TEST_AMQP"), os.Getenv("PORTCULLIS_TEST_MQTT")
	if amqpURL == "" || mqttURL == "" {
		t.Skip("PORTCULLIS_TEST_AMQP and PORTCULLIS_TEST_MQTT are needed")
	}
	au, err := url.Parse(amqpURL)
	if err != nil {
		t.Fatal(err)
	}
	mu, err := url.Parse(mqttURL)
	if err != nil {
		t.Fatal(err)
	}
	apass, _ := au.User.Password()
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	expect := func(what string, r *proxytest.Response, status int) *proxytest.Response {
		t.Helper()
		if r.Status != status {
			t.Fatalf("%s = %d %s, want %d", what, r.Status, r.Body, status)
		}
		return r
	}
	r := expect("bad config", admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{
		"resource": []any{map[string]any{"name": "bad", "label": "Bad", "type": "mqtt", "is_active": true,
			"config": map[string]any{"port": "x", "use_tls": "maybe"}}}}), http.StatusBadRequest)
	for _, want := range []string{"host: required", "is not a number"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("bad config message lacks %q: %s", want, r.Body)
		}
	}

	configs := map[string]map[string]any{
		"amqp": {"host": au.Hostname(), "port": au.Port(), "username": au.User.Username(), "password": apass},
		"mqtt": {"host": mu.Hostname(), "port": mu.Port(), "client_id": "portcullis-test"},
	}
	stamp := fmt.Sprint(time.Now().UnixNano())
	for _, kind := range []string{"amqp", "mqtt"} {
		t.Run(kind, func(t *testing.T) {
			expect("create", admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{
				"resource": []any{map[string]any{"name": "m" + kind, "label": kind, "type": kind, "is_active": true, "config": configs[kind]}}}), http.StatusCreated)
			base := "/api/v2/m" + kind
			src := map[string]any{"queue": map[string]any{"name": "pctest-e2e-" + stamp, "arguments": map[string]any{"x-expires": 60000}}}
			if kind == "mqtt" {
				src = map[string]any{"topic": "pctest/e2e/" + stamp}
			}
			with := func(extra map[string]any) map[string]any {
				m := map[string]any{}
				for k, v := range src {
					m[k] = v
				}
				for k, v := range extra {
					m[k] = v
				}
				return m
			}
			if kind == "amqp" {
				expect("publish", admin.Do(t, http.MethodPost, base+"/pub", with(map[string]any{"message": "queued"})), http.StatusOK)
				r := expect("consume", admin.Do(t, http.MethodPost, base+"/consume", with(map[string]any{"limit": 1, "timeout": 2})), http.StatusOK)
				if !strings.Contains(string(r.Body), `"message":"queued"`) {
					t.Errorf("consume = %s", r.Body)
				}
			}
			expect("subscribe", admin.Do(t, http.MethodPost, base+"/sub", with(map[string]any{"service": map[string]any{
				"endpoint": "api/v2/email", "payload": map[string]any{"to": "ops@example.com", "subject": "IoT " + kind, "body_text": "Got {message}"}}})), http.StatusOK)
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(string(admin.Do(t, http.MethodGet, base+"/sub", nil).Body), `"connected":true`) {
				if time.Now().After(deadline) {
					t.Fatal("the subscription did not connect")
				}
				time.Sleep(100 * time.Millisecond)
			}
			expect("publish", admin.Do(t, http.MethodPost, base+"/pub", with(map[string]any{"message": "reading-" + kind, "retain": false})), http.StatusOK)
			dir := filepath.Join(in.Config.DataDir, "storage", "email")
			for found := false; !found; {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
					found = found || strings.Contains(string(data), "Got reading-"+kind)
				}
				if time.Now().After(deadline) {
					t.Fatalf("no mail with the message; status %s", admin.Do(t, http.MethodGet, base+"/sub", nil).Body)
				}
				time.Sleep(100 * time.Millisecond)
			}
			expect("stop", admin.Do(t, http.MethodDelete, base+"/sub", nil), http.StatusOK)

			doc := admin.Do(t, http.MethodGet, "/api/v2/api_docs/m"+kind, nil)
			if doc.Status != http.StatusOK || !strings.Contains(string(doc.Body), "/consume") {
				t.Fatalf("api docs = %d %.200s", doc.Status, doc.Body)
			}
			if err := apidocs.Validate(t.Context(), doc.Body); err != nil {
				t.Errorf("invalid document: %v", err)
			}
		})
	}
}
