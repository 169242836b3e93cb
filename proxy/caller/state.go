package caller

import (
	"context"
	"unsafe"
)

// State is one request's context values in a single context: the request
// id, the caller's [Identity], the [Grant], the role-granted mark, and a
// few values of other packages ([State.Put]: the service target, the
// access log's record). The first stage that sets a value places it once
// ([Ensure]: one allocation and one request copy); the stages after it
// fill it in instead of each wrapping the context and copying the request.
// Reads go through the ordinary getters ([IdentityFrom], [GrantFrom],
// [RequestID], [RoleGranted], ctx.Value), so a backend cannot tell a State
// from a chain of context.WithValue.
//
// A value set in a State hides the same key in the contexts it wraps, as
// context.WithValue does; a key it does not hold is looked up in them. A
// stage fills a State only when the request's context is the State itself
// ([Ensure]); a request whose context was derived from it (an inner call
// through the pipeline: [WithInner]) gets a State of its own, so the inner
// request's stages never write into the outer request's values.
//
// A State also has room for a request's small values, so that the stages
// that make them need no allocation of their own: two identities
// ([State.NewIdentity]), a few short texts ([State.Text]) and response
// header values ([State.HeaderValue]). Its methods work on a nil State
// (they allocate), so a stage calls them on [StateFrom] of its request's
// context whether the stack placed a State or not.
//
// A State belongs to the goroutine serving its request while the stages
// run; it is not pooled, so a context kept past the response (an
// asynchronous script) still reads what the request saw, and so do the
// values in its room.
type State struct {
	context.Context

	requestID string
	identity  *Identity
	grant     *Grant

	// The small fields share one word.
	set         setBits
	roleGranted bool
	n           uint8 // values of other packages in keys/vals (then more)
	nids        uint8 // room used: never written again
	ntext       uint8
	nhdr        uint8

	// Values of other packages: three in place (the proxy's room, the
	// access log's record and the target), then more.
	keys [3]any
	vals [3]any
	more []keyVal

	// Room: used slots are never written again.
	ids  [2]Identity
	text [48]byte
	hdr  [4]string
}

type keyVal struct{ key, val any }

type setBits uint8

const (
	setRequestID setBits = 1 << iota
	setIdentity
	setGrant
	setRoleGranted
)

// Ensure returns the State a stage fills in for a request whose context is
// ctx, and whether it is new. When ctx is a State it is returned as is;
// otherwise a new State wrapping ctx is returned, which the stage puts in
// the request (r = r.WithContext(st)) before calling the next handler.
func Ensure(ctx context.Context) (st *State, fresh bool) {
	if st, ok := ctx.(*State); ok {
		return st, false
	}
	return &State{Context: ctx}, true
}

// StateFrom returns ctx when it is a State (the one the stages fill, see
// [Ensure]), else nil.
func StateFrom(ctx context.Context) *State {
	st, _ := ctx.(*State)
	return st
}

// NewIdentity returns a new zero Identity, held in s while s has room for
// one (two per State), else allocated.
func (s *State) NewIdentity() *Identity {
	if s == nil || int(s.nids) == len(s.ids) {
		return new(Identity)
	}
	id := &s.ids[s.nids]
	s.nids++
	return id
}

// Text returns string(b), its bytes held in s while s has room for them
// (48 bytes per State), else allocated.
func (s *State) Text(b []byte) string {
	if s == nil || len(b) == 0 || len(b) > len(s.text)-int(s.ntext) {
		return string(b)
	}
	t := s.text[s.ntext : int(s.ntext)+len(b)]
	copy(t, b)
	s.ntext += uint8(len(b))
	// The bytes of a used slot are never written again: the string is
	// immutable, as one from string(b) would be.
	return unsafe.String(&t[0], len(t))
}

// HeaderValue returns []string{v}, for a response header set straight in
// the header map, held in s while s has room for it (four per State),
// else allocated. Its capacity is 1, so an append copies it.
func (s *State) HeaderValue(v string) []string {
	if s == nil || int(s.nhdr) == len(s.hdr) {
		return []string{v}
	}
	i := int(s.nhdr)
	s.nhdr++
	s.hdr[i] = v
	return s.hdr[i : i+1 : i+1]
}

// SetRequestID sets the request id ([RequestID]).
func (s *State) SetRequestID(id string) {
	s.requestID = id
	s.set |= setRequestID
}

// SetIdentity sets the caller ([IdentityFrom]); nil hides an identity of
// the contexts s wraps.
func (s *State) SetIdentity(id *Identity) {
	s.identity = id
	s.set |= setIdentity
}

// SetGrant sets the grant ([GrantFrom]); nil (unrestricted) hides a grant
// of the contexts s wraps.
func (s *State) SetGrant(g *Grant) {
	s.grant = g
	s.set |= setGrant
}

// SetRoleGranted sets the role-granted mark ([RoleGranted]).
func (s *State) SetRoleGranted(granted bool) {
	s.roleGranted = granted
	s.set |= setRoleGranted
}

// Put sets the value of key, as context.WithValue would in a context
// wrapping s: ctx.Value(key) returns val. key must be comparable; packages
// use an unexported struct type, as for context.WithValue.
func (s *State) Put(key, val any) {
	if i := s.find(key); i >= 0 {
		s.vals[i] = val
		return
	}
	for i := range s.more {
		if s.more[i].key == key {
			s.more[i].val = val
			return
		}
	}
	if int(s.n) < len(s.keys) {
		s.keys[s.n], s.vals[s.n] = key, val
		s.n++
		return
	}
	s.more = append(s.more, keyVal{key, val})
}

// Value implements context.Context.
func (s *State) Value(key any) any {
	switch key.(type) {
	case requestIDKey:
		if s.set&setRequestID != 0 {
			return s // RequestID reads s.requestID: a string in an any would allocate
		}
	case identityKey:
		if s.set&setIdentity != 0 {
			return s.identity
		}
	case grantKey:
		if s.set&setGrant != 0 {
			return s.grant
		}
	case roleGrantedKey:
		if s.set&setRoleGranted != 0 {
			return s.roleGranted
		}
	default:
		if i := s.find(key); i >= 0 {
			return s.vals[i]
		}
		for i := range s.more {
			if s.more[i].key == key {
				return s.more[i].val
			}
		}
	}
	return s.Context.Value(key)
}

// find returns the index of key in s.keys, or -1.
func (s *State) find(key any) int {
	for i := range int(s.n) {
		if s.keys[i] == key {
			return i
		}
	}
	return -1
}
