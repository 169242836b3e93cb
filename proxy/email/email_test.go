package email_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/portcullis-dev/portcullis/proxy/email"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func post(t *testing.T, h http.Handler, body string) (int, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func newLocal(t *testing.T, config string) (service.Backend, string) {
	t.Helper()
	dir := t.TempDir()
	if err := (email.LocalType{}).ValidateConfig(json.RawMessage(config)); err != nil {
		t.Fatal(err)
	}
	be, err := email.LocalType{}.New(t.Context(), &store.Service{Name: "email", Type: "local_email", Config: config}, service.Deps{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return be, filepath.Join(dir, "storage", "email")
}

func readEML(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one .eml in %s, got %v (%v)", dir, entries, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	if err != nil || !strings.HasSuffix(entries[0].Name(), ".eml") {
		t.Fatalf("read %s: %v", entries[0].Name(), err)
	}
	return string(data)
}

func TestLocalEmail(t *testing.T) {
	be, dir := newLocal(t, `{"from_email":"shop@example.com","from_name":"Shop","parameters":[{"name":"shop","value":"Acme"},{"name":"off","value":"x","active":false}]}`)
	code, body := post(t, be, `{
		"to":[{"name":"Ann Lee","email":"ann@example.com"}], "cc":"cc@example.com", "bcc":["hidden@example.com"],
		"subject":"Hello {first_name} from {shop}{off}", "body_text":"Hi {first_name}, {unknown} stays",
		"body_html":"<p>Hi {first_name}</p>", "first_name":"<Ann>", "reply_to_email":"help@example.com"}`)
	if code != 200 || strings.TrimSpace(body) != `{"count":3}` {
		t.Fatalf("send = %d %s", code, body)
	}
	eml := readEML(t, dir)
	for _, want := range []string{
		"Bcc: <hidden@example.com>", `To: "Ann Lee" <ann@example.com>`, "Cc: <cc@example.com>",
		`From: "Shop" <shop@example.com>`, "Reply-To: <help@example.com>", "Subject: Hello <Ann> from Acme{off}",
		"Message-ID: <", "Date: ", "Hi <Ann>, {unknown} stays", "<p>Hi &lt;Ann&gt;</p>", "multipart/alternative",
	} {
		if !strings.Contains(eml, want) {
			t.Errorf("message lacks %q:\n%s", want, eml)
		}
	}
}

func TestSendErrors(t *testing.T) {
	be, dir := newLocal(t, `{}`)
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{`{"subject":"x"}`, 400, "Invalid email - ''."},
		{`{"to":"not an address","subject":"x"}`, 400, "Invalid email - 'not an address'."},
		{`{"to":[{"name":"x","email":""}],"subject":"x"}`, 400, "Email can not be empty."},
		{`{"to":"a@x.io"}`, 400, "No valid data in request."},
		{`{}`, 400, "No valid data in request."},
		{``, 400, "No valid data in request."},
		{`{"to":`, 400, ""},
		{`{"to":"a@x.io","subject":"x","attachment":"http://x/y"}`, 400, "Attachments"},
		{`{"to":"a@x.io","subject":"x\r\nBcc: evil@x.io"}`, 200, ""},
	} {
		code, body := post(t, be, c.body)
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("%s: %d %s, want %d %q", c.body, code, body, c.code, c.msg)
		}
	}
	// The header injection attempt stayed in the subject.
	if eml := readEML(t, dir); strings.Contains(eml, "\nBcc: evil") {
		t.Errorf("header injected:\n%s", eml)
	}
	if code, _ := post(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Method = http.MethodGet
		be.ServeHTTP(w, r)
	}), `{}`); code != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d", code)
	}
}

// smtpServer is an in-process SMTP server recording what it receives.
type smtpServer struct {
	mu       sync.Mutex
	from     string
	rcpts    []string
	data     string
	user     string
	password string
}

func (s *smtpServer) NewSession(*smtp.Conn) (smtp.Session, error) { return &smtpSession{s: s}, nil }

type smtpSession struct{ s *smtpServer }

