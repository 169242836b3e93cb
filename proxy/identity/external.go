package identity

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Messages of sign-ins through another service (OpenID Connect, OAuth 2.0,
// LDAP, SAML).
const (
	MsgNewUserNotAllowed = "New user registration is not allowed for this service. Please contact your administrator."
	MsgExternalInactive  = "The user of this sign-in is not active."
)

// External is a user another service vouches for (after verifying the
// provider's answer).
type External struct {
	// Service is the name of the sign-in service.
	Service string
	// Subject is the provider's stable id of the user (OIDC sub, LDAP
	// uid, SAML NameID); required.
	Subject string
	// Email is the provider's e-mail of the user; "" when it has none.
	Email string
	// Name, FirstName and LastName describe the user; Name defaults to
	// the e-mail.
	Name, FirstName, LastName string
	// RoleID is the role a new user gets through every app (the
	// service's default role); nil: none.
	RoleID *int64
	// RefuseNew refuses a user not seen before (401).
	RefuseNew bool
	// AppRoles, when set, makes the provider authoritative for the
	// user's roles (directory groups mapped to roles): on every sign-in
	// the user's role through each app becomes AppRoles(app), and the
	// app's mapping is removed when it answers false. RoleID is not used
	// then.
	AppRoles func(appID int64) (roleID int64, ok bool)
	// Lifetime and Browser are the session's lifetime as LoginDuration
	// reads a login's `duration`; zero Lifetime is the default one.
	Lifetime time.Duration
	Browser  bool
}

// ShadowEmail is DreamFactory's e-mail of a user signed in through
// service: <local>+<service>@<domain> of the provider's e-mail, else
// <subject>+<service>@<service>.com.
func ShadowEmail(service, email, subject string) string {
	service = strings.ToLower(service)
	if at := strings.LastIndex(email, "@"); at > 0 && at < len(email)-1 {
		return email[:at] + "+" + service + email[at:]
	}
	return subject + "+" + service + "@" + service + ".com"
}

// SignInExternal signs in the user x describes, creating it on first
// sign-in (a shadow user with ShadowEmail, no password, the service's
// default role through every app) or linking the one with that e-mail,
// and opens a session as a password login does (default lifetime). The
// app is the one of the caller in ctx. Administrators cannot sign in this
// way.
func (s *Engine) SignInExternal(ctx context.Context, x External) (*SignedIn, error) {
	if strings.TrimSpace(x.Subject) == "" && x.Email == "" {
		return nil, unauthenticated("The provider did not identify the user.")
	}
	email := ShadowEmail(x.Service, x.Email, x.Subject)
	u, err := s.findUser(ctx, email)
	if err != nil {
		return nil, err
	}
	if u == nil {
		if x.RefuseNew {
			return nil, unauthenticated(MsgNewUserNotAllowed)
		}
		if u, err = s.createExternal(ctx, x, email); err != nil {
			return nil, err
		}
	}
	switch {
	case !u.IsActive:
		return nil, unauthenticated(MsgExternalInactive)
	case u.IsSysAdmin:
		return nil, unauthenticated(MsgAdminOnUserLogin)
	}
	if x.AppRoles != nil {
		if err := s.syncRoles(ctx, u, x); err != nil {
			return nil, err
		}
	}
	app := appID(ctx)
	acc := s.Resolve(u.ID, u.IsSysAdmin, app)
	if acc.RoleID != 0 && !acc.RoleActive {
		return nil, forbidden(MsgRoleInactive)
	}
	ttl := x.Lifetime
	if ttl <= 0 {
		ttl = s.opts.TokenTTL
	}
	iss, err := s.open(ctx, u, app, ttl, x.Browser)
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "login", "user_id", u.ID, "service", x.Service)
	return s.respond(u, iss.token, iss.claims, acc, app), nil
}

