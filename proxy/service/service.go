package service

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Groups of service types, as the spec lists them.
const (
	GroupDatabase     = "Database"
	GroupFile         = "File"
	GroupRemote       = "Remote Service"
	GroupMCP          = "MCP"
	GroupEmail        = "Email"
	GroupNotification = "Notification"
	GroupOAuth        = "OAuth"
	GroupLDAP         = "LDAP"
	GroupCache        = "Cache"
	GroupIoT          = "IoT"
	GroupSystem       = "System"
	GroupAPIDoc       = "API Doc"
	GroupUser         = "User"
	GroupLog          = "Log"
	GroupScript       = "Script"
)

// Info describes a service type for /system/service_type.
type Info struct {
	Name        string `json:"name"`
	Label       string `json:"label"`
	Group       string `json:"group"`
	Description string `json:"description"`
	// Singleton types allow one service only (system, user, api_docs).
	Singleton bool `json:"singleton"`
}

// Type is a kind of service: it validates configuration and builds
// backends.
type Type interface {
	// Info names and describes the type.
	Info() Info
	// ValidateConfig checks a service's configuration on create and update
	// and reports every problem at once (errors.Join); the system API turns
	// the result into one 400.
	ValidateConfig(config json.RawMessage) error
	// New builds the backend for svc. It must not block on remote systems:
	// a backend connects lazily and reports an unreachable system as 503 on
	// the request that needs it.
	New(ctx context.Context, svc *store.Service, deps Deps) (Backend, error)
}

// Backend serves every request below /api/v2/{service}/. It reads the
// [Target] and the caller from the request's context.
type Backend interface {
	http.Handler
	// Close releases the backend's pools and connections. The router calls
	// it once the backend has been replaced and its requests have drained.
	Close() error
}

// BodyStreamer is implemented by backends that stream request bodies to
// their destination without holding them in memory (file uploads). The
// pipeline caps their bodies at its upload limit instead of its general
// body limit, which protects memory.
type BodyStreamer interface {
	StreamsBodies() bool
}

// CacheFlusher is implemented by backends that cache (schema, WSDL, GET
// responses); DELETE /system/cache calls it.
type CacheFlusher interface {
	FlushCache(ctx context.Context) error
}

// Registry is what backends may ask of the router that hosts them.
type Registry interface {
	// Types lists every service type the build knows, implemented or not.
	Types() []Info
	// Type returns the implementation of a type, or false when the type is
	// unknown or listed only (not implemented).
	Type(name string) (Type, bool)
	// Snapshot returns the configuration in force.
	Snapshot() *store.Snapshot
	// Backend returns the live backend of a service by name.
	Backend(name string) (Backend, bool)
	// Reload rebuilds the configuration now (after a write, so that the
	// writer's next request already sees it).
	Reload(ctx context.Context) error
	// Handler is the whole /api/v2 pipeline, for inner calls (scripts, MCP
	// tools) that must pass through RBAC like any request.
	Handler() http.Handler
}

// Deps is what a backend is built with.
type Deps struct {
	// Store is the system database; nil when Portcullis is embedded with
	// configuration in Go.
	Store *store.Store
	// Registry is the router hosting the backend.
	Registry Registry
	// DataDir is the data directory; relative paths in configuration are
	// resolved against it.
	DataDir string
	// Logger is the logger for the backend.
	Logger *slog.Logger
	// Version is Portcullis's version, for environment and documents.
	Version string
	// UpstreamAllow restricts the addresses remote backends may reach
	// (CIDRs and host names); empty allows all.
	UpstreamAllow []string
	// PublicURL is where clients reach this instance
	// (https://api.example.com, no trailing slash needed); empty when not
	// configured. Sign-in services build the URLs they hand to identity
	// providers from it.
	PublicURL string
	// Access answers role-based access questions for API documents; nil
	// in a stack without roles, where every caller reaches everything.
	Access AccessChecker
	// ScriptTimeout is the time limit of one script run (scripted
	// services); zero means the script engine's default.
	ScriptTimeout time.Duration
}

