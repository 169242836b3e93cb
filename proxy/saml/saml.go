package saml

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/user"
)

// TypeName is the service type's name.
const TypeName = "saml"

// Group is DreamFactory's group of the type.
const Group = "SSO"

// StateTTL is how long a sign-in may take between the redirect to the
// identity provider and its answer at the ACS.
const StateTTL = 10 * time.Minute

// MetadataTTL is how long the identity provider's metadata (from
// idp_metadata_url) is used before it is read again.
const MetadataTTL = time.Hour

// maxResponseBytes bounds the SAMLResponse read at the ACS.
const maxResponseBytes = 1 << 20

// Type is the `saml` service type.
type Type struct {
	// HTTPClient reads the identity provider's metadata; nil means a
	// client with a 15 s timeout.
	HTTPClient *http.Client
}

// Info implements service.Type.
func (Type) Info() service.Info {
	return service.Info{Name: TypeName, Label: "SAML 2.0", Group: Group,
		Description: "Sign-in through a SAML 2.0 identity provider (Web Browser SSO: HTTP-Redirect request, HTTP-POST response, signed assertions required)."}
}

// ValidateConfig implements service.Type.
func (Type) ValidateConfig(config json.RawMessage) error {
	_, err := ParseConfig(config)
	return err
}

// ConfigSchema describes the configuration for /system/service_type.
func (Type) ConfigSchema() []service.ConfigField { return configKeys }

// New implements service.Type.
func (t Type) New(ctx context.Context, svc *store.Service, deps service.Deps) (service.Backend, error) {
	if deps.Store == nil {
		return nil, errors.New("the saml service needs the system database")
	}
	cfg, err := ParseConfig(svc.ConfigJSON())
	if err != nil {
		return nil, err
	}
	opts := identity.Options{Logger: deps.Logger}
	if deps.Registry != nil {
		opts.Snapshot = deps.Registry.Snapshot
		opts.Changed = deps.Registry.Reload
	}
	e, err := identity.New(deps.Store, opts)
	if err != nil {
		return nil, err
	}
	hc := t.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Backend{name: svc.Name, cfg: cfg, e: e, hc: hc, publicURL: strings.TrimSuffix(deps.PublicURL, "/"), log: log}
	if deps.Registry != nil {
		b.snapshot = deps.Registry.Snapshot
	}
	return b, nil
}

// Backend signs users in through one identity provider.
type Backend struct {
	name      string
	cfg       Config
	e         *identity.Engine
	hc        *http.Client
	publicURL string
	log       *slog.Logger
	snapshot  func() *store.Snapshot

	mu      sync.Mutex
	idp     *saml.EntityDescriptor
	idpRead time.Time
}

var (
	_ user.ServiceSignIn = (*Backend)(nil)
	_ service.Documenter = (*Backend)(nil)
)

// ServeHTTP serves GET /{svc}/metadata, GET|POST /{svc}/sso and POST
// /{svc}/acs.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	apierr.HandlerFunc(b.serve).ServeHTTP(w, r)
}

func (b *Backend) serve(w http.ResponseWriter, r *http.Request) error {
	res := ""
	verb := r.Method
	if t := service.TargetFrom(r.Context()); t != nil {
		res, verb = t.Resource, t.Verb
	}
	switch res {
	case "":
		if verb != http.MethodGet {
			return apierr.BadRequest("%s requests without a resource are not currently supported by the '%s' service.", verb, b.name)
		}
		return writeJSON(w, map[string]any{"resource": []string{"acs", "metadata", "sso"}})
	case "metadata":
		if verb != http.MethodGet {
			return apierr.BadRequest("%s requests for resource 'metadata' are not currently supported.", verb)
		}
		return b.metadata(w, r)
	case "sso":
		if verb != http.MethodGet && verb != http.MethodPost {
			return apierr.BadRequest("%s requests for resource 'sso' are not currently supported.", verb)
		}
		return b.start(w, r)
	case "acs":
		if verb != http.MethodPost {
			return apierr.BadRequest("%s requests for resource 'acs' are not currently supported.", verb)
		}
		return b.acs(w, r)
	}
	return apierr.NotFound("Resource '%s' not found for service '%s'.", res, b.name)
}

