package soap_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/apidocs"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestEndToEnd creates a soap service through the system API and calls it
// through the whole pipeline.
func TestEndToEnd(t *testing.T) {
	srv := newTestServer(t)
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)

	r := admin.Do(t, http.MethodGet, "/api/v2/system/service_type?fields=name", nil)
	if !strings.Contains(string(r.Body), `"soap"`) {
		t.Fatalf("service_type does not list soap: %s", r.Body)
	}
	create := func(config map[string]any) *proxytest.Response {
		return admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{
			"resource": []any{map[string]any{"name": "calc", "label": "Calc", "type": "soap", "is_active": true, "config": config}}})
	}
	r = create(map[string]any{"wsdl": srv.URL + "/calc.wsdl", "options": map[string]any{"stream_context": map[string]any{"ssl": map[string]any{"verify_peer": false}}}})
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "TLS verification") {
		t.Fatalf("TLS off: %d %s", r.Status, r.Body)
	}
	if r = create(map[string]any{"wsdl": srv.URL + "/calc.wsdl"}); r.Status >= 300 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if srv.wsdlHits != 0 {
		t.Errorf("the WSDL was fetched on save")
	}
	r = admin.Do(t, http.MethodGet, "/api/v2/calc", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `{"name":"Add"}`) {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	r = admin.Do(t, http.MethodPost, "/api/v2/calc/add", map[string]any{"a": 20, "b": 22})
	if r.Status != 200 || string(r.Body) != `{"AddResult":42}` {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	r = admin.Do(t, http.MethodGet, "/api/v2/calc/Add?a=1&b=2", nil)
	if r.Status != 200 || string(r.Body) != `{"AddResult":3}` {
		t.Fatalf("GET add: %d %s", r.Status, r.Body)
	}
	r = admin.Do(t, http.MethodPost, "/api/v2/calc/nothing", map[string]any{})
	if r.Status != 404 {
		t.Fatalf("unknown: %d %s", r.Status, r.Body)
	}
	r = admin.Do(t, http.MethodGet, "/api/v2/api_docs/calc", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"/echoperson"`) {
		t.Fatalf("api_docs: %d %s", r.Status, r.Body)
	}
	if err := apidocs.Validate(t.Context(), r.Body); err != nil {
		t.Fatalf("api_docs document: %v", err)
	}
}

// TestStagesApply checks that the platform's stages apply to a SOAP
// service as to any other: a pre_process script changes the SOAP request
// payload, a logstash service receives the call's event, and a rate limit
// answers 429 on the second call.
func TestStagesApply(t *testing.T) {
	srv := newTestServer(t)
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	ctx := t.Context()
	must := func(r *proxytest.Response, what string) map[string]any {
		t.Helper()
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("%s: %d %s", what, r.Status, r.Body)
		}
		return r.Map(t)
	}
	first := func(m map[string]any) map[string]any { return m["resource"].([]any)[0].(map[string]any) }
	reload := func() {
		t.Helper()
		if err := in.Proxy.Reload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	svc := first(must(admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "calc", "label": "Calc", "type": "soap", "is_active": true, "config": map[string]any{"wsdl": srv.URL + "/calc.wsdl"}}}}), "create soap"))
	role := first(must(admin.Do(t, http.MethodPost, "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{
		"name": "calc users", "is_active": true, "role_service_access_by_role_id": []any{
			map[string]any{"service_id": svc["id"], "component": "*", "verb_mask": 31, "requestor_mask": 3}}}}}), "create role"))
	app := first(must(admin.Do(t, http.MethodPost, "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{
		"name": "calc-app", "is_active": true, "role_id": role["id"]}}}), "create app"))
	user := &proxytest.Client{Inst: in, APIKey: app["api_key"].(string)}

	// A GELF collector over TCP: NUL-terminated JSON.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	events := make(chan map[string]any, 20)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					b, err := br.ReadBytes(0)
					if err != nil {
						return
					}
					var m map[string]any
					if json.Unmarshal(b[:len(b)-1], &m) == nil {
						events <- m
					}
				}
			}()
		}
	}()
	must(admin.Do(t, http.MethodPost, "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "log", "label": "Log", "type": "logstash", "is_active": true, "config": map[string]any{
			"host": "127.0.0.1", "port": ln.Addr().(*net.TCPAddr).Port, "protocol": "tcp",
			"context": []string{"_event.request", "_event.response", "_platform.session.app"}}}}}), "create logstash")
	must(admin.Do(t, http.MethodPost, "/api/v2/system/event_script/calc.add.post.pre_process", map[string]any{
		"type": "lua", "is_active": true, "allow_event_modification": true,
		"content": `event.request.payload.a = event.request.payload.a * 10`}), "create script")
	reload()

	r := user.Do(t, http.MethodPost, "/api/v2/calc/add", map[string]any{"a": 4, "b": 2})
	if r.Status != 200 || string(r.Body) != `{"AddResult":42}` {
		t.Fatalf("add with the script: %d %s", r.Status, r.Body)
	}
	if body := srv.last().Body; !strings.Contains(body, "<a>40</a><b>2</b>") {
		t.Errorf("the script did not change the SOAP request: %s", body)
	}
	deadline := time.After(5 * time.Second)
	for found := false; !found; {
		select {
		case m := <-events:
			ev, _ := m["_event"].(map[string]any)
			req, _ := ev["request"].(map[string]any)
			resp, _ := ev["response"].(map[string]any)
			if req["service"] != "calc" || req["resource"] != "add" {
				continue // another request's event
			}
			found = true
			platform, _ := m["_platform"].(map[string]any)
			session, _ := platform["session"].(map[string]any)
			appInfo, _ := session["app"].(map[string]any)
			if req["method"] != "POST" || resp["status"] != float64(200) || appInfo["name"] != "calc-app" || m["level"] != float64(6) {
				t.Errorf("event: %v", m)
			}
			if content, _ := resp["content"].(map[string]any); content["AddResult"] != float64(42) {
				t.Errorf("event response content: %v", resp["content"])
			}
		case <-deadline:
			t.Fatal("the logstash collector received no event for the SOAP call")
		}
	}

	must(admin.Do(t, http.MethodPost, "/api/v2/system/limit", map[string]any{"resource": []any{map[string]any{
		"name": "one soap call", "type": "instance.service", "service_id": svc["id"], "rate": 1, "period": "minute", "is_active": true}}}), "create limit")
	reload()
	if r := user.Do(t, http.MethodGet, "/api/v2/calc/Add?a=1&b=2", nil); r.Status != 200 || string(r.Body) != `{"AddResult":3}` {
		t.Fatalf("first call under the limit: %d %s", r.Status, r.Body)
	}
	if r := user.Do(t, http.MethodGet, "/api/v2/calc/Add?a=1&b=2", nil); r.Status != http.StatusTooManyRequests {
		t.Fatalf("second call under a limit of 1: %d %s", r.Status, r.Body)
	}
}
