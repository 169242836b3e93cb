package store

import (
	"encoding/json"
	"time"

	"github.com/uptrace/bun"
)

// Booleans and masks whose zero value is meaningful carry no SQL default:
// bun writes DEFAULT for a zero value of a column that has one, which would
// turn an explicit false into true. Writers set them explicitly.

// Audit holds the audit columns every system table has.
type Audit struct {
	CreatedDate      time.Time `bun:"created_date,nullzero,notnull,default:current_timestamp" json:"created_date"`
	LastModifiedDate time.Time `bun:"last_modified_date,nullzero,notnull,default:current_timestamp" json:"last_modified_date"`
	CreatedByID      *int64    `bun:"created_by_id" json:"created_by_id"`
	LastModifiedByID *int64    `bun:"last_modified_by_id" json:"last_modified_by_id"`
}

// Service is a configured service: a name under /api/v2/ bound to a type and
// its configuration.
type Service struct {
	bun.BaseModel `bun:"table:service"`

	ID          int64  `bun:"id,pk,autoincrement" json:"id"`
	Name        string `bun:"name,notnull,unique,type:varchar(64)" json:"name"`
	Label       string `bun:"label,notnull,type:varchar(255)" json:"label"`
	Description string `bun:"description,notnull,type:varchar(255),default:''" json:"description"`
	IsActive    bool   `bun:"is_active,notnull" json:"is_active"`
	Type        string `bun:"type,notnull,type:varchar(64)" json:"type"`
	// Mutable and Deletable are false for built-in services that must not
	// be renamed or removed (system, user, api_docs).
	Mutable   bool `bun:"mutable,notnull" json:"mutable"`
	Deletable bool `bun:"deletable,notnull" json:"deletable"`
	// Config is the type-specific configuration as a JSON object.
	Config string `bun:"config,type:text" json:"-"`
	Audit
}

// ConfigJSON returns Config as raw JSON, "{}" when empty.
func (s *Service) ConfigJSON() json.RawMessage {
	if s.Config == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s.Config)
}

// App is a client application: its API key identifies it and its default
// role governs calls made with the key alone.
type App struct {
	bun.BaseModel `bun:"table:app"`

	ID                    int64  `bun:"id,pk,autoincrement" json:"id"`
	Name                  string `bun:"name,notnull,unique,type:varchar(64)" json:"name"`
	Label                 string `bun:"label,notnull,type:varchar(255),default:''" json:"label"`
	Description           string `bun:"description,notnull,type:varchar(255),default:''" json:"description"`
	IsActive              bool   `bun:"is_active,notnull" json:"is_active"`
	APIKey                string `bun:"api_key,notnull,unique,type:varchar(255)" json:"api_key"`
	Type                  int    `bun:"type,notnull,default:0" json:"type"`
	Path                  string `bun:"path,type:varchar(255)" json:"path"`
	URL                   string `bun:"url,type:text" json:"url"`
	StorageServiceID      *int64 `bun:"storage_service_id" json:"storage_service_id"`
	StorageContainer      string `bun:"storage_container,type:varchar(255)" json:"storage_container"`
	RequiresFullscreen    bool   `bun:"requires_fullscreen,notnull,default:false" json:"requires_fullscreen"`
	AllowFullscreenToggle bool   `bun:"allow_fullscreen_toggle,notnull" json:"allow_fullscreen_toggle"`
	ToggleLocation        string `bun:"toggle_location,type:varchar(64),default:'top'" json:"toggle_location"`
	RoleID                *int64 `bun:"role_id" json:"role_id"`
	Audit
}

