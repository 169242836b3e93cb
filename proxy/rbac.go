package proxy

import (
	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/rbac"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Role-based access in the root: one policy.Authorizer per configuration
// state, built from the snapshot's roles on every reload (so a changed role
// reaches every instance within the reload interval), and the rbac stage
// reading the Authorizer of the state in force.

// Policy returns the role-based access engine in force (nil before the
// first load).
func (s *Server) Policy() *policy.Authorizer {
	if st := s.state.Load(); st != nil {
		return st.policy
	}
	return nil
}

// rbacStage builds the RBAC stage over the engine and lookups in force.
func (s *Server) rbacStage() (handlers.Stage, error) {
	return rbac.New(s.rbacOptions())
}

// rbacOptions are the options of the RBAC stage, also used to decide the
// calls backends make on a caller's behalf (accessChecker.Grant).
func (s *Server) rbacOptions() rbac.Options {
	return rbac.Options{
		Policy: s.Policy,
		Lookups: func(id *caller.Identity) map[string]string {
			return rbac.SnapshotLookups(s.currentSnapshot(), id)
		},
		Logger: s.logger,
	}
}

// policyEngine builds the engine of snap's roles. Roles with records it
// cannot use grant nothing (rbac.Policy fails closed) and are logged.
func (s *Server) policyEngine(snap *store.Snapshot) *policy.Authorizer {
	a, err := rbac.Policy(snap)
	if err != nil {
		s.logger.Error("role access entries that cannot be used: their roles grant nothing until fixed", "error", err)
	}
	if a == nil {
		// Only invalid options make it nil; refuse everything rather
		// than keep an older policy.
		a, _ = policy.New(nil)
	}
	return a
}
