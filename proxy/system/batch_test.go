package system

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// batchErrors returns context.errors of a batch failure as index → message.
func batchErrors(t *testing.T, r *resp) map[int64]string {
	t.Helper()
	e := r.obj(t)["error"].(map[string]any)
	if num(t, e["code"]) != 1000 || num(t, e["status_code"]) != 400 {
		t.Fatalf("not a batch error: %s", r.body)
	}
	out := map[int64]string{}
	for _, x := range e["context"].(map[string]any)["errors"].([]any) {
		m := x.(map[string]any)
		out[num(t, m["index"])] = m["message"].(string)
	}
	return out
}

func roleNames(t *testing.T, e *env) []string {
	t.Helper()
	var names []string
	for _, r := range e.must(http.StatusOK, http.MethodGet, "role?order=name", nil).list(t) {
		names = append(names, r["name"].(string))
	}
	return names
}

func TestBatchModes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		e.createID("role", map[string]any{"name": "taken"})
		batch := func(prefix string) map[string]any {
			return map[string]any{"resource": []any{
				map[string]any{"name": prefix + "1"},
				map[string]any{"name": "taken"},
				map[string]any{"name": prefix + "3"},
			}}
		}

		t.Run("default stops at the first failure and keeps earlier writes", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPost, "role", batch("a"))
			errs := batchErrors(t, r)
			if len(errs) != 1 || !strings.Contains(errs[1], "already exists") {
				t.Errorf("errors = %v", errs)
			}
			res := r.obj(t)["error"].(map[string]any)["context"].(map[string]any)["resource"].([]any)
			if len(res) != 2 || res[0].(map[string]any)["id"] == nil || res[1].(map[string]any)["error"] == nil {
				t.Errorf("context.resource = %v", res)
			}
			if diff := cmp.Diff([]string{"a1", "taken"}, roleNames(t, e)); diff != "" {
				t.Error(diff)
			}
		})

		t.Run("continue goes past failures", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPost, "role?continue=true", batch("c"))
			if errs := batchErrors(t, r); len(errs) != 1 || errs[1] == "" {
				t.Errorf("errors = %v", errs)
			}
			if diff := cmp.Diff([]string{"a1", "c1", "c3", "taken"}, roleNames(t, e)); diff != "" {
				t.Error(diff)
			}
		})

		t.Run("rollback undoes the whole batch", func(t *testing.T) {
			v := e.version()
			r := e.must(http.StatusBadRequest, http.MethodPost, "role?rollback=true", batch("r"))
			if !strings.Contains(r.errMsg(t), "All changes rolled back") {
				t.Errorf("message %q", r.errMsg(t))
			}
			if errs := batchErrors(t, r); len(errs) != 1 || errs[1] == "" {
				t.Errorf("errors = %v", errs)
			}
			if diff := cmp.Diff([]string{"a1", "c1", "c3", "taken"}, roleNames(t, e)); diff != "" {
				t.Error(diff)
			}
			if e.version() != v {
				t.Errorf("version bumped by a rolled-back batch")
			}
		})

		t.Run("rollback commits a good batch in one go", func(t *testing.T) {
			r := e.must(http.StatusCreated, http.MethodPost, "role?rollback=true&fields=name", []any{
				map[string]any{"name": "g1"}, map[string]any{"name": "g2"},
			})
			if diff := cmp.Diff([]map[string]any{{"name": "g1"}, {"name": "g2"}}, r.list(t)); diff != "" {
				t.Error(diff)
			}
		})

		ids := map[string]int64{}
		for _, r := range e.must(http.StatusOK, http.MethodGet, "role", nil).list(t) {
			ids[r["name"].(string)] = num(t, r["id"])
		}

		t.Run("batch update by records, continue", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPatch, "role?continue=true", map[string]any{"resource": []any{
				map[string]any{"id": ids["a1"], "description": "one"},
				map[string]any{"id": ids["c1"], "name": "taken"},
				map[string]any{"description": "no id"},
				map[string]any{"id": ids["c3"], "description": "three"},
			}})
			errs := batchErrors(t, r)
			if len(errs) != 2 || errs[1] == "" || !strings.Contains(errs[2], "no 'id'") {
				t.Errorf("errors = %v", errs)
			}
			for name, want := range map[string]string{"a1": "one", "c3": "three"} {
				got := e.must(http.StatusOK, http.MethodGet, "role/"+itoa(ids[name]), nil).obj(t)
				if got["description"] != want {
					t.Errorf("%s description = %v", name, got["description"])
				}
			}
		})

		t.Run("update by ids with one record", func(t *testing.T) {
			r := e.must(http.StatusOK, http.MethodPatch, "role?ids="+itoa(ids["g1"])+","+itoa(ids["g2"]), map[string]any{"is_active": false})
			if len(r.list(t)) != 2 {
				t.Errorf("result = %s", r.body)
			}
			if n := count[store.Role](e, "is_active = ?", false); n != 2 {
				t.Errorf("%d inactive roles", n)
			}
		})

		t.Run("update by filter", func(t *testing.T) {
			r := e.must(http.StatusOK, http.MethodPut, "role?filter=name%20like%20'g%25'", map[string]any{"description": "g"})
			if len(r.list(t)) != 2 {
				t.Errorf("result = %s", r.body)
			}
		})

		t.Run("delete by ids returns the ids, by filter, and refuses without either", func(t *testing.T) {
			r := e.must(http.StatusOK, http.MethodDelete, "role?ids="+itoa(ids["g1"])+","+itoa(ids["g2"]), nil)
			if diff := cmp.Diff([]map[string]any{{"id": jsonNum(ids["g1"])}, {"id": jsonNum(ids["g2"])}}, r.list(t)); diff != "" {
				t.Error(diff)
			}
			e.must(http.StatusBadRequest, http.MethodDelete, "role", nil)
			r = e.must(http.StatusOK, http.MethodDelete, "role?filter=name%3D'c1'&fields=name", nil)
			if diff := cmp.Diff([]map[string]any{{"name": "c1"}}, r.list(t)); diff != "" {
				t.Error(diff)
			}
			e.must(http.StatusOK, http.MethodDelete, "role", map[string]any{"resource": []any{map[string]any{"id": ids["c3"]}}})
			e.must(http.StatusOK, http.MethodDelete, "role?force=true", nil)
			if names := roleNames(t, e); len(names) != 0 {
				t.Errorf("roles left: %v", names)
			}
		})

		t.Run("a single bad record keeps its own status", func(t *testing.T) {
			e.must(http.StatusBadRequest, http.MethodPost, "role", map[string]any{"resource": []any{map[string]any{"name": ""}}})
			e.must(http.StatusBadRequest, http.MethodPost, "role", map[string]any{"resource": []any{}})
			e.must(http.StatusBadRequest, http.MethodPost, "role", "")
			e.must(http.StatusBadRequest, http.MethodPost, "role", "{not json")
			e.must(http.StatusBadRequest, http.MethodPost, "role", `{"resource":{"name":"x"}}`)
			e.must(http.StatusBadRequest, http.MethodPost, "role", `[1,2]`)
			e.must(http.StatusBadRequest, http.MethodPost, "role", map[string]any{"name": 5, "is_active": "maybe"})
		})
	})
}

