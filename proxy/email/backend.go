package email

import (
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

// DefaultFrom is the sender of a message whose request, template and
// service name none.
var DefaultFrom = Address{Name: "Portcullis", Email: "no-reply@localhost"}

// Types returns the e-mail service types: local_email and smtp_email.
func Types() []service.Type { return []service.Type{LocalType{}, SMTPType{}} }

func info(name, label string) service.Info {
	for _, i := range service.Generic {
		if i.Name == name {
			return i
		}
	}
	return service.Info{Name: name, Label: label, Group: service.GroupEmail}
}

// LocalType is the local_email service type: each message written as an
// .eml file under the data directory. Its zero value is ready to use.
type LocalType struct{}

// Info names the type as the spec lists it.
func (LocalType) Info() service.Info { return info("local_email", "Local Email Service") }

// ValidateConfig checks a local_email configuration.
func (LocalType) ValidateConfig(config json.RawMessage) error {
	_, err := ParseLocalConfig(config)
	return err
}

// New builds the backend of svc.
func (LocalType) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseLocalConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	if deps.DataDir == "" && cfg.Path == "" {
		return nil, errors.New("email: local_email needs a data directory or an absolute path")
	}
	return newBackend(svc, deps, LocalSender{Dir: cfg.Dir(deps.DataDir)}, cfg.Defaults), nil
}

// SMTPType is the smtp_email service type. Its zero value uses the
// system's root certificates.
type SMTPType struct {
	// RootCAs, when set, are the certificates trusted for the server's
	// TLS (a private CA).
	RootCAs *x509.CertPool
}

// Info names the type as the spec lists it.
func (SMTPType) Info() service.Info { return info("smtp_email", "SMTP Email Service") }

// ValidateConfig checks an smtp_email configuration.
func (SMTPType) ValidateConfig(config json.RawMessage) error {
	_, err := ParseSMTPConfig(config)
	return err
}

// New builds the backend of svc; it connects for each message.
func (t SMTPType) New(_ context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	cfg, err := ParseSMTPConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	allow, err := upstream.ParseAllowList(deps.UpstreamAllow)
	if err != nil {
		return nil, err
	}
	var dial upstream.DialFunc
	if !allow.Empty() {
		dial = allow.Dialer()
	}
	return newBackend(svc, deps, NewSMTPSender(cfg, t.RootCAs, dial), cfg.Defaults), nil
}

// Backend is an e-mail service: POST /api/v2/{service} sends a message,
// and other packages (the user service's password reset, registration and
// invitations) send templates through [Backend.SendTemplate].
type Backend struct {
	name     string
	sender   Sender
	defaults Defaults
	store    *store.Store
	reg      service.Registry
	logger   *slog.Logger
}

var (
	_ service.Backend    = (*Backend)(nil)
	_ service.Documenter = (*Backend)(nil)
)

func newBackend(svc *store.Service, deps service.Deps, s Sender, d Defaults) *Backend {
	logger := deps.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Backend{name: svc.Name, sender: s, defaults: d, store: deps.Store, reg: deps.Registry, logger: logger.With("service", svc.Name)}
}

// NewBackend returns an e-mail service over any Sender, for stacks
// assembled in Go (no system database: no templates, no named lookups).
func NewBackend(name string, s Sender, d Defaults) *Backend {
	return &Backend{name: name, sender: s, defaults: d, logger: slog.New(slog.DiscardHandler)}
}

// Close releases nothing: senders connect per message.
func (b *Backend) Close() error { return nil }

// ServeHTTP answers POST / (send); other routes are 404 and other verbs 405.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.Handler(b.serve).ServeHTTP(w, r)
}

