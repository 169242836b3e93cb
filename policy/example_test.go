package policy_test

import (
	"fmt"

	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/caller"
)

func ExampleAuthorizer_Authorize() {
	a, err := policy.New([]policy.Role{{
		ID: 7, Name: "sales", Active: true,
		Accesses: []policy.Access{
			// Read everything in db...
			{ServiceID: 1, Service: "db", Component: "*", VerbMask: policy.VerbGet, RequestorMask: policy.RequestorBoth},
			// ...but contacts only as far as one's own rows, and edit them.
			{ServiceID: 1, Service: "db", Component: "_table/contact/*",
				VerbMask: policy.VerbGet | policy.VerbPatch, RequestorMask: policy.RequestorAPI,
				Filters: []caller.Filter{{Name: "owner_id", Operator: "=", Value: "{user.id}"}},
				Fields:  []string{"id", "name", "email"}},
		},
	}})
	if err != nil {
		panic(err)
	}

	d := a.Authorize(7, "db", "_table/contact/12", "PATCH", caller.API)
	fmt.Println(d.Allowed, d.Class, d.Grant.Fields, d.Grant.Filters)

	g, err := policy.SubstituteLookups(d.Grant, map[string]string{"user.id": "42"})
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Filters[0].Value)

	d = a.Authorize(7, "db", "_table/contact", "DELETE", caller.API)
	fmt.Println(d.Allowed, d.Message)

	// Scripts have no entry for contacts, so the service-wide read applies.
	d = a.Authorize(7, "db", "_table/contact", "GET", caller.Script)
	fmt.Println(d.Allowed, d.Class, d.Grant == nil)
	// Output:
	// true component [id name email] [{owner_id = {user.id}}]
	// 42
	// false Access Forbidden. DELETE access to component '_table/contact' of service 'db' is not allowed by this user's role.
	// true service true
}
