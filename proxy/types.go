package proxy

import (
	"encoding/json"
	"time"

	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/apidocs"
	"github.com/portcullis-dev/portcullis/proxy/cache"
	"github.com/portcullis-dev/portcullis/proxy/email"
	"github.com/portcullis-dev/portcullis/proxy/files"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/iot"
	"github.com/portcullis-dev/portcullis/proxy/ldap"
	"github.com/portcullis-dev/portcullis/proxy/logship"
	"github.com/portcullis-dev/portcullis/proxy/logstash"
	"github.com/portcullis-dev/portcullis/proxy/mcp"
	"github.com/portcullis-dev/portcullis/proxy/oidc"
	"github.com/portcullis-dev/portcullis/proxy/rws"
	"github.com/portcullis-dev/portcullis/proxy/saml"
	"github.com/portcullis-dev/portcullis/proxy/scriptsvc"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/soap"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/system"
	"github.com/portcullis-dev/portcullis/proxy/user"
)

// defaultTypes is the list of service types a standalone instance knows.
// Embedders add theirs with WithTypes. Every generic type of the spec that
// is not here is still listed by /system/service_type and refuses to be
// created with 501. limits is the rate-limit counter store the system
// service's limit_cache reads and resets; audit is the log of MCP tool
// calls.
// mail is the platform's one Mailer, handed to every backend that sends
// mail. logs counts the log services' shipped and dropped events.
func defaultTypes(limits *limiter.Store, audit *mcp.Audit, mail identity.Mailer, logs *logship.Metrics) []service.Type {
	var types []service.Type
	types = append(types, sqldb.Types()...)
	types = append(types, rws.Type{})
	types = append(types, soap.Type{})
	types = append(types, files.Types()...)
	types = append(types, email.Types()...)
	types = append(types, cache.Types()...)
	types = append(types, iot.Types()...)
	types = append(types, logstash.Types(logstash.Options{Metrics: logs})...)
	types = append(types, user.NewType(user.Options{Mailer: mail}))
	types = append(types, oidc.Types()...)
	types = append(types, ldap.Types()...)
	types = append(types, saml.Type{})
	types = append(types, system.NewType(system.Options{LimitStore: limits, SignIn: adminSignIn, Mailer: mail}))
	types = append(types, apidocs.Type{})
	types = append(types, scriptsvc.Types()...)
	types = append(types, mcp.NewType(mcp.Options{Audit: audit, Forwarder: rwsForwarder{}}))
	return types
}

// adminSignIn serves the administrator's own resources of the system
// service (admin/session, admin/password, admin/profile) with the user
// package's sign-in resources: one HTTP face for both kinds of sign-in.
func adminSignIn(e *identity.Engine) system.SignIn { return user.NewSignIn(e, true) }

// rwsForwarder is the mcp type's Forwarder: a remote MCP server is
// forwarded to as an rws service is (configured headers, parameters and
// lookups, platform credentials stripped, upstream allow list, 503/504),
// never cached, its event streams unbounded in time.
type rwsForwarder struct{}

func (rwsForwarder) ValidateForward(config json.RawMessage) error {
	_, err := rws.ParseConfig(config)
	return err
}

func (rwsForwarder) NewForward(svc *store.Service, deps service.Deps, config json.RawMessage, headerTimeout time.Duration) (mcp.ForwardHandler, error) {
	cfg, err := rws.ParseConfig(config)
	if err != nil {
		return nil, err
	}
	cfg.CacheEnabled = false
	cfg.HeaderTimeout = headerTimeout
	return rws.NewService(svc, deps, cfg)
}