// Close implements service.Backend.
func (b *Backend) Close() error { return nil }

// ServeSignIn starts a sign-in (GET or POST /user/session?service=NAME).
func (b *Backend) ServeSignIn(w http.ResponseWriter, r *http.Request) error {
	return b.start(w, r)
}

// metadata answers the SP's metadata document.
func (b *Backend) metadata(w http.ResponseWriter, r *http.Request) error {
	sp := b.serviceProvider(r, nil)
	md := sp.Metadata()
	// Only the HTTP-POST binding is served at the ACS.
	for i := range md.SPSSODescriptors {
		d := &md.SPSSODescriptors[i]
		var acs []saml.IndexedEndpoint
		for _, e := range d.AssertionConsumerServices {
			if e.Binding == saml.HTTPPostBinding {
				acs = append(acs, e)
			}
		}
		d.AssertionConsumerServices = acs
	}
	out, err := xml.MarshalIndent(md, "", "  ")
	if err != nil {
		return apierr.Internal(fmt.Errorf("saml: SP metadata: %w", err))
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(out)
	return nil
}

// relay is what the RelayState carries, sealed.
type relay struct {
	Expires   time.Time
	RequestID string // "id-" + 32 hex digits
	Redirect  string
}

func (b *Backend) start(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	redirect := r.URL.Query().Get("redirect")
	if redirect != "" && !b.allowedRedirect(r, redirect) {
		return apierr.BadRequest("The redirect %q is neither a path on this host nor a URL on this host or the host of the service's relay_state.", redirect)
	}
	if redirect == "" {
		redirect = b.cfg.RelayState
	}
	idp, err := b.idpMetadata(ctx)
	if err != nil {
		return err
	}
	sp := b.serviceProvider(r, idp)
	sso := sp.GetSSOBindingLocation(saml.HTTPRedirectBinding)
	if sso == "" {
		return apierr.BadGateway("The identity provider's metadata names no single sign-on URL with the HTTP-Redirect binding.")
	}
	req, err := sp.MakeAuthenticationRequest(sso, saml.HTTPRedirectBinding, saml.HTTPPostBinding)
	if err != nil {
		return apierr.Internal(fmt.Errorf("saml: AuthnRequest: %w", err))
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return apierr.Internal(err)
	}
	req.ID = "id-" + hex.EncodeToString(id)
	state, err := b.seal(ctx, relay{Expires: time.Now().Add(StateTTL), RequestID: req.ID, Redirect: redirect})
	if err != nil {
		return err
	}
	u, err := req.Redirect(state, sp)
	if err != nil {
		return apierr.Internal(fmt.Errorf("saml: AuthnRequest redirect: %w", err))
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.Header.Get("X-Requested-With") == "XMLHttpRequest" {
		return writeJSON(w, map[string]any{"response": map[string]any{"redirect": true, "url": u.String()}})
	}
	http.Redirect(w, r, u.String(), http.StatusFound)
	return nil
}

// acs verifies the identity provider's answer and signs the user in.
func (b *Backend) acs(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	samlResponse, relayState, err := readACS(r)
	if err != nil {
		return err
	}
	if samlResponse == "" {
		return apierr.BadRequest("Invalid SAML Response provided: the request has no SAMLResponse.")
	}
	st, err := b.open(ctx, relayState)
	if err != nil {
		return err
	}
	idp, err := b.idpMetadata(ctx)
	if err != nil {
		return err
	}
	sp := b.serviceProvider(r, idp)
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(samlResponse), ""))
	if err != nil {
		return apierr.Unauthorized("The SAML response was refused: SAMLResponse is not base64.")
	}
	a, err := parseResponse(sp, raw, st.RequestID)
	if err != nil {
		return apierr.Unauthorized("The SAML response was refused: %s", err.Error())
	}
	if err := checkAssertion(a); err != nil {
		return apierr.Unauthorized("The SAML response was refused: %s", err.Error())
	}
	until := usedUntil(a, st.Expires)
	if err := b.e.UseOnce(ctx, "saml-request|"+b.name+"|"+st.RequestID, until); err != nil {
		return user.APIError(err)
	}
	if err := b.e.UseOnce(ctx, "saml-assertion|"+a.Issuer.Value+"|"+a.ID, until); err != nil {
		return user.APIError(err)
	}
	x := b.external(a)
	in, err := b.e.SignInExternal(ctx, x)
	if err != nil {
		return user.APIError(err)
	}
	if target := b.landing(r, st); target != "" {
		user.RedirectSignedIn(w, r, target, in.Response.SessionToken)
		return nil
	}
	return writeJSON(w, in.Response)
}

