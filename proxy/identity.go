package proxy

import (
	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/accesslog"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/handlers/session"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/user"
)

// identityStages builds the API key and session stages over the
// configuration in force.
func (s *Server) identityStages() (keys, sessions handlers.Stage, err error) {
	opts := apikey.Options{Apps: snapshotApps{s}}
	if s.cfg.Compat == CompatDreamFactory {
		opts.Keyless = apikey.DreamFactoryKeyless
	}
	keys, err = apikey.New(opts)
	if err != nil {
		return nil, nil, err
	}
	e, err := identity.New(s.store, identity.Options{Logger: s.logger, Snapshot: s.currentSnapshot})
	if err != nil {
		return nil, nil, err
	}
	signIn := user.NewSignIn(e, false)
	sopts := session.Options{Verifier: signIn, SetUser: accesslog.SetUser}
	if s.cfg.BasicAuth {
		sopts.Basic = signIn
	}
	sessions, err = session.New(sopts)
	if err != nil {
		return nil, nil, err
	}
	keys, sessions = auditRefusals(s.audit, keys, sessions)
	return keys, sessions, nil
}

// currentSnapshot is Snapshot, nil before the first load.
func (s *Server) currentSnapshot() *store.Snapshot {
	if st := s.state.Load(); st != nil {
		return st.snap
	}
	return nil
}

// snapshotApps finds apps by API key in the snapshot in force.
type snapshotApps struct{ s *Server }

func (a snapshotApps) LookupApp(key string) (apikey.App, bool) {
	snap := a.s.currentSnapshot()
	if snap == nil {
		return apikey.App{}, false
	}
	app := snap.AppByKey(key)
	if app == nil {
		return apikey.App{}, false
	}
	out := apikey.App{ID: app.ID, Name: app.Name, APIKey: app.APIKey, Active: app.IsActive}
	if app.RoleID != nil {
		out.RoleID = *app.RoleID
		if r := snap.Role(*app.RoleID); r != nil {
			out.RoleName = r.Name
		}
	}
	return out, true
}
