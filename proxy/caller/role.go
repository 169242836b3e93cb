package caller

import "context"

type roleGrantedKey struct{}

// WithRoleGranted returns a context recording whether the RBAC stage allowed
// the call through the caller's role (true), rather than because the caller
// is an administrator, the route is an access exception, or no RBAC stage
// ran (false). Backends that otherwise admit administrators only, such as
// the system service, admit a call a role granted: roles may delegate them.
func WithRoleGranted(ctx context.Context, granted bool) context.Context {
	return context.WithValue(ctx, roleGrantedKey{}, granted)
}

// RoleGranted reports whether the RBAC stage allowed the call in ctx
// through the caller's role (see WithRoleGranted).
func RoleGranted(ctx context.Context) bool {
	ok, _ := ctx.Value(roleGrantedKey{}).(bool)
	return ok
}