// readACS reads SAMLResponse and RelayState from a form or a JSON body.
func readACS(r *http.Request) (resp, relayState string, err error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var body struct {
			SAMLResponse string `json:"SAMLResponse"`
			RelayState   string `json:"RelayState"`
		}
		data, err := io.ReadAll(io.LimitReader(r.Body, maxResponseBytes+1))
		if err != nil {
			return "", "", apierr.BadRequest("The request body could not be read.")
		}
		if len(data) > maxResponseBytes {
			return "", "", apierr.BadRequest("Invalid SAML Response provided: the body is over %d bytes.", maxResponseBytes)
		}
		if err := json.Unmarshal(data, &body); err != nil {
			return "", "", apierr.BadRequest("Invalid SAML Response provided: the body is not a JSON object.")
		}
		return body.SAMLResponse, body.RelayState, nil
	}
	r.Body = http.MaxBytesReader(nil, r.Body, maxResponseBytes)
	if err := r.ParseForm(); err != nil {
		return "", "", apierr.BadRequest("Invalid SAML Response provided: the form could not be read.")
	}
	return r.PostForm.Get("SAMLResponse"), r.PostForm.Get("RelayState"), nil
}

// parseResponse verifies the response with crewjam/saml: the signature of
// the response or of the assertion (one is required) against the IdP's
// certificates, the issuer, the destination and recipient (the ACS URL),
// InResponseTo (requestID), IssueInstant, NotBefore and NotOnOrAfter and
// the audience (the SP's entity id).
func parseResponse(sp *saml.ServiceProvider, raw []byte, requestID string) (a *saml.Assertion, err error) {
	defer func() {
		// crewjam/saml dereferences optional elements (Subject,
		// Conditions) of a signed assertion without checking them.
		if p := recover(); p != nil {
			a, err = nil, fmt.Errorf("the assertion is malformed (%v)", p)
		}
	}()
	a, err = sp.ParseXMLResponse(raw, []string{requestID}, sp.AcsURL)
	if err == nil {
		return a, nil
	}
	var ire *saml.InvalidResponseError
	if errors.As(err, &ire) && ire.PrivateErr != nil {
		err = ire.PrivateErr
	}
	if err.Error() == "signature element not present" {
		return nil, errors.New("neither the response nor its assertion is signed (a signature is required)")
	}
	var bad saml.ErrBadStatus
	if errors.As(err, &bad) {
		return nil, fmt.Errorf("the identity provider did not sign the user in (status %s)", bad.Status)
	}
	return nil, err
}

// checkAssertion adds the checks of the Web Browser SSO profile that
// crewjam/saml leaves out when the elements are absent.
func checkAssertion(a *saml.Assertion) error {
	if a.Subject == nil || a.Subject.NameID == nil || strings.TrimSpace(a.Subject.NameID.Value) == "" {
		return errors.New("the assertion has no Subject NameID")
	}
	bearer := false
	for _, sc := range a.Subject.SubjectConfirmations {
		if sc.Method == "urn:oasis:names:tc:SAML:2.0:cm:bearer" && sc.SubjectConfirmationData != nil {
			bearer = true
		}
	}
	if !bearer {
		return errors.New("the assertion has no bearer SubjectConfirmation")
	}
	if a.Conditions == nil || a.Conditions.NotOnOrAfter.IsZero() {
		return errors.New("the assertion has no Conditions with NotOnOrAfter")
	}
	return nil
}