func jsonNum(n int64) any { return jsonNumber([]byte(itoa(n))) }

func TestListParameters(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)
		var ids []int64
		for _, n := range []string{"delta", "alpha", "charlie", "bravo", "echo"} {
			ids = append(ids, e.createID("role", map[string]any{"name": n, "is_active": n != "echo", "description": "role " + n}))
		}
		names := func(r *resp) []string {
			var out []string
			for _, x := range r.list(t) {
				out = append(out, x["name"].(string))
			}
			return out
		}
		tests := []struct {
			name  string
			query string
			want  []string
		}{
			{"default order is by key", "", []string{"delta", "alpha", "charlie", "bravo", "echo"}},
			{"order", "?order=name%20desc", []string{"echo", "delta", "charlie", "bravo", "alpha"}},
			{"sort alias", "?sort=name", []string{"alpha", "bravo", "charlie", "delta", "echo"}},
			{"limit and offset", "?order=name&limit=2&offset=1", []string{"bravo", "charlie"}},
			{"top and skip", "?order=name&top=1&skip=4", []string{"echo"}},
			{"filter", "?filter=(is_active%20%3D%20false)%20or%20(name%20like%20'a%25')&order=name", []string{"alpha", "echo"}},
			{"where alias with in", "?where=name%20in%20('bravo','delta')&order=name", []string{"bravo", "delta"}},
			{"ids keep their order", "?ids=" + itoa(ids[3]) + "," + itoa(ids[0]), []string{"bravo", "delta"}},
			{"contains", "?filter=description%20contains%20'ha'", []string{"alpha", "charlie"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got := names(e.must(http.StatusOK, http.MethodGet, "role"+tc.query, nil))
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Error(diff)
				}
			})
		}

		t.Run("include_count and count_only", func(t *testing.T) {
			r := e.must(http.StatusOK, http.MethodGet, "role?include_count=true&limit=1&filter=is_active%3Dtrue", nil).obj(t)
			if num(t, r["meta"].(map[string]any)["count"]) != 4 || len(r["resource"].([]any)) != 1 {
				t.Errorf("got %v", r)
			}
			r = e.must(http.StatusOK, http.MethodGet, "role?count_only=true", nil).obj(t)
			if diff := cmp.Diff(map[string]any{"meta": map[string]any{"count": jsonNum(5)}}, r); diff != "" {
				t.Error(diff)
			}
		})

		t.Run("fields", func(t *testing.T) {
			r := e.must(http.StatusOK, http.MethodGet, "role?fields=name,id&limit=1", nil)
			if diff := cmp.Diff([]map[string]any{{"name": "delta", "id": jsonNum(ids[0])}}, r.list(t)); diff != "" {
				t.Error(diff)
			}
		})

		bad := []struct{ name, query, want string }{
			{"unknown field in filter", "?filter=nope%3D1", "Invalid or unparsable field in filter request: 'nope'"},
			{"malformed filter", "?filter=name%20%3D%20(", "Invalid filter"},
			{"injection attempt", "?filter=name%3D'x'%3B%20drop%20table%20role", "Invalid filter"},
			{"raw semicolon in the query", "?filter=name%3D'x';%20drop%20table%20role", "Invalid query string"},
			{"unknown order field", "?order=nope", "'nope'"},
			{"bad limit", "?limit=-1", "non-negative"},
			{"unknown field", "?fields=nope", "Invalid field 'nope'"},
			{"aggregate in fields", "?fields=count(*)", "field names only"},
			{"unknown relation", "?related=nope", "Invalid relationship 'nope'"},
			{"wrong kind", "?filter=is_active%20%3D%20'maybe'", "not a boolean"},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				r := e.must(http.StatusBadRequest, http.MethodGet, "role"+tc.query, nil)
				if !strings.Contains(r.errMsg(t), tc.want) {
					t.Errorf("message %q lacks %q", r.errMsg(t), tc.want)
				}
			})
		}
		t.Run("missing ids are 404", func(t *testing.T) {
			e.must(http.StatusNotFound, http.MethodGet, "role?ids="+itoa(ids[0])+",99999", nil)
		})
		if n := count[store.Role](e, ""); n != 5 {
			t.Errorf("the role table was changed: %d rows", n)
		}
	})
}
