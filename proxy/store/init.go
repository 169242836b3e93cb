package store

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/uptrace/bun"
)

// SettingJWTSecret names the setting that holds the session-token signing
// secret, shared by every instance.
const SettingJWTSecret = "jwt_secret"

// InitOptions is what `portcullis init` is given.
type InitOptions struct {
	// Email, Password and Name describe the first administrator, created
	// only when no administrator exists.
	Email    string
	Password string
	Name     string
	// AdminAPIKey, when set, becomes the admin app's key (64 hex
	// characters); otherwise a key is generated once.
	AdminAPIKey string
}

// InitResult tells what Init found or made.
type InitResult struct {
	// AdminAPIKey is the admin app's key.
	AdminAPIKey string
	// AdminCreated is true when this call created the first administrator.
	AdminCreated bool
}

// BuiltinService is a service every fresh instance has.
type BuiltinService struct {
	Name, Label, Type, Description, Config string
	Mutable, Deletable                     bool
}

// BuiltinServices are the spec's built-in services. Paths in their
// configuration are relative to the data directory.
var BuiltinServices = []BuiltinService{
	{Name: "system", Label: "System Management", Type: "system", Description: "Service for managing system resources.", Config: `{}`},
	{Name: "api_docs", Label: "Live API Docs", Type: "swagger", Description: "API documenting and testing service.", Config: `{}`},
	{Name: "files", Label: "Local File Storage", Type: "local_file", Description: "Service for accessing local file storage.", Config: `{"container":"storage"}`, Mutable: true, Deletable: true},
	{Name: "logs", Label: "Local Log Storage", Type: "local_file", Description: "Service for accessing local log storage.", Config: `{"container":"storage/logs"}`, Mutable: true, Deletable: true},
	{Name: "db", Label: "Local SQL Database", Type: "sqlite", Description: "Service for accessing local SQLite database.", Config: `{"database":"db.sqlite"}`, Mutable: true, Deletable: true},
	{Name: "email", Label: "Local Email Service", Type: "local_email", Description: "Email service used for sending user invites and/or password reset confirmation.", Config: `{}`, Mutable: true, Deletable: true},
	{Name: "user", Label: "User Management", Type: "user", Description: "Service for managing system users.", Config: `{"allow_open_registration":false,"open_reg_role_id":null,"open_reg_email_service_id":null}`},
}

// BuiltinApps are the spec's built-in apps.
var BuiltinApps = []struct{ Name, Label, Description, Path string }{
	{"admin", "Admin Application", "An application for administering this instance.", "dreamfactory/dist/index.html"},
	{"api_docs", "API Docs", "A Swagger-based application allowing viewing and testing API documentation.", "df-api-docs-ui/dist/index.html"},
	{"file_manager", "File Manager", "An application for managing file services.", "filemanager/index.html"},
}

// ValidateAPIKey checks a key given by an operator: 64 hex characters.
func ValidateAPIKey(key string) error {
	if len(key) != 64 {
		return fmt.Errorf("API key must be 64 hex characters, got %d characters", len(key))
	}
	if _, err := hex.DecodeString(key); err != nil {
		return errors.New("API key must be 64 hex characters")
	}
	return nil
}