// User is a person who signs in: an administrator when IsSysAdmin is set.
type User struct {
	bun.BaseModel `bun:"table:user"`

	ID               int64      `bun:"id,pk,autoincrement" json:"id"`
	Name             string     `bun:"name,notnull,type:varchar(255)" json:"name"`
	Username         string     `bun:"username,type:varchar(255)" json:"username"`
	FirstName        string     `bun:"first_name,type:varchar(255)" json:"first_name"`
	LastName         string     `bun:"last_name,type:varchar(255)" json:"last_name"`
	Email            string     `bun:"email,notnull,unique,type:varchar(255)" json:"email"`
	Password         string     `bun:"password,type:text" json:"-"`
	IsSysAdmin       bool       `bun:"is_sys_admin,notnull,default:false" json:"-"`
	IsActive         bool       `bun:"is_active,notnull" json:"is_active"`
	Phone            string     `bun:"phone,type:varchar(64)" json:"phone"`
	SecurityQuestion string     `bun:"security_question,type:varchar(255)" json:"security_question"`
	SecurityAnswer   string     `bun:"security_answer,type:text" json:"-"`
	ConfirmCode      string     `bun:"confirm_code,type:varchar(255)" json:"-"`
	ConfirmExpiry    *time.Time `bun:"confirm_expiry" json:"-"`
	DefaultAppID     *int64     `bun:"default_app_id" json:"default_app_id"`
	LastLoginDate    *time.Time `bun:"last_login_date" json:"last_login_date"`
	// TokensValidAfter revokes every session token issued before it
	// (password change, deactivation).
	TokensValidAfter *time.Time `bun:"tokens_valid_after" json:"-"`
	Audit
}

// Role groups access entries; apps and users are bound to roles.
type Role struct {
	bun.BaseModel `bun:"table:role"`

	ID          int64  `bun:"id,pk,autoincrement" json:"id"`
	Name        string `bun:"name,notnull,unique,type:varchar(64)" json:"name"`
	Description string `bun:"description,type:varchar(255)" json:"description"`
	IsActive    bool   `bun:"is_active,notnull" json:"is_active"`
	Audit

	Accesses []*RoleServiceAccess `bun:"rel:has-many,join:id=role_id" json:"-"`
}

// RoleServiceAccess is one access entry of a role (DreamFactory's
// role_service_access, plus Portcullis's Fields).
type RoleServiceAccess struct {
	bun.BaseModel `bun:"table:role_service_access"`

	ID        int64  `bun:"id,pk,autoincrement" json:"id"`
	RoleID    int64  `bun:"role_id,notnull" json:"role_id"`
	ServiceID *int64 `bun:"service_id" json:"service_id"`
	Component string `bun:"component,type:varchar(255)" json:"component"`
	VerbMask  int    `bun:"verb_mask,notnull,default:0" json:"verb_mask"`
	// RequestorMask: 1 API, 2 script, 3 both.
	RequestorMask int `bun:"requestor_mask,notnull" json:"requestor_mask"`
	// Filters is a JSON array of {name, operator, value}.
	Filters  string `bun:"filters,type:text" json:"-"`
	FilterOp string `bun:"filter_op,type:varchar(32),default:'AND'" json:"filter_op"`
	// Fields is a JSON array of allowed field names; empty means all.
	Fields string `bun:"fields,type:text" json:"-"`
	Audit
}

// UserAppRole maps a user to a role for one app.
type UserAppRole struct {
	bun.BaseModel `bun:"table:user_to_app_to_role"`

	ID     int64 `bun:"id,pk,autoincrement" json:"id"`
	UserID int64 `bun:"user_id,notnull" json:"user_id"`
	AppID  int64 `bun:"app_id,notnull" json:"app_id"`
	RoleID int64 `bun:"role_id,notnull" json:"role_id"`
}

// CORS is one CORS rule.
type CORS struct {
	bun.BaseModel `bun:"table:cors_config"`

	ID                  int64  `bun:"id,pk,autoincrement" json:"id"`
	Path                string `bun:"path,notnull,unique,type:varchar(255)" json:"path"`
	Description         string `bun:"description,type:varchar(255)" json:"description"`
	Origin              string `bun:"origin,notnull,type:text" json:"origin"`
	Header              string `bun:"header,type:text" json:"header"`
	ExposedHeader       string `bun:"exposed_header,type:text" json:"exposed_header"`
	MaxAge              int    `bun:"max_age,notnull,default:0" json:"max_age"`
	Method              int    `bun:"method,notnull,default:0" json:"-"`
	SupportsCredentials bool   `bun:"supports_credentials,notnull,default:false" json:"supports_credentials"`
	Enabled             bool   `bun:"enabled,notnull" json:"enabled"`
	Audit
}

