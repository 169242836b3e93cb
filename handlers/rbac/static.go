package rbac

import (
	"net/http"
	"strings"

	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Static returns a Policy source for roles given in Go, for programs that
// configure the stage without a system database. The roles are validated
// as policy.New validates them: every invalid entry is reported and
// nothing is built. Entries name services by Service (the name the stage
// compares with the target's); ServiceID may stay zero, and an entry with
// neither a name nor an id covers all services.
func Static(roles []policy.Role, opts ...policy.Option) (func() *policy.Authorizer, error) {
	a, err := policy.New(roles, opts...)
	if err != nil {
		return nil, err
	}
	return func() *policy.Authorizer { return a }, nil
}

// FixedService returns an Options.Target for a stack that serves one
// service without the proxy router: every request is for the service
// named name (of type typ, which may be empty), its resource is the URL
// path without leading and trailing slashes, and its verb is the method.
func FixedService(name, typ string) func(r *http.Request) *service.Target {
	svc := &store.Service{Name: name, Type: typ, IsActive: true}
	return func(r *http.Request) *service.Target {
		return &service.Target{Service: svc, Resource: strings.Trim(r.URL.Path, "/"), Verb: r.Method}
	}
}
