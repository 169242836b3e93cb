package sqldb_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

func TestTypes(t *testing.T) {
	var got []string
	for _, typ := range sqldb.Types() {
		i := typ.Info()
		if i.Group != service.GroupDatabase || i.Label == "" {
			t.Errorf("info %+v", i)
		}
		got = append(got, i.Name)
	}
	if !cmp.Equal(got, []string{"sqlite", "pgsql", "mysql"}) {
		t.Fatalf("types %v", got)
	}
}

func TestValidateConfig(t *testing.T) {
	for _, c := range []struct {
		name   string
		kind   dialects.Kind
		config string
		errs   []string // substrings of the error; none: valid
	}{
		{"sqlite database", dialects.SQLite, `{"database":"db.sqlite"}`, nil},
		{"sqlite dsn", dialects.SQLite, `{"dsn":"sqlite:///tmp/x.db"}`, nil},
		{"sqlite empty", dialects.SQLite, `{}`, []string{"config.database"}},
		{"sqlite null", dialects.SQLite, `null`, []string{"config.database"}},
		{"pg fields", dialects.Postgres, `{"host":"db","port":5432,"database":"app","username":"u","password":"p"}`, nil},
		{"pg port as string", dialects.Postgres, `{"host":"db","port":"5432","database":"app"}`, nil},
		{"pg dsn", dialects.Postgres, `{"dsn":"postgres://u:p@db:5432/app?sslmode=disable"}`, nil},
		{"pg missing host and database", dialects.Postgres, `{"username":"u"}`, []string{"config.host", "config.database"}},
		{"pg dsn of another engine", dialects.Postgres, `{"dsn":"mysql://u@tcp(h:3306)/d"}`, []string{"mysql DSN but the service type is pgsql"}},
		{"mysql dsn forms", dialects.MySQL, `{"dsn":"mysql://u:p@h:3306/d"}`, nil},
		{"bad dsn", dialects.MySQL, `{"dsn":"ftp://x"}`, []string{"config.dsn"}},
		{"bad port", dialects.MySQL, `{"host":"h","database":"d","port":70000}`, []string{"config.port"}},
		{"bad types", dialects.MySQL, `{"host":1,"database":"d","max_records":"many","allow_upsert":"perhaps"}`,
			[]string{"config.host must be a string", "config.max_records", "config.allow_upsert"}},
		{"max_records", dialects.SQLite, `{"database":"x","max_records":50,"allow_upsert":true,"extra":"kept"}`, nil},
		{"not an object", dialects.SQLite, `[1]`, []string{"JSON object"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := sqldb.NewType(c.kind).ValidateConfig(json.RawMessage(c.config))
			if len(c.errs) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %v", c.errs)
			}
			for _, want := range c.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// TestMaxRecords checks the per-service page size and that limit cannot
// pass it.
func TestMaxRecords(t *testing.T) {
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), map[string]any{"max_records": 2})
	status, body := e.do(t, "GET", "_table/customer?fields=id", nil)
	checkStep(t, step{name: "default page", status: 200, want: `{"resource":[{"id":1},{"id":2}],"meta":{"next":2}}`}, status, body)
	status, body = e.do(t, "GET", "_table/customer?fields=id&limit=3&offset=1", nil)
	checkStep(t, step{name: "limit over the maximum", status: 200, want: `{"resource":[{"id":2},{"id":3}],"meta":{"next":3}}`}, status, body)
}

// TestUpsert checks allow_upsert: PATCH and PUT of a missing record create it.
func TestUpsert(t *testing.T) {
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), map[string]any{"allow_upsert": true})
	status, body := e.do(t, "PATCH", "_table/tag/9", rec("label", "new"))
	checkStep(t, step{name: "upsert by id", status: 200, want: `{"id":9,"label":"new"}`}, status, body)
	status, body = e.do(t, "PUT", "_table/tag", res(rec("id", 8, "label", "eight")))
	checkStep(t, step{name: "upsert records", status: 200, want: `{"resource":[{"id":8}]}`}, status, body)
}

func TestEvents(t *testing.T) {
	d := newDirect(t, dbtest.Fresh(t, dialects.SQLite))
	paths, err := d.b.(service.EventLister).Events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range paths {
		got = append(got, p.Path+" "+strings.Join(p.Verbs, ","))
	}
	all := "get,post,put,patch,delete"
	want := []string{" get", "_table get", "_table/{table_name} " + all, "_table/{table_name}/{id} get,put,patch,delete",
		"_schema " + all, "_schema/{table_name} " + all, "_schema/{table_name}/_field " + all,
		"_schema/{table_name}/_field/{field_name} " + all, "_schema/{table_name}/_related get,post",
		"_schema/{table_name}/_related/{relation_name} get"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("paths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"customer", "nokey", "order_tag", "orders", "tag"}, paths[2].Parameter["table_name"]); diff != "" {
		t.Fatalf("tables (-want +got):\n%s", diff)
	}
}
