package email

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Sender delivers a message.
type Sender interface {
	Send(ctx context.Context, m *Message) error
}

// Errors a Sender returns.
var (
	// ErrUnreachable is a mail server that cannot be reached now (503).
	ErrUnreachable = errors.New("mail server unreachable")
	// ErrRefused is a message the mail server refused (502).
	ErrRefused = errors.New("mail server refused the message")
)

// render builds the RFC 5322 message with go-mail.
func render(m *Message) (*gomail.Msg, error) {
	g := gomail.NewMsg()
	if err := g.FromFormat(m.From.Name, m.From.Email); err != nil {
		return nil, fmt.Errorf("from: %w", err)
	}
	for _, a := range m.To {
		if err := g.AddToFormat(a.Name, a.Email); err != nil {
			return nil, fmt.Errorf("to: %w", err)
		}
	}
	for _, a := range m.CC {
		if err := g.AddCcFormat(a.Name, a.Email); err != nil {
			return nil, fmt.Errorf("cc: %w", err)
		}
	}
	for _, a := range m.BCC {
		if err := g.AddBccFormat(a.Name, a.Email); err != nil {
			return nil, fmt.Errorf("bcc: %w", err)
		}
	}
	if m.ReplyTo != nil {
		if err := g.ReplyToFormat(m.ReplyTo.Name, m.ReplyTo.Email); err != nil {
			return nil, fmt.Errorf("reply-to: %w", err)
		}
	}
	g.Subject(m.Subject)
	switch {
	case m.BodyText != "" && m.BodyHTML != "":
		g.SetBodyString(gomail.TypeTextPlain, m.BodyText)
		g.AddAlternativeString(gomail.TypeTextHTML, m.BodyHTML)
	case m.BodyHTML != "":
		g.SetBodyString(gomail.TypeTextHTML, m.BodyHTML)
	default:
		g.SetBodyString(gomail.TypeTextPlain, m.BodyText)
	}
	g.SetDate()
	g.SetMessageID()
	g.SetUserAgent("Portcullis")
	return g, nil
}

// LocalSender writes each message as an .eml file (RFC 5322, Bcc header
// included) in a folder, created on first use. Nothing is delivered.
type LocalSender struct {
	// Dir is the folder.
	Dir string
}

// Send writes m to a new file, atomically (a reader never sees half a
// message).
func (s LocalSender) Send(_ context.Context, m *Message) error {
	g, err := render(m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if len(m.BCC) > 0 {
		list := make([]string, len(m.BCC))
		for i, a := range m.BCC {
			list[i] = a.String()
		}
		buf.WriteString("Bcc: " + strings.Join(list, ", ") + "\r\n")
	}
	if _, err := g.WriteTo(&buf); err != nil {
		return fmt.Errorf("email: render: %w", err)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("email: create %s: %w", s.Dir, err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(rnd[:]) + ".eml"
	tmp := filepath.Join(s.Dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("email: write: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("email: write: %w", err)
	}
	return nil
}

// SMTPSender delivers through an SMTP server with go-mail: STARTTLS
// required for encryption "tls", TLS from the first byte for "ssl", and
// authentication (mechanism discovered from the server) when a username
// is set. Bcc recipients are in the envelope only.
type SMTPSender struct {
	cfg     SMTPConfig
	rootCAs *x509.CertPool
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

// NewSMTPSender returns the sender for cfg (checked by ParseSMTPConfig).
// rootCAs, when set, replaces the system's roots (tests, private CAs);
// dial, when set, replaces the network dialer.
func NewSMTPSender(cfg SMTPConfig, rootCAs *x509.CertPool, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *SMTPSender {
	if cfg.Timeout == 0 {
		cfg.Timeout = 30
	}
	return &SMTPSender{cfg: cfg, rootCAs: rootCAs, dial: dial}
}

// Send delivers m.
func (s *SMTPSender) Send(ctx context.Context, m *Message) error {
	g, err := render(m)
	if err != nil {
		return err
	}
	enc := strings.ToLower(s.cfg.Encryption)
	port := int(s.cfg.Port)
	if port == 0 {
		port = 587
		if enc == "ssl" {
			port = 465
		}
	}
	tlsConfig := &tls.Config{ServerName: s.cfg.Host, RootCAs: s.rootCAs, MinVersion: tls.VersionTLS12}
	opts := []gomail.Option{
		gomail.WithPort(port),
		gomail.WithTimeout(time.Duration(s.cfg.Timeout) * time.Second),
		gomail.WithTLSConfig(tlsConfig),
	}
	switch enc {
	case "ssl":
		opts = append(opts, gomail.WithSSL())
	case "tls", "starttls":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if s.cfg.Username != "" {
		auth := gomail.SMTPAuthAutoDiscover
		if s.dial != nil && enc == "ssl" {
			// go-mail takes a connection from a dial function for
			// unencrypted even when it is TLS, and its auto-discovery then
			// leaves out PLAIN and LOGIN; PLAIN over our TLS is what an SSL
			// port offers.
			auth = gomail.SMTPAuthPlain
		}
		opts = append(opts, gomail.WithSMTPAuth(auth),
			gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	if s.dial != nil {
		dial := s.dial
		if enc == "ssl" {
			// go-mail dials a given function as it is, also for SSL: the
			// TLS handshake is ours then.
			dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				raw, err := s.dial(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				c := tls.Client(raw, tlsConfig)
				if err := c.HandshakeContext(ctx); err != nil {
					raw.Close()
					return nil, err
				}
				return c, nil
			}
		}
		opts = append(opts, gomail.WithDialContextFunc(dial))
	}
	c, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("email: smtp client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(s.cfg.Timeout)*time.Second)
	defer cancel()
	if err := c.DialAndSendWithContext(ctx, g); err != nil {
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return nil
}