// Init creates what a fresh instance needs: the signing secret, the built-in
// services and apps, and the first administrator. It is idempotent: on an
// initialised database it changes nothing (except the admin key when one is
// given and differs) and returns the admin app's key.
func (s *Store) Init(ctx context.Context, opts InitOptions) (InitResult, error) {
	var res InitResult
	if opts.AdminAPIKey != "" {
		if err := ValidateAPIKey(opts.AdminAPIKey); err != nil {
			return res, err
		}
		opts.AdminAPIKey = strings.ToLower(opts.AdminAPIKey)
	}
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		changed := false
		if _, err := SetSettingIfAbsent(ctx, tx, SettingJWTSecret, NewSecret(32)); err != nil {
			return err
		}
		templates, err := seedEmailTemplates(ctx, tx)
		if err != nil {
			return err
		}
		changed = changed || templates.created
		for _, b := range BuiltinServices {
			n, err := tx.NewSelect().Model((*Service)(nil)).Where("name = ?", b.Name).Count(ctx)
			if err != nil {
				return fmt.Errorf("look up service %s: %w", b.Name, err)
			}
			if n > 0 {
				continue
			}
			config := b.Config
			if b.Name == "user" {
				if config, err = userConfig(ctx, tx, config, templates); err != nil {
					return err
				}
			}
			svc := &Service{Name: b.Name, Label: b.Label, Type: b.Type, Description: b.Description,
				Config: config, IsActive: true, Mutable: b.Mutable, Deletable: b.Deletable}
			svc.CreatedDate, svc.LastModifiedDate = now(), now()
			if _, err := tx.NewInsert().Model(svc).Exec(ctx); err != nil {
				return fmt.Errorf("create service %s: %w", b.Name, err)
			}
			changed = true
		}
		for _, b := range BuiltinApps {
			var app App
			err := tx.NewSelect().Model(&app).Where("name = ?", b.Name).Scan(ctx)
			switch {
			case err == nil:
				if b.Name == "admin" && opts.AdminAPIKey != "" && app.APIKey != opts.AdminAPIKey {
					app.APIKey = opts.AdminAPIKey
					if _, err := tx.NewUpdate().Model(&app).Column("api_key").WherePK().Exec(ctx); err != nil {
						return fmt.Errorf("set admin API key: %w", err)
					}
					changed = true
				}
			case isNoRows(err):
				app = App{Name: b.Name, Label: b.Label, Description: b.Description, IsActive: true,
					Type: 3, Path: b.Path, APIKey: NewAPIKey(), AllowFullscreenToggle: true, ToggleLocation: "top"}
				if b.Name == "admin" && opts.AdminAPIKey != "" {
					app.APIKey = opts.AdminAPIKey
				}
				app.CreatedDate, app.LastModifiedDate = now(), now()
				if _, err := tx.NewInsert().Model(&app).Exec(ctx); err != nil {
					return fmt.Errorf("create app %s: %w", b.Name, err)
				}
				changed = true
			default:
				return fmt.Errorf("look up app %s: %w", b.Name, err)
			}
			if b.Name == "admin" {
				res.AdminAPIKey = app.APIKey
			}
		}
		admins, err := tx.NewSelect().Model((*User)(nil)).Where("is_sys_admin = ?", true).Count(ctx)
		if err != nil {
			return fmt.Errorf("count administrators: %w", err)
		}
		if admins == 0 {
			u, err := NewAdmin(opts.Email, opts.Password, opts.Name)
			if err != nil {
				return err
			}
			if _, err := tx.NewInsert().Model(u).Exec(ctx); err != nil {
				return fmt.Errorf("create administrator: %w", err)
			}
			res.AdminCreated = true
			changed = true
		}
		if changed {
			return Touch(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return InitResult{}, fmt.Errorf("store: init: %w", err)
	}
	return res, nil
}

// BuiltinEmailTemplates are the templates every fresh instance has; the
// user service sends its mails with them through the built-in email
// service.
var BuiltinEmailTemplates = []EmailTemplate{
	{Name: "User Invite Default", Description: "Email sent to invite new users to the platform.",
		Subject: "[Portcullis] New User Invitation", FromName: "DO NOT REPLY", FromEmail: "no-reply@localhost",
		BodyHTML: `<div style="padding: 10px;"><p>Hi {first_name},</p><p>You have been invited to {app_name}. ` +
			`Go to the following link to accept the invitation and set your password:</p>` +
			`<p><a href="{link}">{link}</a></p><p>Your confirmation code: {confirm_code}</p><p>Thanks,<br>{from_name}</p></div>`},
	{Name: "User Registration Default", Description: "Email sent to new users to complete registration.",
		Subject: "[Portcullis] Registration Confirmation", FromName: "DO NOT REPLY", FromEmail: "no-reply@localhost",
		BodyHTML: `<div style="padding: 10px;"><p>Hi {first_name},</p><p>You have registered with {app_name}. ` +
			`Go to the following link to confirm your registration and set your password:</p>` +
			`<p><a href="{link}">{link}</a></p><p>Your confirmation code: {confirm_code}</p><p>Thanks,<br>{from_name}</p></div>`},
	{Name: "Password Reset Default", Description: "Email sent to users following a request to reset their password.",
		Subject: "[Portcullis] Password Reset", FromName: "DO NOT REPLY", FromEmail: "no-reply@localhost",
		BodyHTML: `<div style="padding: 10px;"><p>Hi {first_name},</p><p>You have requested to reset your password. ` +
			`Go to the following link and enter the code below to set a new one:</p>` +
			`<p><a href="{link}">{link}</a></p><p>Your confirmation code: {confirm_code}</p>` +
			`<p>If you did not ask for this, ignore this message.</p><p>Thanks,<br>{from_name}</p></div>`},
}

// seededTemplates are the ids of the built-in templates by name.
type seededTemplates struct {
	ids     map[string]int64
	created bool
}

// seedEmailTemplates creates the built-in templates that are missing.
func seedEmailTemplates(ctx context.Context, tx bun.Tx) (seededTemplates, error) {
	res := seededTemplates{ids: map[string]int64{}}
	for _, b := range BuiltinEmailTemplates {
		var t EmailTemplate
		err := tx.NewSelect().Model(&t).Where("name = ?", b.Name).Scan(ctx)
		switch {
		case err == nil:
		case isNoRows(err):
			t = b
			t.CreatedDate, t.LastModifiedDate = now(), now()
			if _, err := tx.NewInsert().Model(&t).Exec(ctx); err != nil {
				return res, fmt.Errorf("create email template %s: %w", b.Name, err)
			}
			res.created = true
		default:
			return res, fmt.Errorf("look up email template %s: %w", b.Name, err)
		}
		res.ids[b.Name] = t.ID
	}
	return res, nil
}

// userConfig points a new user service's mails at the built-in email
// service and templates: invitations and password resets are sent
// through it. open_reg_email_service_id stays empty, so open
// registration (off by default) gives immediate access until an
// administrator asks for confirmation by e-mail by setting it; its
// template id is set, ready for that.
func userConfig(ctx context.Context, tx bun.Tx, base string, templates seededTemplates) (string, error) {
	cfg := map[string]any{}
	if err := json.Unmarshal([]byte(base), &cfg); err != nil {
		return "", fmt.Errorf("user service config: %w", err)
	}
	var email Service
	err := tx.NewSelect().Model(&email).Where("name = ?", "email").Scan(ctx)
	if err != nil && !isNoRows(err) {
		return "", fmt.Errorf("look up service email: %w", err)
	}
	if err == nil {
		for _, k := range []string{"invite_email_service_id", "password_email_service_id"} {
			cfg[k] = email.ID
		}
	}
	for k, name := range map[string]string{
		"open_reg_email_template_id": "User Registration Default",
		"invite_email_template_id":   "User Invite Default",
		"password_email_template_id": "Password Reset Default",
	} {
		if id := templates.ids[name]; id != 0 {
			cfg[k] = id
		}
	}
	out, err := json.Marshal(cfg)
	return string(out), err
}

// NewAdmin validates and builds an administrator record with a hashed
// password.
func NewAdmin(email, password, name string) (*User, error) {
	var problems []error
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email {
		problems = append(problems, fmt.Errorf("administrator e-mail %q is not a valid address", email))
	}
	hash, err := HashPassword(password)
	if err != nil {
		problems = append(problems, fmt.Errorf("administrator password: %w", err))
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	if name == "" {
		name = "Administrator"
	}
	first, last, _ := strings.Cut(name, " ")
	u := &User{Name: name, FirstName: first, LastName: last, Email: email, Password: hash,
		IsSysAdmin: true, IsActive: true}
	u.CreatedDate, u.LastModifiedDate = now(), now()
	return u, nil
}
