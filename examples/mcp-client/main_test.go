package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestAgainstTheDemo runs the example against an instance seeded as
// `make run` seeds it: the sample database and its tools at /api/v2/ai.
func TestAgainstTheDemo(t *testing.T) {
	in := proxytest.StartSQLite(t)
	key, err := proxy.SeedDemo(t.Context(), in.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Proxy.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = run(context.Background(), []string{"-url", in.URL + "/api/v2/ai", "-key", key,
		"-tool", "query_records", "-args", `{"table":"customer","fields":["id","name"],"limit":2,"order":"id"}`}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"tool list_tables", "tool query_records", `{"resource":[{"id":1,"name":`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"-url", in.URL + "/api/v2/ai", "-key", key,
		"-tool", "query_records", "-args", `{"table":"nope"}`}, &out); err == nil || !strings.Contains(out.String(), `"code":`) {
		t.Errorf("a missing table: %v\n%s", err, out.String())
	}
}