// usedUntil is how long the assertion and its request must be remembered
// as used: until neither could be accepted again.
func usedUntil(a *saml.Assertion, stateExpires time.Time) time.Time {
	until := stateExpires
	if a.Conditions != nil && a.Conditions.NotOnOrAfter.After(until) {
		until = a.Conditions.NotOnOrAfter
	}
	if a.Subject != nil {
		for _, sc := range a.Subject.SubjectConfirmations {
			if d := sc.SubjectConfirmationData; d != nil && d.NotOnOrAfter.After(until) {
				until = d.NotOnOrAfter
			}
		}
	}
	if max := time.Now().Add(24 * time.Hour); until.After(max) {
		until = max
	}
	return until.Add(saml.MaxClockSkew)
}

// Default attribute names, matched against Name and FriendlyName without
// regard to case.
var (
	emailAttrs = []string{"email", "mail", "emailaddress", "urn:oid:0.9.2342.19200300.100.1.3",
		"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"}
	nameAttrs = []string{"displayname", "cn", "name", "urn:oid:2.16.840.1.113730.3.1.241", "urn:oid:2.5.4.3",
		"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name"}
	firstNameAttrs = []string{"givenname", "firstname", "urn:oid:2.5.4.42",
		"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname"}
	lastNameAttrs = []string{"sn", "surname", "lastname", "urn:oid:2.5.4.4",
		"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname"}
)

// external is the user the assertion names.
func (b *Backend) external(a *saml.Assertion) identity.External {
	nameID := strings.TrimSpace(a.Subject.NameID.Value)
	pick := func(configured string, defaults []string) string {
		names := defaults
		if configured != "" {
			names = []string{configured}
		}
		return attribute(a, names)
	}
	email := pick(b.cfg.EmailAttribute, emailAttrs)
	if email == "" {
		if addr, err := mail.ParseAddress(nameID); err == nil && addr.Address == nameID {
			email = nameID
		}
	}
	name := pick(b.cfg.NameAttribute, nameAttrs)
	if name == "" && email == "" {
		name = "SAML User"
	}
	return identity.External{Service: b.name, Subject: nameID, Email: email, Name: name,
		FirstName: pick(b.cfg.FirstNameAttribute, firstNameAttrs), LastName: pick(b.cfg.LastNameAttribute, lastNameAttrs),
		RoleID: b.cfg.DefaultRole, RefuseNew: b.cfg.AllowNewUsers != nil && !*b.cfg.AllowNewUsers}
}

// attribute returns the first value of the first attribute named (Name
// or FriendlyName) by one of names.
func attribute(a *saml.Assertion, names []string) string {
	for _, want := range names {
		for _, st := range a.AttributeStatements {
			for _, at := range st.Attributes {
				if !strings.EqualFold(at.Name, want) && !strings.EqualFold(at.FriendlyName, want) {
					continue
				}
				for _, v := range at.Values {
					if s := strings.TrimSpace(v.Value); s != "" {
						return s
					}
				}
			}
		}
	}
	return ""
}

// landing is where the browser goes after signing in: the redirect it
// asked for at the start (or relay_state then), else the service's
// relay_state now, else, for a browser's form post, the landing page of
// the app it came through (identity.Engine.LandingURL). "" answers the
// session response as JSON, as DreamFactory does for an answer without a
// RelayState to go to.
func (b *Backend) landing(r *http.Request, st *relay) string {
	if st.Redirect != "" {
		return st.Redirect
	}
	if b.cfg.RelayState != "" {
		return b.cfg.RelayState
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		return b.e.LandingURL(r.Context())
	}
	return ""
}

