package limiter

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fieldErrors flattens a joined Validate error into its FieldErrors.
func fieldErrors(t *testing.T, err error) []FieldError {
	t.Helper()
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []FieldError
	for _, e := range errs {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("error %v is not a *FieldError", e)
		}
		out = append(out, *fe)
	}
	return out
}

func TestValidate(t *testing.T) {
	valid := func(typ Type) Limit {
		return Limit{Name: "n", Type: typ, Rate: 10, Period: PeriodMinute, UserID: 1, RoleID: 2, ServiceID: 3, Endpoint: "_table/x"}
	}
	tests := []struct {
		name  string
		limit Limit
		want  []FieldError
	}{
		{name: "instance ok", limit: Limit{Name: "n", Type: TypeInstance, Rate: 1, Period: PeriodDay}},
		{name: "every type ok", limit: valid(TypeEachUserServiceEndpoint)},
		{name: "verb lower case accepted", limit: Limit{Name: "n", Type: TypeInstance, Rate: 1, Period: PeriodHour, Verb: "delete"}},
		{name: "irrelevant fields ignored", limit: Limit{Name: "n", Type: TypeInstance, Rate: 1, Period: PeriodMonth, UserID: -4, Endpoint: "a/*/b"}},
		{
			name:  "everything wrong at once",
			limit: Limit{Type: "instance.bogus", Rate: 0, Period: "week", Verb: "HEAD"},
			want: []FieldError{
				{"name", "name must be specified."},
				{"type", `type "instance.bogus" is not a valid limit type; expected one of instance, instance.user, instance.each_user, instance.role, instance.service, instance.user.service, instance.each_user.service, instance.service.endpoint, instance.user.service.endpoint, instance.each_user.service.endpoint.`},
				{"rate", "Limit rate must be a positive integer. Limit not saved."},
				{"period", `period "week" is not valid; expected one of minute, hour, day, 7-day, 30-day.`},
				{"verb", "Verb is invalid or not allowed."},
			},
		},
		{
			name:  "user type without user",
			limit: Limit{Name: "lim", Type: TypeUser, Rate: 1, Period: PeriodMinute},
			want:  []FieldError{{"user_id", "user_id must be specified with this limit type. Limit: lim"}},
		},
		{
			name:  "role type without role",
			limit: Limit{Name: "lim", Type: TypeRole, Rate: 1, Period: PeriodMinute, RoleID: -1},
			want:  []FieldError{{"role_id", "role_id must be specified with this limit type. Limit: lim"}},
		},
		{
			name:  "service type without service",
			limit: Limit{Name: "lim", Type: TypeEachUserService, Rate: 1, Period: PeriodMinute},
			want:  []FieldError{{"service_id", "service_id must be specified with this limit type."}},
		},
		{
			name:  "user endpoint type missing all",
			limit: Limit{Name: "lim", Type: TypeUserServiceEndpoint, Rate: -3, Period: PeriodWeek},
			want: []FieldError{
				{"rate", "Limit rate must be a positive integer. Limit not saved."},
				{"user_id", "user_id must be specified with this limit type. Limit: lim"},
				{"service_id", "service_id must be specified with this limit type."},
				{"endpoint", "endpoint must be specified with this limit type."},
			},
		},
		{
			name:  "bad endpoint pattern",
			limit: Limit{Name: "lim", Type: TypeServiceEndpoint, Rate: 1, Period: PeriodMinute, ServiceID: 1, Endpoint: "_table/*/x"},
			want:  []FieldError{{"endpoint", `endpoint may contain "*" only as its last character.`}},
		},
		{
			name:  "blank endpoint",
			limit: Limit{Name: "lim", Type: TypeServiceEndpoint, Rate: 1, Period: PeriodMinute, ServiceID: 1, Endpoint: " / "},
			want:  []FieldError{{"endpoint", "endpoint must be specified with this limit type."}},
		},
		{
			name:  "blank name",
			limit: Limit{Name: "  ", Type: TypeInstance, Rate: 1, Period: PeriodMinute},
			want:  []FieldError{{"name", "name must be specified."}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fieldErrors(t, tt.limit.Validate())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPeriods(t *testing.T) {
	tests := []struct {
		p     Period
		d     time.Duration
		index int
	}{
		{PeriodMinute, 60 * time.Second, 0},
		{PeriodHour, 3600 * time.Second, 1},
		{PeriodDay, 86400 * time.Second, 2},
		{PeriodWeek, 604800 * time.Second, 3},
		{PeriodMonth, 2592000 * time.Second, 4},
		{"fortnight", 0, -1},
		{"", 0, -1},
	}
	for _, tt := range tests {
		t.Run(string(tt.p), func(t *testing.T) {
			if got := tt.p.Duration(); got != tt.d {
				t.Errorf("Duration() = %v, want %v", got, tt.d)
			}
			if got := tt.p.Index(); got != tt.index {
				t.Errorf("Index() = %d, want %d", got, tt.index)
			}
			if tt.index >= 0 {
				if p, ok := PeriodFromIndex(tt.index); !ok || p != tt.p {
					t.Errorf("PeriodFromIndex(%d) = %q, %v", tt.index, p, ok)
				}
			}
		})
	}
	if _, ok := PeriodFromIndex(5); ok {
		t.Error("PeriodFromIndex(5) succeeded")
	}
}

func TestTypes(t *testing.T) {
	type shape struct{ User, Each, Role, Service, Endpoint bool }
	want := map[Type]shape{
		TypeInstance:                {},
		TypeUser:                    {User: true},
		TypeEachUser:                {Each: true},
		TypeRole:                    {Role: true},
		TypeService:                 {Service: true},
		TypeUserService:             {User: true, Service: true},
		TypeEachUserService:         {Each: true, Service: true},
		TypeServiceEndpoint:         {Service: true, Endpoint: true},
		TypeUserServiceEndpoint:     {User: true, Service: true, Endpoint: true},
		TypeEachUserServiceEndpoint: {Each: true, Service: true, Endpoint: true},
	}
	if len(Types()) != 10 {
		t.Fatalf("Types() has %d entries", len(Types()))
	}
	for _, typ := range Types() {
		t.Run(string(typ), func(t *testing.T) {
			got := shape{typ.NeedsUser(), typ.EachUser(), typ.NeedsRole(), typ.NeedsService(), typ.NeedsEndpoint()}
			if diff := cmp.Diff(want[typ], got); diff != "" || !typ.Valid() {
				t.Errorf("shape (-want +got):\n%s", diff)
			}
		})
	}
	if Type("instance.each_role").Valid() {
		t.Error("bogus type is valid")
	}
}

func TestNormalized(t *testing.T) {
	in := Limit{ID: 1, Name: "n", Type: TypeUserService, Rate: 5, Period: PeriodDay,
		UserID: 3, RoleID: 4, ServiceID: 5, Endpoint: " _table/x ", Verb: "patch", Active: true}
	want := Limit{ID: 1, Name: "n", Type: TypeUserService, Rate: 5, Period: PeriodDay,
		UserID: 3, ServiceID: 5, Verb: "PATCH", Active: true}
	if diff := cmp.Diff(want, in.Normalized()); diff != "" {
		t.Errorf("Normalized (-want +got):\n%s", diff)
	}
}

func TestKeyText(t *testing.T) {
	tests := []struct {
		limit Limit
		want  string
	}{
		{Limit{Type: TypeInstance, Period: PeriodMinute}, "instance.minute"},
		{Limit{Type: TypeInstance, Period: PeriodDay, Verb: "delete"}, "instance.verb:DELETE.day"},
		{Limit{Type: TypeUser, UserID: 3, Period: PeriodMinute}, "instance.user:3.minute"},
		{Limit{Type: TypeEachUser, UserID: 3, Period: PeriodHour}, "instance.each_user:.hour"},
		{Limit{Type: TypeRole, RoleID: 4, Period: PeriodWeek}, "instance.role:4.7-day"},
		{Limit{Type: TypeService, ServiceID: 5, Period: PeriodMonth}, "instance.service:5.30-day"},
		{Limit{Type: TypeUserService, UserID: 3, ServiceID: 5, Period: PeriodMinute}, "instance.user:3.service:5.minute"},
		{Limit{Type: TypeEachUserService, ServiceID: 5, Period: PeriodMinute}, "instance.each_user:.service:5.minute"},
		{Limit{Type: TypeServiceEndpoint, ServiceID: 5, Endpoint: "_table/contact", Period: PeriodMinute}, "instance.service:5.endpoint:_table/contact.minute"},
		{Limit{Type: TypeUserServiceEndpoint, UserID: 3, ServiceID: 5, Endpoint: "/_table/Contact/17/", Verb: "GET", Period: PeriodMinute}, "instance.user:3.service:5.endpoint:_table/contact/:id.verb:GET.minute"},
		{Limit{Type: TypeEachUserServiceEndpoint, ServiceID: 5, Endpoint: "_table/*", Period: PeriodMinute}, "instance.each_user:.service:5.endpoint:_table/*.minute"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.limit.KeyText(); got != tt.want {
				t.Errorf("KeyText() = %q, want %q", got, tt.want)
			}
		})
	}
}
