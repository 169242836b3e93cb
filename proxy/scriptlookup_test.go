package proxy_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/script"
)

// TestScriptLookups checks DreamFactory's lookups in event scripts, in
// every engine (node, python3 and php where the environment names them),
// with the lookups in the system store of every
// database: tokens in a script's content are replaced before it runs
// (private lookups and the caller's built-ins included, unknown tokens
// left as they are, modifiers applied), platform.session.lookup holds the
// public lookups and lookup_secret the private ones, and a changed value
// reaches the next run.
func TestScriptLookups(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		in := proxytest.Start(t, sys, func(c *proxy.Config) { c.ScriptTimeout = 4 * time.Second })
		c := in.Admin(t)
		ctx := t.Context()
		must := mustStatus(t)
		must(c.Do(t, "POST", "/api/v2/db/_schema", map[string]any{"resource": []any{map[string]any{"name": "todo",
			"field": []any{map[string]any{"name": "id", "type": "id"}, map[string]any{"name": "title", "type": "string"}}}}}), 200)
		r := must(c.Do(t, "POST", "/api/v2/system/lookup", map[string]any{"resource": []any{
			map[string]any{"name": "region", "value": "eu west", "private": false},
			map[string]any{"name": "api_token", "value": "s3cret", "private": true}}}), 201)
		regionID := r.Map(t)["resource"].([]any)[0].(map[string]any)["id"]
		uid := fmt.Sprint(must(c.Do(t, "GET", "/api/v2/system/admin/session", nil), 200).Map(t)["id"])

		scripts := map[string]string{
			"lua": `event.response = {status_code = 200, content = {
				region = "{region}", token = "{api_token}", enc = "{urlencode(region)}", unknown = "{nope}",
				uid = "{user.id}", public = platform.session.lookup.region,
				secret = platform.session.lookup_secret.api_token,
				leak = platform.session.lookup.api_token or "none"}}`,
			"javascript": `var o = {a: 1}; event.response = {status_code: 200, content: {
				region: "{region}", token: "{api_token}", enc: "{urlencode(region)}", unknown: "{nope}",
				uid: "{user.id}", public: platform.session.lookup.region,
				secret: platform.session.lookup_secret.api_token,
				leak: platform.session.lookup.api_token || "none"}}`,
			"nodejs": `event.response = {status_code: 200, content: {
				region: "{region}", token: "{api_token}", enc: "{urlencode(region)}", unknown: "{nope}",
				uid: "{user.id}", public: platform.session.lookup.region,
				secret: platform.session.lookup_secret.api_token,
				leak: platform.session.lookup.api_token || "none"}};`,
			"python3": "event.response = {'status_code': 200, 'content': {'region': '{region}', 'token': '{api_token}',\n" +
				"    'enc': '{urlencode(region)}', 'unknown': '{nope}', 'uid': '{user.id}', 'public': platform.session.lookup.region,\n" +
				"    'secret': platform.session.lookup_secret.api_token, 'leak': platform.session.lookup.get('api_token', 'none')}}",
			"php": `$event['response'] = ['status_code' => 200, 'content' => ['region' => '{region}', 'token' => '{api_token}',
				'enc' => '{urlencode(region)}', 'unknown' => '{nope}', 'uid' => '{user.id}',
				'public' => $platform['session']['lookup']['region'],
				'secret' => $platform['session']['lookup_secret']['api_token'],
				'leak' => $platform['session']['lookup']['api_token'] ?? 'none']];`,
		}
		engines := []string{"lua", "javascript"}
		for _, eng := range extEngines {
			bin := os.Getenv(eng.env)
			if bin == "" {
				t.Logf("%s is not set: lookups in %s scripts are not tested", eng.env, eng.typ)
				continue
			}
			if err := script.SetInterpreter(eng.typ, bin); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = script.SetInterpreter(eng.typ, "") }()
			engines = append(engines, eng.typ)
		}
		for _, typ := range engines {
			t.Run(typ, func(t *testing.T) {
				name := "db._table.todo.get.pre_process"
				must(c.Do(t, "POST", "/api/v2/system/event_script/"+name, map[string]any{"type": typ,
					"content": scripts[typ], "is_active": true, "allow_event_modification": true}), 201)
				defer func() {
					must(c.Do(t, "DELETE", "/api/v2/system/event_script/"+name, nil), 200)
					if err := in.Proxy.Reload(ctx); err != nil {
						t.Fatal(err)
					}
				}()
				if err := in.Proxy.Reload(ctx); err != nil {
					t.Fatal(err)
				}
				got := must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200).Map(t)
				want := map[string]any{"region": "eu west", "token": "s3cret", "enc": "eu+west", "unknown": "{nope}",
					"uid": uid, "public": "eu west", "secret": "s3cret", "leak": "none"}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s = %v, want %v (answer %v)", k, got[k], v, got)
					}
				}
				// A changed value reaches the next run (a new variant).
				must(c.Do(t, "PATCH", fmt.Sprintf("/api/v2/system/lookup/%v", regionID), map[string]any{"value": "us east"}), 200)
				if err := in.Proxy.Reload(ctx); err != nil {
					t.Fatal(err)
				}
				got = must(c.Do(t, "GET", "/api/v2/db/_table/todo", nil), 200).Map(t)
				if got["region"] != "us east" || got["public"] != "us east" {
					t.Errorf("after the change: %v", got)
				}
				must(c.Do(t, "PATCH", fmt.Sprintf("/api/v2/system/lookup/%v", regionID), map[string]any{"value": "eu west"}), 200)
			})
		}
	})
}
