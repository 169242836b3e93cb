package caller

import "context"

type requestIDKey struct{}

// WithRequestID returns a context carrying the request's id (set by the
// request-id stage, read by every stage and backend that logs or ships
// the request).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	switch v := ctx.Value(requestIDKey{}).(type) {
	case string:
		return v
	case *State:
		return v.requestID
	}
	return ""
}