// Target is what a request is for.
type Target struct {
	// Service is the service record.
	Service *store.Service
	// Resource is the path below the service without leading or trailing
	// slashes ("" for the service root), e.g. "_table/contact/5".
	Resource string
	// Verb is the HTTP method after verb tunnelling (X-HTTP-Method).
	Verb string
}

// Segments splits Resource on "/".
func (t *Target) Segments() []string {
	if t.Resource == "" {
		return nil
	}
	return strings.Split(t.Resource, "/")
}

type targetKey struct{}

// WithTarget returns a context carrying t.
func WithTarget(ctx context.Context, t *Target) context.Context {
	return context.WithValue(ctx, targetKey{}, t)
}

// PutTarget sets t as the target of the request whose state is st (see
// caller.Ensure): what WithTarget does without a new context.
func PutTarget(st *caller.State, t *Target) { st.Put(targetKey{}, t) }

// TargetFrom returns the target in ctx, or nil.
func TargetFrom(ctx context.Context) *Target {
	t, _ := ctx.Value(targetKey{}).(*Target)
	return t
}

// Generic is the list of the spec's generic service type names with their
// labels and groups. The router lists them all in /system/service_type;
// those without an implementation refuse to be created with 501.
var Generic = []Info{
	{Name: "system", Label: "System Management", Group: GroupSystem, Description: "The platform's own configuration.", Singleton: true},
	{Name: "user", Label: "User Management", Group: GroupUser, Description: "Login, registration, passwords and profiles of users.", Singleton: true},
	{Name: "swagger", Label: "API Docs", Group: GroupAPIDoc, Description: "OpenAPI 3 documents of every service.", Singleton: true},
	{Name: "sqlite", Label: "SQLite", Group: GroupDatabase, Description: "A SQLite database file."},
	{Name: "pgsql", Label: "PostgreSQL", Group: GroupDatabase, Description: "A PostgreSQL database."},
	{Name: "mysql", Label: "MySQL", Group: GroupDatabase, Description: "A MySQL or MariaDB database."},
	{Name: "mssql", Label: "SQL Server", Group: GroupDatabase, Description: "A Microsoft SQL Server database."},
	{Name: "cassandra", Label: "Cassandra", Group: GroupDatabase, Description: "An Apache Cassandra keyspace."},
	{Name: "couchdb", Label: "CouchDB", Group: GroupDatabase, Description: "An Apache CouchDB database."},
	{Name: "firebird", Label: "Firebird", Group: GroupDatabase, Description: "A Firebird database."},
	{Name: "local_file", Label: "Local File Storage", Group: GroupFile, Description: "Files in a folder of the data directory."},
	{Name: "ftp_file", Label: "FTP File Storage", Group: GroupFile, Description: "Files on an FTP server."},
	{Name: "sftp_file", Label: "SFTP File Storage", Group: GroupFile, Description: "Files on an SFTP server."},
	{Name: "webdav_file", Label: "WebDAV File Storage", Group: GroupFile, Description: "Files on a WebDAV server."},
	{Name: "rws", Label: "HTTP Service", Group: GroupRemote, Description: "A remote HTTP service behind the platform's security."},
	{Name: "soap", Label: "SOAP Service", Group: GroupRemote, Description: "A SOAP service described by a WSDL."},
	{Name: "mcp", Label: "MCP Server", Group: GroupMCP, Description: "A remote MCP server, or services exposed as MCP tools."},
	{Name: "local_email", Label: "Local Email Service", Group: GroupEmail, Description: "E-mail through the local mail transfer agent."},
	{Name: "smtp_email", Label: "SMTP Email Service", Group: GroupEmail, Description: "E-mail through an SMTP server."},
	{Name: "cache_redis", Label: "Redis Cache", Group: GroupCache, Description: "A Redis key-value cache."},
	{Name: "cache_memcached", Label: "Memcached Cache", Group: GroupCache, Description: "A Memcached key-value cache."},
	{Name: "amqp", Label: "AMQP Client", Group: GroupIoT, Description: "Publish and consume AMQP messages."},
	{Name: "mqtt", Label: "MQTT Client", Group: GroupIoT, Description: "Publish and subscribe to MQTT topics."},
	{Name: "logstash", Label: "Logstash / GELF", Group: GroupLog, Description: "Ship request logs to a GELF collector."},
}