// Limit is one rate limit.
type Limit struct {
	bun.BaseModel `bun:"table:limits"`

	ID          int64  `bun:"id,pk,autoincrement" json:"id"`
	Type        string `bun:"type,notnull,type:varchar(50)" json:"type"`
	KeyText     string `bun:"key_text,notnull,type:varchar(255)" json:"key_text"`
	Rate        int    `bun:"rate,notnull" json:"rate"`
	Period      string `bun:"period,notnull,type:varchar(16)" json:"period"`
	UserID      *int64 `bun:"user_id" json:"user_id"`
	RoleID      *int64 `bun:"role_id" json:"role_id"`
	ServiceID   *int64 `bun:"service_id" json:"service_id"`
	Endpoint    string `bun:"endpoint,type:text" json:"endpoint"`
	Verb        string `bun:"verb,type:varchar(10)" json:"verb"`
	Name        string `bun:"name,notnull,type:varchar(255)" json:"name"`
	Description string `bun:"description,type:varchar(255)" json:"description"`
	IsActive    bool   `bun:"is_active,notnull" json:"is_active"`
	Audit
}

// Lookup is a named value substituted into filters, configs and scripts;
// global when AppID, RoleID and UserID are all nil.
type Lookup struct {
	bun.BaseModel `bun:"table:lookup"`

	ID          int64  `bun:"id,pk,autoincrement" json:"id"`
	AppID       *int64 `bun:"app_id" json:"app_id"`
	RoleID      *int64 `bun:"role_id" json:"role_id"`
	UserID      *int64 `bun:"user_id" json:"user_id"`
	Name        string `bun:"name,notnull,type:varchar(255)" json:"name"`
	Value       string `bun:"value,type:text" json:"value"`
	Private     bool   `bun:"private,notnull,default:false" json:"private"`
	Description string `bun:"description,type:varchar(255)" json:"description"`
	Audit
}

// EventScript is a script attached to an API event, keyed by event name.
type EventScript struct {
	bun.BaseModel `bun:"table:event_script"`

	Name                   string `bun:"name,pk,type:varchar(255)" json:"name"`
	Type                   string `bun:"type,notnull,type:varchar(40)" json:"type"`
	IsActive               bool   `bun:"is_active,notnull,default:false" json:"is_active"`
	Content                string `bun:"content,type:text" json:"content"`
	Config                 string `bun:"config,type:text" json:"config"`
	StorageServiceID       *int64 `bun:"storage_service_id" json:"storage_service_id"`
	StoragePath            string `bun:"storage_path,type:varchar(255)" json:"storage_path"`
	SCMRepository          string `bun:"scm_repository,type:varchar(255)" json:"scm_repository"`
	SCMReference           string `bun:"scm_reference,type:varchar(255)" json:"scm_reference"`
	AllowEventModification bool   `bun:"allow_event_modification,notnull,default:false" json:"allow_event_modification"`
	Audit
}

// EmailTemplate is a stored e-mail template.
type EmailTemplate struct {
	bun.BaseModel `bun:"table:email_template"`

	ID           int64  `bun:"id,pk,autoincrement" json:"id"`
	Name         string `bun:"name,notnull,unique,type:varchar(64)" json:"name"`
	Description  string `bun:"description,type:varchar(255)" json:"description"`
	To           string `bun:"to,type:text" json:"-"`
	CC           string `bun:"cc,type:text" json:"-"`
	BCC          string `bun:"bcc,type:text" json:"-"`
	Subject      string `bun:"subject,type:varchar(80)" json:"subject"`
	Attachment   string `bun:"attachment,type:text" json:"-"`
	BodyText     string `bun:"body_text,type:text" json:"body_text"`
	BodyHTML     string `bun:"body_html,type:text" json:"body_html"`
	FromName     string `bun:"from_name,type:varchar(80)" json:"from_name"`
	FromEmail    string `bun:"from_email,type:varchar(255)" json:"from_email"`
	ReplyToName  string `bun:"reply_to_name,type:varchar(80)" json:"reply_to_name"`
	ReplyToEmail string `bun:"reply_to_email,type:varchar(255)" json:"reply_to_email"`
	Defaults     string `bun:"defaults,type:text" json:"-"`
	Audit
}

