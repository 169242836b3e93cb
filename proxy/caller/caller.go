package caller

import (
	"context"
	"strings"
)

// Requestor tells whether a call came from an API client or from a script's
// inner platform call. The values are DreamFactory's requestor_mask bits.
type Requestor int

const (
	// API is a call made by an HTTP client.
	API Requestor = 1
	// Script is a call made by an event script through platform.api.
	Script Requestor = 2
)

// Identity is who is calling: the app behind the API key, the role that
// governs the call, and the signed-in user if any.
type Identity struct {
	// AppID and AppName identify the app whose API key was presented; zero
	// when no key was needed (login of a known app is still keyed).
	AppID   int64
	AppName string
	// RoleID and RoleName name the role that governs the call: the user's
	// role for this app when signed in, else the app's default role. Zero
	// means no role.
	RoleID   int64
	RoleName string
	// UserID, UserEmail and UserName identify the signed-in user; UserID is
	// zero for a call with an API key only.
	UserID    int64
	UserEmail string
	UserName  string
	// Admin is true for a signed-in system administrator, who is not
	// restricted by roles or limits.
	Admin bool
	// SessionID is the session token's unique id (its "jti" claim), empty
	// without a session.
	SessionID string
	// Requestor says whether an HTTP client or a script made the call.
	Requestor Requestor
}

// Authenticated reports whether a user is signed in.
func (id *Identity) Authenticated() bool { return id != nil && id.UserID != 0 }

// FromScript reports whether the call was made by an event script.
func (id *Identity) FromScript() bool { return id != nil && id.Requestor == Script }

// Filter is one row condition of a role access entry, as DreamFactory stores
// it: a field, an operator and a value that may hold lookups such as
// {user.id}, already substituted when it reaches a backend.
type Filter struct {
	Name     string `json:"name"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
}

// Grant is what the RBAC stage allowed for this call. A nil Grant means no
// restriction (administrators, or a stack without RBAC).
type Grant struct {
	// Fields lists the fields the caller may read and write; empty means all.
	Fields []string
	// Filters restrict the rows the caller may read, change or delete, and
	// the records it may write. Empty means all rows.
	Filters []Filter
	// FilterOp joins Filters: "AND" (default) or "OR".
	FilterOp string
}

// AllowsField reports whether the grant lets the caller see or write field.
// Field names are compared case-insensitively, as responses are lowercased.
func (g *Grant) AllowsField(field string) bool {
	if g == nil || len(g.Fields) == 0 {
		return true
	}
	for _, f := range g.Fields {
		if f == "*" || strings.EqualFold(f, field) {
			return true
		}
	}
	return false
}

type identityKey struct{}
type grantKey struct{}

// WithIdentity returns a context carrying id.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity in ctx, or nil when no stage set one.
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}

// WithGrant returns a context carrying g.
func WithGrant(ctx context.Context, g *Grant) context.Context {
	return context.WithValue(ctx, grantKey{}, g)
}

// GrantFrom returns the grant in ctx, or nil (no restriction).
func GrantFrom(ctx context.Context) *Grant {
	g, _ := ctx.Value(grantKey{}).(*Grant)
	return g
}