func (b *Backend) serve(w http.ResponseWriter, r *http.Request) error {
	if t := service.TargetFrom(r.Context()); t != nil && t.Resource != "" {
		return apierr.NotFound("Resource '%s' not found for service '%s'.", t.Resource, b.name)
	}
	if r.Method != http.MethodPost {
		return apierr.MethodNotAllowed(r.Method)
	}
	req, err := readRequest(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var tmpl *store.EmailTemplate
	if name := q.Get("template"); name != "" {
		if tmpl, err = b.template(r.Context(), 0, name); err != nil {
			return err
		}
	} else if id := q.Get("template_id"); id != "" {
		n, perr := strconv.ParseInt(id, 10, 64)
		if perr != nil || n <= 0 {
			return apierr.BadRequest("Invalid template_id '%s'.", id)
		}
		if tmpl, err = b.template(r.Context(), n, ""); err != nil {
			return err
		}
	}
	if len(req) == 0 && tmpl == nil {
		return apierr.BadRequest("No valid data in request.")
	}
	data := defaultsData(b.defaults)
	if tmpl != nil {
		data.merge(templateData(tmpl))
	}
	data.merge(req)
	var lookups map[string]string
	if b.reg != nil {
		lookups = lookupValues(b.reg.Snapshot(), caller.IdentityFrom(r.Context()))
	}
	m, err := build(data, lookups, DefaultFrom)
	if err != nil {
		return err
	}
	if err := b.send(r.Context(), m); err != nil {
		return err
	}
	return apierr.WriteJSON(w, http.StatusOK, map[string]int{"count": m.Recipients()})
}

// send delivers m and turns a sender's failure into the envelope's error.
func (b *Backend) send(ctx context.Context, m *Message) error {
	err := b.sender.Send(ctx, m)
	switch {
	case err == nil:
		return nil
	case errors.As(err, new(*upstream.NotAllowedError)):
		return apierr.BadGateway("E-mail service '%s' points at an address that the upstream allow list does not permit.", b.name).WithCause(err)
	case errors.Is(err, ErrUnreachable):
		return apierr.Unavailable("E-mail service '%s' cannot reach its mail server now; try again later.", b.name).WithCause(err)
	case errors.Is(err, ErrRefused):
		return apierr.BadGateway("E-mail service '%s': the mail server refused the message: %s", b.name, strings.TrimPrefix(err.Error(), ErrRefused.Error()+": ")).WithCause(err)
	}
	b.logger.Error("email: send failed", "err", err)
	return apierr.InternalMsg("E-mail service '%s' failed to send the message.", b.name).WithCause(err)
}

// readRequest reads the JSON object (or form fields) of a send request.
func readRequest(r *http.Request) (Data, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/x-www-form-urlencoded" || mt == "multipart/form-data" {
		if err := r.ParseMultipartForm(1 << 20); err != nil && !errors.Is(err, http.ErrNotMultipart) {
			return nil, apierr.As(err)
		}
		d := Data{}
		for k, vs := range r.Form {
			if len(vs) > 0 {
				d[k] = vs[0]
			}
		}
		if r.MultipartForm != nil && len(r.MultipartForm.File) > 0 {
			return nil, apierr.BadRequest("Attachments are not supported by this e-mail service.")
		}
		return d, nil
	}
	var d Data
	if err := apierr.DecodeJSON(r, &d, true); err != nil {
		return nil, err
	}
	if d == nil {
		d = Data{}
	}
	return d, nil
}

// template loads a stored template by id or name.
func (b *Backend) template(ctx context.Context, id int64, name string) (*store.EmailTemplate, error) {
	if b.store == nil {
		return nil, apierr.BadRequest("Templates need the system database; this e-mail service has none.")
	}
	t := new(store.EmailTemplate)
	q := b.store.DB.NewSelect().Model(t).Limit(1)
	if id != 0 {
		q = q.Where("id = ?", id)
	} else {
		q = q.Where("name = ?", name)
	}
	if err := q.Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			if id != 0 {
				return nil, apierr.NotFound("Email Template id '%d' not found", id)
			}
			return nil, apierr.NotFound("Email Template '%s' not found", name)
		}
		return nil, apierr.Unavailable("The system database cannot be read now.").WithCause(err)
	}
	return t, nil
}