// baseURL is where clients reach this instance: the PublicURL, else the
// request's scheme and host.
func (b *Backend) baseURL(r *http.Request) string {
	if b.publicURL != "" {
		return b.publicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// appKey is the API key of the caller's app (the pipeline identified it),
// "" when there is none.
func (b *Backend) appKey(ctx context.Context) string {
	id := caller.IdentityFrom(ctx)
	if id == nil || id.AppID == 0 || b.snapshot == nil {
		return ""
	}
	snap := b.snapshot()
	if snap == nil {
		return ""
	}
	if app := snap.App(id.AppID); app != nil {
		return app.APIKey
	}
	return ""
}

// serviceProvider is the SP as this request sees it: entity id
// <base>/api/v2/<svc>/metadata, ACS <base>/api/v2/<svc>/acs with the
// request's API key as ?api_key= (the browser posts the answer without
// headers, so the key rides in the URL, as in OIDC's redirect_url).
func (b *Backend) serviceProvider(r *http.Request, idp *saml.EntityDescriptor) *saml.ServiceProvider {
	base := b.baseURL(r) + "/api/v2/" + url.PathEscape(b.name)
	md, _ := url.Parse(base + "/metadata")
	acs, _ := url.Parse(base + "/acs")
	if k := b.appKey(r.Context()); k != "" {
		acs.RawQuery = url.Values{"api_key": {k}}.Encode()
	}
	sp := &saml.ServiceProvider{EntityID: md.String(), MetadataURL: *md, AcsURL: *acs, IDPMetadata: idp,
		AuthnNameIDFormat: saml.NameIDFormat(b.cfg.SPNameIDFormat), HTTPClient: b.hc,
		MetadataValidDuration: 24 * time.Hour}
	if b.cfg.spKey != nil {
		sp.Key = b.cfg.spKey
		sp.Certificate = b.cfg.spCert
		sp.SignatureMethod = dsig.RSASHA256SignatureMethod
	}
	entityID := sp.EntityID
	sp.ValidateAudienceRestriction = func(a *saml.Assertion) error {
		if a.Conditions == nil || len(a.Conditions.AudienceRestrictions) == 0 {
			return errors.New("the assertion has no AudienceRestriction")
		}
		// Every restriction must name this SP (SAML core 2.5.1.4).
		for _, ar := range a.Conditions.AudienceRestrictions {
			if ar.Audience.Value != entityID {
				return fmt.Errorf("the assertion's audience %q is not this service provider (%q)", ar.Audience.Value, entityID)
			}
		}
		return nil
	}
	return sp
}

// idpMetadata returns the identity provider's description: from
// idp_metadata_url (read at most every MetadataTTL; a stale copy is kept
// when the IdP cannot be reached), with the idp_ keys set by hand in
// precedence.
func (b *Backend) idpMetadata(ctx context.Context) (*saml.EntityDescriptor, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.idp != nil && (b.cfg.IdPMetadataURL == "" || time.Since(b.idpRead) < MetadataTTL) {
		return b.idp, nil
	}
	var md *saml.EntityDescriptor
	if b.cfg.IdPMetadataURL != "" {
		fetched, err := b.fetchMetadata(ctx)
		if err != nil {
			if b.idp != nil {
				b.log.WarnContext(ctx, "saml: identity provider metadata not refreshed; using the copy read before",
					"service", b.name, "error", err)
				b.idpRead = time.Now()
				return b.idp, nil
			}
			return nil, err
		}
		md = fetched
	} else {
		md = &saml.EntityDescriptor{IDPSSODescriptors: []saml.IDPSSODescriptor{{}}}
	}
	if b.cfg.IdPEntityID != "" {
		md.EntityID = b.cfg.IdPEntityID
	}
	if len(md.IDPSSODescriptors) == 0 {
		return nil, apierr.BadGateway("The identity provider's metadata has no IDPSSODescriptor.")
	}
	d := &md.IDPSSODescriptors[0]
	if b.cfg.IdPSSOURL != "" {
		d.SingleSignOnServices = []saml.Endpoint{{Binding: saml.HTTPRedirectBinding, Location: b.cfg.IdPSSOURL}}
	}
	if b.cfg.idpCert != nil {
		md.IDPSSODescriptors = md.IDPSSODescriptors[:1]
		d.KeyDescriptors = []saml.KeyDescriptor{{Use: "signing", KeyInfo: saml.KeyInfo{X509Data: saml.X509Data{
			X509Certificates: []saml.X509Certificate{{Data: base64.StdEncoding.EncodeToString(b.cfg.idpCert.Raw)}}}}}}
	}
	if md.EntityID == "" {
		return nil, apierr.BadGateway("The identity provider's metadata has no entityID.")
	}
	b.idp, b.idpRead = md, time.Now()
	return md, nil
}

func (b *Backend) fetchMetadata(ctx context.Context) (*saml.EntityDescriptor, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, b.cfg.IdPMetadataURL, nil)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return nil, badGateway(err, "The identity provider's metadata could not be read")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, badGateway(fmt.Errorf("HTTP %d", resp.StatusCode), "The identity provider's metadata could not be read")
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, badGateway(err, "The identity provider's metadata could not be read")
	}
	md, err := parseMetadata(data)
	if err != nil {
		return nil, badGateway(err, "The identity provider's metadata is not SAML metadata")
	}
	return md, nil
}

