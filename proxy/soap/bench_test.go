package soap_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/soap"
)

// BenchmarkAdd compares a call of Add made directly to the SOAP server
// (a prepared envelope) with the same call as JSON through the backend
// alone and through the whole pipeline (API key, RBAC, limits, logging).
func BenchmarkAdd(b *testing.B) {
	srv := newTestServer(b)
	srv.noRecord = true
	envelope := `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><Add xmlns="http://example.org/calc"><a>2</a><b>3</b></Add></soap:Body></soap:Envelope>`
	client := srv.Client()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/soap", strings.NewReader(envelope))
			req.Header.Set("Content-Type", "text/xml; charset=utf-8")
			req.Header.Set("SOAPAction", `"http://example.org/calc/Add"`)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Contains(data, []byte("<AddResult>5</AddResult>")) {
				b.Fatalf("answer %s", data)
			}
		}
	})
	b.Run("backend", func(b *testing.B) {
		be := backendTB(b, map[string]any{"wsdl": srv.URL + "/calc.wsdl"})
		for b.Loop() {
			if got := call(b, be, "POST", "Add", `{"a":2,"b":3}`); got.body != `{"AddResult":5}` {
				b.Fatalf("answer %v", got)
			}
		}
	})
	b.Run("pipeline", func(b *testing.B) {
		in := proxytest.StartSQLite(b)
		admin := in.Admin(b)
		r := admin.Do(b, http.MethodPost, "/api/v2/system/service", map[string]any{
			"resource": []any{map[string]any{"name": "calc", "label": "Calc", "type": "soap", "is_active": true,
				"config": map[string]any{"wsdl": srv.URL + "/calc.wsdl"}}}})
		if r.Status >= 300 {
			b.Fatalf("create: %d %s", r.Status, r.Body)
		}
		for b.Loop() {
			if r := admin.Do(b, http.MethodPost, "/api/v2/calc/Add", `{"a":2,"b":3}`); string(r.Body) != `{"AddResult":5}` {
				b.Fatalf("answer %d %s", r.Status, r.Body)
			}
		}
	})
}

func backendTB(tb testing.TB, config map[string]any) *soap.Backend {
	raw, _ := json.Marshal(config)
	cfg, opts, err := soap.ParseConfig(raw)
	if err != nil {
		tb.Fatal(err)
	}
	be, err := soap.New(cfg, opts, soap.Settings{Name: "calc"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = be.Close() })
	return be
}