// SendTemplate sends the stored template templateID (0: none, then data
// must carry subject and bodies) with data as request fields (to,
// first_name, confirm_code, link, …), as the user service does for
// password resets, registrations and invitations. A template without a
// text body gets one made from its HTML body. It returns the envelope's
// error (404 for an unknown template, 503 for an unreachable server).
func (b *Backend) SendTemplate(ctx context.Context, templateID int64, data map[string]string) error {
	d := defaultsData(b.defaults)
	if templateID != 0 {
		t, err := b.template(ctx, templateID, "")
		if err != nil {
			return err
		}
		td := templateData(t)
		if td.str("body_text") == "" && td.str("body_html") != "" {
			td["body_text"] = stripTags(td.str("body_html"))
		}
		d.merge(td)
	}
	for k, v := range data {
		d[k] = v
	}
	m, err := build(d, nil, DefaultFrom)
	if err != nil {
		return err
	}
	return b.send(ctx, m)
}

// OpenAPI documents POST /.
func (b *Backend) OpenAPI(context.Context) (*openapi3.T, error) { return Document(), nil }

// Document is the OpenAPI document of an e-mail service.
func Document() *openapi3.T {
	doc := service.NewDocument("E-mail: POST a message (to, cc, bcc as an address, {name,email} or a list; subject, body_text, body_html; from_*, reply_to_*), optionally from a stored template (?template= or ?template_id=). Every {field} of the request, and lookups such as {user.email}, are replaced in the subject and bodies.")
	str := openapi3.NewStringSchema
	addr := &openapi3.Schema{OneOf: openapi3.SchemaRefs{
		openapi3.NewSchemaRef("", service.Describe(str(), "An address, or a comma-separated list.")),
		openapi3.NewSchemaRef("", openapi3.NewObjectSchema().WithProperty("name", str()).WithProperty("email", str())),
		openapi3.NewSchemaRef("", openapi3.NewArraySchema().WithItems(openapi3.NewObjectSchema().WithProperty("name", str()).WithProperty("email", str()))),
	}}
	body := openapi3.NewObjectSchema().
		WithProperty("to", addr).WithProperty("cc", addr).WithProperty("bcc", addr).
		WithProperty("subject", str()).WithProperty("body_text", str()).WithProperty("body_html", str()).
		WithProperty("from_name", str()).WithProperty("from_email", str()).
		WithProperty("reply_to_name", str()).WithProperty("reply_to_email", str())
	body.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(true)}
	doc.Components.Schemas["EmailRequest"] = openapi3.NewSchemaRef("", body)
	count := openapi3.NewObjectSchema().WithProperty("count", service.Describe(openapi3.NewIntegerSchema(), "Recipients the message was sent to."))
	count.Required = []string{"count"}
	doc.Components.Schemas["EmailSent"] = openapi3.NewSchemaRef("", count)
	op := service.NewOperation("sendEmail", "email", "Send a message", "Sends one message; fields of a template, then of the request, apply in that order over the service's defaults.")
	op.AddParameter(service.QueryParam("template", "Name of a stored e-mail template.", str()).Value)
	op.AddParameter(service.QueryParam("template_id", "Id of a stored e-mail template.", openapi3.NewInt64Schema()).Value)
	op.RequestBody = service.JSONBody("The message.", false, service.SchemaRef("EmailRequest"))
	service.AddResponse(op, http.StatusOK, "Sent.", service.SchemaRef("EmailSent"))
	service.AddErrors(op, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
	op.Responses.Set("502", &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("The mail server refused the message.").WithJSONSchemaRef(service.SchemaRef(service.SchemaError))})
	service.AddOperation(doc, "/", http.MethodPost, op)
	return doc
}