func (x *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (x *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != x.s.user || pass != x.s.password {
			return errors.New("invalid credentials")
		}
		return nil
	}), nil
}
func (x *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	x.s.from, x.s.rcpts = from, nil
	return nil
}
func (x *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	x.s.rcpts = append(x.s.rcpts, to)
	return nil
}
func (x *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	x.s.data = string(b)
	return err
}
func (x *smtpSession) Reset()        {}
func (x *smtpSession) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func startSMTP(t *testing.T, implicitTLS bool, cert tls.Certificate) (*smtpServer, int) {
	t.Helper()
	rec := &smtpServer{user: "mailer", password: "secret"}
	srv := smtp.NewServer(rec)
	srv.Domain = "localhost"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.ReadTimeout, srv.WriteTimeout = 5*time.Second, 5*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if implicitTLS {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return rec, ln.Addr().(*net.TCPAddr).Port
}

func TestSMTPEmail(t *testing.T) {
	cert, pool := selfSigned(t)
	for _, c := range []struct {
		name        string
		implicitTLS bool
		encryption  string
		allow       []string
	}{
		{"starttls", false, "tls", nil},
		{"ssl", true, "ssl", nil},
		{"starttls through the allow list", false, "tls", []string{"127.0.0.0/8"}},
		{"ssl through the allow list", true, "ssl", []string{"127.0.0.0/8"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec, port := startSMTP(t, c.implicitTLS, cert)
			config := `{"host":"127.0.0.1","port":"` + itoa(port) + `","encryption":"` + c.encryption + `","username":"mailer","password":"secret","timeout":5}`
			typ := email.SMTPType{RootCAs: pool}
			if err := typ.ValidateConfig(json.RawMessage(config)); err != nil {
				t.Fatal(err)
			}
			be, err := typ.New(t.Context(), &store.Service{Name: "mail", Type: "smtp_email", Config: config}, service.Deps{UpstreamAllow: c.allow})
			if err != nil {
				t.Fatal(err)
			}
			code, body := post(t, be, `{"to":"ann@example.com","bcc":"hidden@example.com","subject":"Hi","body_text":"Hello","from_email":"shop@example.com"}`)
			if code != 200 {
				t.Fatalf("send = %d %s", code, body)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if rec.from != "shop@example.com" || strings.Join(rec.rcpts, ",") != "ann@example.com,hidden@example.com" {
				t.Errorf("envelope from %q to %v", rec.from, rec.rcpts)
			}
			if !strings.Contains(rec.data, "Subject: Hi") || strings.Contains(rec.data, "hidden@example.com") {
				t.Errorf("data (Bcc must be in the envelope only):\n%s", rec.data)
			}
		})
	}

	t.Run("wrong password", func(t *testing.T) {
		_, port := startSMTP(t, false, cert)
		config := `{"host":"127.0.0.1","port":` + itoa(port) + `,"encryption":"tls","username":"mailer","password":"wrong","timeout":5}`
		be, _ := email.SMTPType{RootCAs: pool}.New(t.Context(), &store.Service{Name: "mail", Config: config}, service.Deps{})
		if code, body := post(t, be, `{"to":"a@x.io","subject":"x"}`); code != http.StatusBadGateway {
			t.Errorf("wrong password = %d %s", code, body)
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		_, port := startSMTP(t, false, cert)
		config := `{"host":"127.0.0.1","port":` + itoa(port) + `,"encryption":"tls","timeout":5}`
		be, _ := email.SMTPType{}.New(t.Context(), &store.Service{Name: "mail", Config: config}, service.Deps{})
		if code, body := post(t, be, `{"to":"a@x.io","subject":"x"}`); code < 500 {
			t.Errorf("untrusted certificate = %d %s", code, body)
		}
	})
	t.Run("not in the upstream allow list", func(t *testing.T) {
		_, port := startSMTP(t, false, cert)
		config := `{"host":"127.0.0.1","port":` + itoa(port) + `,"encryption":"none","timeout":5}`
		be, _ := email.SMTPType{}.New(t.Context(), &store.Service{Name: "mail", Config: config}, service.Deps{UpstreamAllow: []string{"10.0.0.0/8"}})
		if code, body := post(t, be, `{"to":"a@x.io","subject":"x"}`); code != http.StatusBadGateway || !strings.Contains(body, "upstream allow list") {
			t.Errorf("refused address = %d %s", code, body)
		}
	})
	t.Run("server down", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		config := `{"host":"127.0.0.1","port":` + itoa(port) + `,"timeout":2}`
		be, _ := email.SMTPType{}.New(t.Context(), &store.Service{Name: "mail", Config: config}, service.Deps{})
		if code, body := post(t, be, `{"to":"a@x.io","subject":"x"}`); code != http.StatusServiceUnavailable {
			t.Errorf("server down = %d %s", code, body)
		}
	})
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []struct {
		typ  service.Type
		cfg  string
		want []string
	}{
		{email.LocalType{}, `{}`, nil},
		{email.LocalType{}, `{"path":"mail/out"}`, nil},
		{email.LocalType{}, `{"path":"../out","from_email":"nope","x":1}`, []string{"inside the data directory", "from_email", "unknown keys x"}},
		{email.SMTPType{}, `{}`, []string{"host: required"}},
		{email.SMTPType{}, `{"host":"h","port":"abc"}`, []string{"port"}},
		{email.SMTPType{}, `{"host":"h","encryption":"rot13","username":"u"}`, []string{"encryption", "both or neither"}},
		{email.SMTPType{}, `{"host":"smtp.example.com","port":"587","encryption":"tls","username":"u","password":"p"}`, nil},
	} {
		err := c.typ.ValidateConfig(json.RawMessage(c.cfg))
		if (err == nil) != (len(c.want) == 0) {
			t.Errorf("%s %s: %v", c.typ.Info().Name, c.cfg, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %s: %q lacks %q", c.typ.Info().Name, c.cfg, err, w)
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