// allowedRedirect admits a path on this host, or a URL on this host
// (PublicURL) or on the host of relay_state.
func (b *Backend) allowedRedirect(r *http.Request, s string) bool {
	if isLocalPath(s) {
		return true
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	for _, base := range []string{b.baseURL(r), b.cfg.RelayState} {
		bu, err := url.Parse(base)
		if err == nil && bu.Host != "" && strings.EqualFold(u.Host, bu.Host) && (u.Scheme == "https" || u.Scheme == bu.Scheme) {
			return true
		}
	}
	return false
}

// seal encrypts st into a RelayState: expiry, request id and redirect,
// bound to the service. Without a redirect it stays under the 80 bytes
// SAML bindings (3.4.3) ask of a RelayState.
func (b *Backend) seal(ctx context.Context, st relay) (string, error) {
	id, err := hex.DecodeString(strings.TrimPrefix(st.RequestID, "id-"))
	if err != nil || len(id) != 16 {
		return "", apierr.Internal(fmt.Errorf("saml: request id %q", st.RequestID))
	}
	plain := binary.BigEndian.AppendUint64(nil, uint64(st.Expires.Unix()))
	plain = append(plain, id...)
	plain = append(plain, st.Redirect...)
	out, err := b.e.Seal(ctx, "saml relay state "+b.name, plain)
	if err != nil {
		return "", user.APIError(err)
	}
	return out, nil
}

// open decrypts and checks a RelayState. An answer without one (an
// unsolicited, IdP-initiated response) is refused.
func (b *Backend) open(ctx context.Context, state string) (*relay, error) {
	bad := apierr.Unauthorized("The RelayState is missing, forged or expired (answers the identity provider sends unasked are not accepted); start the sign-in again.")
	plain, err := b.e.Open(ctx, "saml relay state "+b.name, state)
	switch {
	case errors.Is(err, identity.ErrSealBroken) || err == nil && len(plain) < 24:
		return nil, bad
	case err != nil:
		return nil, user.APIError(err)
	}
	st := &relay{Expires: time.Unix(int64(binary.BigEndian.Uint64(plain[:8])), 0),
		RequestID: "id-" + hex.EncodeToString(plain[8:24]), Redirect: string(plain[24:])}
	if time.Now().After(st.Expires) {
		return nil, bad
	}
	return st, nil
}

// badGateway is the 502 for an identity provider that failed.
func badGateway(err error, msg string) error {
	e := apierr.BadGateway("%s: %s", msg, err.Error())
	e.Err = err
	return e
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	_ = apierr.WriteJSON(w, http.StatusOK, v)
	return nil
}

// parseMetadata reads IdP metadata: an EntityDescriptor, or the first
// entity with an IDPSSODescriptor of an EntitiesDescriptor.
func parseMetadata(data []byte) (*saml.EntityDescriptor, error) {
	var probe struct{ XMLName xml.Name }
	if err := xml.Unmarshal(data, &probe); err != nil {
		return nil, err
	}
	switch probe.XMLName.Local {
	case "EntityDescriptor":
		md := &saml.EntityDescriptor{}
		if err := xml.Unmarshal(data, md); err != nil {
			return nil, err
		}
		return md, nil
	case "EntitiesDescriptor":
		var all saml.EntitiesDescriptor
		if err := xml.Unmarshal(data, &all); err != nil {
			return nil, err
		}
		for i, e := range all.EntityDescriptors {
			if len(e.IDPSSODescriptors) > 0 {
				return &all.EntityDescriptors[i], nil
			}
		}
		return nil, errors.New("no entity with an IDPSSODescriptor")
	}
	return nil, fmt.Errorf("the root element is %s, not EntityDescriptor", probe.XMLName.Local)
}