// createExternal inserts the shadow user of x and its role mappings.
func (s *Engine) createExternal(ctx context.Context, x External, email string) (*store.User, error) {
	now := s.now()
	name := strings.TrimSpace(x.Name)
	if name == "" {
		name = strings.TrimSpace(x.FirstName + " " + x.LastName)
	}
	if name == "" {
		name = email
	}
	u := &store.User{Name: name, FirstName: x.FirstName, LastName: x.LastName, Email: email,
		Username: x.Subject + "+" + strings.ToLower(x.Service), IsActive: true}
	u.CreatedDate, u.LastModifiedDate = now, now
	err := s.st.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(u).Exec(ctx); err != nil {
			return err
		}
		if x.RoleID == nil || x.AppRoles != nil {
			return nil
		}
		var apps []int64
		if err := tx.NewSelect().Model((*store.App)(nil)).Column("id").Order("id").Scan(ctx, &apps); err != nil {
			return err
		}
		if len(apps) == 0 {
			return nil
		}
		maps := make([]store.UserAppRole, len(apps))
		for i, a := range apps {
			maps[i] = store.UserAppRole{UserID: u.ID, AppID: a, RoleID: *x.RoleID}
		}
		if _, err := tx.NewInsert().Model(&maps).Exec(ctx); err != nil {
			return err
		}
		return store.Touch(ctx, tx)
	})
	if err != nil {
		if s.isUnique(err) {
			// Created meanwhile by a concurrent first sign-in.
			if u2, ferr := s.findUser(ctx, email); ferr == nil && u2 != nil {
				return u2, nil
			}
			return nil, conflict(MsgEmailTaken)
		}
		return nil, internal(fmt.Errorf("identity: create %s user: %w", x.Service, err))
	}
	s.log.InfoContext(ctx, "user created on first sign-in", "user_id", u.ID, "service", x.Service)
	if x.RoleID != nil && s.opts.Changed != nil {
		if err := s.opts.Changed(context.WithoutCancel(ctx)); err != nil {
			s.log.WarnContext(ctx, "reload after first sign-in failed", "user_id", u.ID, "error", err)
		}
	}
	return u, nil
}

// syncRoles makes u's user_to_app_to_role rows what x.AppRoles answers
// for each app, and reloads the configuration when a row changed.
func (s *Engine) syncRoles(ctx context.Context, u *store.User, x External) error {
	changed := false
	err := s.st.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		changed = false
		var apps []int64
		if err := tx.NewSelect().Model((*store.App)(nil)).Column("id").Order("id").Scan(ctx, &apps); err != nil {
			return err
		}
		var rows []store.UserAppRole
		if err := tx.NewSelect().Model(&rows).Where("user_id = ?", u.ID).Scan(ctx); err != nil && !store.IsNoRows(err) {
			return err
		}
		have := make(map[int64]store.UserAppRole, len(rows))
		for _, r := range rows {
			if _, dup := have[r.AppID]; dup {
				// A second row for one app: drop it, one role per app.
				if _, err := tx.NewDelete().Model((*store.UserAppRole)(nil)).Where("id = ?", r.ID).Exec(ctx); err != nil {
					return err
				}
				changed = true
				continue
			}
			have[r.AppID] = r
		}
		for _, app := range apps {
			want, ok := x.AppRoles(app)
			cur, has := have[app]
			delete(have, app)
			switch {
			case ok && !has:
				if _, err := tx.NewInsert().Model(&store.UserAppRole{UserID: u.ID, AppID: app, RoleID: want}).Exec(ctx); err != nil {
					return err
				}
			case ok && cur.RoleID != want:
				if _, err := tx.NewUpdate().Model((*store.UserAppRole)(nil)).Set("role_id = ?", want).Where("id = ?", cur.ID).Exec(ctx); err != nil {
					return err
				}
			case !ok && has:
				if _, err := tx.NewDelete().Model((*store.UserAppRole)(nil)).Where("id = ?", cur.ID).Exec(ctx); err != nil {
					return err
				}
			default:
				continue
			}
			changed = true
		}
		// Rows of apps that no longer exist are left to the app's deletion.
		if !changed {
			return nil
		}
		return store.Touch(ctx, tx)
	})
	if err != nil {
		return internal(fmt.Errorf("identity: set roles of %s user %d: %w", x.Service, u.ID, err))
	}
	if changed {
		s.log.InfoContext(ctx, "roles changed on sign-in", "user_id", u.ID, "service", x.Service)
		if s.opts.Changed != nil {
			if err := s.opts.Changed(context.WithoutCancel(ctx)); err != nil {
				s.log.WarnContext(ctx, "reload after role change failed", "user_id", u.ID, "error", err)
			}
		}
	}
	return nil
}

// deriveKey returns HMAC-SHA256(secret, label): a key for one purpose.
func deriveKey(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}
