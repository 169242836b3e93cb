package store

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/uptrace/bun"
)

// Snapshot is an immutable copy of the configuration the pipeline reads on
// every request: services, apps, roles with their access entries, user-app
// roles, CORS rules, limits, lookups and event scripts. Users are not in it
// (there may be many); they are read on sign-in.
//
// A Snapshot is never changed after Load returns it; a reload builds a new
// one.
type Snapshot struct {
	// Version is the configuration version the snapshot was read at.
	Version int64

	Services       []*Service
	Apps           []*App
	Roles          []*Role // with Accesses loaded
	UserAppRoles   []*UserAppRole
	CORS           []*CORS
	Limits         []*Limit
	Lookups        []*Lookup
	EventScripts   []*EventScript
	schemaEpochs   map[int64]string // by service id; see SchemaEpoch
	servicesByName map[string]*Service
	servicesByID   map[int64]*Service
	appsByKey      map[string]*App
	appsByID       map[int64]*App
	rolesByID      map[int64]*Role
	userAppRole    map[[2]int64]int64

	// SchemaContracts are the services' contract settings and
	// ContractSnapshots the active snapshots (see contract.go).
	SchemaContracts   []*SchemaContract
	ContractSnapshots []*SchemaSnapshot
	contracts         map[int64]*SchemaContract
	contractSnapshots map[contractKey]*SchemaSnapshot
}

// Load reads a snapshot of the configuration in one read transaction.
func (s *Store) Load(ctx context.Context) (*Snapshot, error) {
	snap := &Snapshot{}
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewSelect().Model((*State)(nil)).Column("config_version").Where("id = 1").Scan(ctx, &snap.Version); err != nil {
			return fmt.Errorf("version: %w", err)
		}
		steps := []struct {
			name string
			q    *bun.SelectQuery
		}{
			{"services", tx.NewSelect().Model(&snap.Services).Order("id")},
			{"apps", tx.NewSelect().Model(&snap.Apps).Order("id")},
			{"roles", tx.NewSelect().Model(&snap.Roles).Relation("Accesses", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("id") }).Order("id")},
			{"user app roles", tx.NewSelect().Model(&snap.UserAppRoles).Order("id")},
			{"cors", tx.NewSelect().Model(&snap.CORS).Order("id")},
			{"limits", tx.NewSelect().Model(&snap.Limits).Order("id")},
			{"lookups", tx.NewSelect().Model(&snap.Lookups).Order("id")},
			{"event scripts", tx.NewSelect().Model(&snap.EventScripts).Order("name")},
			{"schema contracts", tx.NewSelect().Model(&snap.SchemaContracts).Order("id")},
			{"contract snapshots", tx.NewSelect().Model(&snap.ContractSnapshots).
				Where("status = ?", SnapshotActive).Order("id")},
		}
		for _, st := range steps {
			if err := st.q.Scan(ctx); err != nil && !isNoRows(err) {
				return fmt.Errorf("%s: %w", st.name, err)
			}
		}
		return snap.loadSchemaEpochs(ctx, tx)
	})
	if err != nil {
		return nil, fmt.Errorf("store: load snapshot: %w", err)
	}
	snap.index()
	return snap, nil
}

// NewSnapshot builds a snapshot from records held in memory, for programs
// that embed Portcullis without a system database.
func NewSnapshot(services []*Service, apps []*App, roles []*Role) *Snapshot {
	snap := &Snapshot{Services: services, Apps: apps, Roles: roles}
	snap.index()
	return snap
}

