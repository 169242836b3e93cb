package caller

import "context"

type innerKey struct{}

// WithInner returns a context marking a request as an inner call: a request
// the platform itself sends through its own pipeline on behalf of a caller
// it has already identified (an event script's platform.api call, an MCP
// tool call). The identity in ctx is then kept by the stages that would
// otherwise establish one from the request's credentials (API key,
// session); roles, limits and scripts still apply to it as to any request.
// Only code in the process can set it: no header or parameter does.
func WithInner(ctx context.Context) context.Context {
	return context.WithValue(ctx, innerKey{}, true)
}

// Inner reports whether ctx is an inner call's (see WithInner) that carries
// an identity.
func Inner(ctx context.Context) bool {
	ok, _ := ctx.Value(innerKey{}).(bool)
	return ok && IdentityFrom(ctx) != nil
}