// Custom is a named custom setting whose value is any JSON.
type Custom struct {
	bun.BaseModel `bun:"table:system_custom"`

	Name  string `bun:"name,pk,type:varchar(255)" json:"name"`
	Value string `bun:"value,type:text" json:"-"`
	Audit
}

// SchemaContract holds a service's schema-contract settings.
type SchemaContract struct {
	bun.BaseModel `bun:"table:schema_contract_service"`

	ID                    int64  `bun:"id,pk,autoincrement" json:"id"`
	ServiceID             int64  `bun:"service_id,notnull,unique" json:"service_id"`
	ServiceName           string `bun:"service_name,notnull,type:varchar(64)" json:"service_name"`
	Mode                  string `bun:"mode,notnull,type:varchar(16),default:'none'" json:"mode"`
	RuntimeEnforcement    string `bun:"runtime_enforcement,notnull,type:varchar(32),default:'off'" json:"runtime_enforcement"`
	ArchiveRetentionCount *int   `bun:"archive_retention_count" json:"archive_retention_count"`
	Enabled               bool   `bun:"enabled,notnull" json:"enabled"`
	Audit
}

// SchemaSnapshot is one versioned capture of a table's shape.
type SchemaSnapshot struct {
	bun.BaseModel `bun:"table:schema_contract_snapshot"`

	ID              int64  `bun:"id,pk,autoincrement" json:"id"`
	ServiceID       int64  `bun:"service_id,notnull" json:"service_id"`
	ServiceName     string `bun:"service_name,notnull,type:varchar(64)" json:"service_name"`
	TableCatalog    string `bun:"table_catalog,type:varchar(255)" json:"table_catalog"`
	TableSchema     string `bun:"table_schema,type:varchar(255)" json:"table_schema"`
	TableName       string `bun:"table_name,notnull,type:varchar(255)" json:"table_name"`
	ObjectType      string `bun:"object_type,notnull,type:varchar(32),default:'table'" json:"object_type"`
	ContractVersion int    `bun:"contract_version,notnull" json:"contract_version"`
	SchemaHash      string `bun:"schema_hash,notnull,type:varchar(64)" json:"schema_hash"`
	SchemaJSON      string `bun:"schema_json,type:text" json:"-"`
	Status          string `bun:"status,notnull,type:varchar(16)" json:"status"`
	Audit
}

// Setting is a named platform value (the JWT signing secret, …).
type Setting struct {
	bun.BaseModel `bun:"table:platform_setting"`

	Name  string `bun:"name,pk,type:varchar(128)" json:"name"`
	Value string `bun:"value,type:text" json:"value"`
}

// State is the one-row table holding the configuration version.
type State struct {
	bun.BaseModel `bun:"table:platform_state"`

	ID            int64 `bun:"id,pk"`
	ConfigVersion int64 `bun:"config_version,notnull,default:0"`
}

// Session is one issued session token, so that logout and revocation hold
// on every instance.
type Session struct {
	bun.BaseModel `bun:"table:session"`

	ID        string    `bun:"id,pk,type:varchar(64)" json:"id"`
	UserID    int64     `bun:"user_id,notnull" json:"user_id"`
	AppID     *int64    `bun:"app_id" json:"app_id"`
	IssuedAt  time.Time `bun:"issued_at,notnull" json:"issued_at"`
	ExpiresAt time.Time `bun:"expires_at,notnull" json:"expires_at"`
	Revoked   bool      `bun:"revoked,notnull,default:false" json:"revoked"`
}

// UsedOnce marks a sign-in artefact (a SAML assertion or request id) as
// consumed until it expires, so that it is refused a second time on every
// instance.
type UsedOnce struct {
	bun.BaseModel `bun:"table:sign_in_used_once"`

	// Key is a digest of what was used (64 hex characters).
	Key       string    `bun:"key,pk,type:varchar(64)" json:"key"`
	ExpiresAt time.Time `bun:"expires_at,notnull" json:"expires_at"`
}