func (s *Snapshot) index() {
	s.servicesByName = make(map[string]*Service, len(s.Services))
	s.servicesByID = make(map[int64]*Service, len(s.Services))
	for _, svc := range s.Services {
		s.servicesByName[svc.Name] = svc
		s.servicesByID[svc.ID] = svc
	}
	s.appsByKey = make(map[string]*App, len(s.Apps))
	s.appsByID = make(map[int64]*App, len(s.Apps))
	for _, a := range s.Apps {
		s.appsByKey[a.APIKey] = a
		s.appsByID[a.ID] = a
	}
	s.rolesByID = make(map[int64]*Role, len(s.Roles))
	for _, r := range s.Roles {
		s.rolesByID[r.ID] = r
	}
	s.userAppRole = make(map[[2]int64]int64, len(s.UserAppRoles))
	for _, u := range s.UserAppRoles {
		s.userAppRole[[2]int64{u.UserID, u.AppID}] = u.RoleID
	}
	s.indexContracts()
	sort.SliceStable(s.EventScripts, func(i, j int) bool { return s.EventScripts[i].Name < s.EventScripts[j].Name })
}

// Service returns the service named name (case-sensitive), or nil.
func (s *Snapshot) Service(name string) *Service { return s.servicesByName[name] }

// ServiceByID returns the service with id, or nil.
func (s *Snapshot) ServiceByID(id int64) *Service { return s.servicesByID[id] }

// AppByKey returns the app whose API key is key, or nil. The map lookup
// hashes the key; callers compare in constant time only where they compare
// keys directly.
func (s *Snapshot) AppByKey(key string) *App { return s.appsByKey[key] }

// App returns the app with id, or nil.
func (s *Snapshot) App(id int64) *App { return s.appsByID[id] }

// Role returns the role with id, or nil.
func (s *Snapshot) Role(id int64) *Role { return s.rolesByID[id] }

// UserAppRole returns the role id mapped to user for app, and whether one
// is. Like DreamFactory, when the user has no mapping for this app any
// mapping of the user counts.
func (s *Snapshot) UserAppRole(userID, appID int64) (int64, bool) {
	if r, ok := s.userAppRole[[2]int64{userID, appID}]; ok {
		return r, true
	}
	for _, u := range s.UserAppRoles {
		if u.UserID == userID {
			return u.RoleID, true
		}
	}
	return 0, false
}

// EventScript returns the script for event name, or nil.
func (s *Snapshot) EventScript(name string) *EventScript {
	i := sort.Search(len(s.EventScripts), func(i int) bool { return s.EventScripts[i].Name >= name })
	if i < len(s.EventScripts) && s.EventScripts[i].Name == name {
		return s.EventScripts[i]
	}
	return nil
}

// App types (DreamFactory's AppTypes): where an app's files live.
const (
	AppTypeNone    = 0 // no files: an API client only
	AppTypeStorage = 1 // files in a storage service's folder
	AppTypeURL     = 2 // an external URL
	AppTypePath    = 3 // a path on this server
	AppTypeGit     = 4 // a Git repository (no launch URL)
)

// StorageRoute is where a file service's public paths are served without
// credentials: /storage/{service}/{path} (DreamFactory's storage route).
const StorageRoute = "/storage/"

// LaunchURL is where app a starts (DreamFactory's launch_url, relative to
// this server unless the app is an external URL): a storage app's folder
// under StorageRoute (its service, container and path, so a browser opens
// it without a key when the folder is one of the service's public paths),
// a URL app's URL, a path app's path. It is "" for an app with nothing to
// launch or whose storage service is gone (or not yet loaded: s may be
// nil).
func (s *Snapshot) LaunchURL(a *App) string {
	switch a.Type {
	case AppTypeStorage:
		if s == nil || a.StorageServiceID == nil {
			return ""
		}
		svc := s.ServiceByID(*a.StorageServiceID)
		if svc == nil {
			return ""
		}
		u := StorageRoute + svc.Name
		for _, p := range []string{a.StorageContainer, a.Path} {
			if p = strings.Trim(p, "/"); p != "" {
				u += "/" + p
			}
		}
		return u
	case AppTypeURL:
		return a.URL
	case AppTypePath:
		if p := strings.TrimLeft(a.Path, "/"); p != "" {
			return "/" + p
		}
	}
	return ""
}
