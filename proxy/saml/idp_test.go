package saml_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"encoding/xml"
	"fmt"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crewjam/saml"
)

// keyPair is an RSA key with a self-signed certificate, also as PEM.
type keyPair struct {
	key             *rsa.PrivateKey
	cert            *x509.Certificate
	keyPEM, certPEM string
}

func newKeyPair(t *testing.T, cn string) keyPair {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{key: key, cert: cert,
		keyPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
		certPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// testIdP is an in-process SAML identity provider (crewjam/saml's
// IdentityProvider) that signs everyone in as one user at once. It reads
// the SP's metadata from the SP's entity id (its metadata URL) with the
// app's API key. Its knobs spoil the next answers.
type testIdP struct {
	*httptest.Server
	idp    *saml.IdentityProvider
	signer keyPair
	forger keyPair
	apiKey string
	// spPublic and spReal, when set, map the SP's public base URL to
	// where the IdP reads its metadata.
	spPublic, spReal string

	mu sync.Mutex
	// The user.
	nameID, email, given, surname string
	// Knobs.
	forge, expired, staleConditions, badAudience, noAudience, badRecipient, encrypt bool
}

func newTestIdP(t *testing.T, apiKey string) *testIdP {
	t.Helper()
	p := &testIdP{signer: newKeyPair(t, "idp"), forger: newKeyPair(t, "forger"), apiKey: apiKey,
		nameID: "ann@example.org", email: "ann@example.org", given: "Ann", surname: "Example"}
	mux := http.NewServeMux()
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	md, _ := url.Parse(p.URL + "/metadata")
	sso, _ := url.Parse(p.URL + "/sso")
	p.idp = &saml.IdentityProvider{Key: p.signer.key, Certificate: p.signer.cert, MetadataURL: *md, SSOURL: *sso,
		ServiceProviderProvider: p, SessionProvider: p, AssertionMaker: p, Logger: log.New(io.Discard, "", 0)}
	if testing.Verbose() && os.Getenv("PORTCULLIS_TEST_LOG") != "" {
		p.idp.Logger = log.New(os.Stderr, "idp: ", 0)
	}
	mux.HandleFunc("GET /metadata", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.idp.ServeMetadata(w, r)
	})
	mux.HandleFunc("GET /sso", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.idp.Key, p.idp.Certificate = p.signer.key, p.signer.cert
		if p.forge {
			p.idp.Key, p.idp.Certificate = p.forger.key, p.forger.cert
		}
		p.idp.ServeSSO(w, r)
	})
	return p
}

// set changes knobs under the lock and undoes them when the test ends.
func (p *testIdP) set(t *testing.T, knob func(p *testIdP, on bool)) {
	t.Helper()
	p.mu.Lock()
	knob(p, true)
	p.mu.Unlock()
	t.Cleanup(func() { p.mu.Lock(); knob(p, false); p.mu.Unlock() })
}

// GetServiceProvider reads the SP's metadata from its entity id.
func (p *testIdP) GetServiceProvider(r *http.Request, id string) (*saml.EntityDescriptor, error) {
	u := id
	if p.spPublic != "" {
		u = p.spReal + strings.TrimPrefix(u, p.spPublic)
	}
	if p.apiKey != "" {
		u += "?api_key=" + url.QueryEscape(p.apiKey)
	}
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, os.ErrNotExist
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var md saml.EntityDescriptor
	if err := xml.Unmarshal(data, &md); err != nil {
		return nil, fmt.Errorf("SP metadata: %w", err)
	}
	if md.EntityID != id {
		return nil, fmt.Errorf("SP metadata names entity %q, not %q", md.EntityID, id)
	}
	if !p.encrypt {
		// Without the SP's certificate the IdP does not encrypt.
		for i := range md.SPSSODescriptors {
			md.SPSSODescriptors[i].KeyDescriptors = nil
		}
	}
	return &md, nil
}

// GetSession signs everyone in as the configured user.
func (p *testIdP) GetSession(w http.ResponseWriter, r *http.Request, req *saml.IdpAuthnRequest) *saml.Session {
	return &saml.Session{ID: "s1", CreateTime: time.Now(), ExpireTime: time.Now().Add(time.Hour), Index: "1",
		NameID: p.nameID, NameIDFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
		UserEmail: p.email, UserGivenName: p.given, UserSurname: p.surname, UserCommonName: p.given + " " + p.surname}
}

// MakeAssertion is crewjam's assertion, spoilt as the knobs say.
func (p *testIdP) MakeAssertion(req *saml.IdpAuthnRequest, s *saml.Session) error {
	if p.expired {
		req.Now = req.Now.Add(-time.Hour)
	}
	if err := (saml.DefaultAssertionMaker{}).MakeAssertion(req, s); err != nil {
		return err
	}
	a := req.Assertion
	if p.expired {
		a.IssueInstant = req.Now
	}
	if p.staleConditions {
		a.Conditions.NotOnOrAfter = time.Now().Add(-10 * time.Minute)
	}
	if p.badAudience {
		a.Conditions.AudienceRestrictions[0].Audience.Value = "https://someone-else.example/metadata"
	}
	if p.noAudience {
		a.Conditions.AudienceRestrictions = nil
	}
	if p.badRecipient {
		a.Subject.SubjectConfirmations[0].SubjectConfirmationData.Recipient = "https://someone-else.example/acs"
	}
	return nil
}
