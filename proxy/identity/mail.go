package identity

import (
	"context"
	"errors"
)

// Mail is one message for a Mailer.
type Mail struct {
	// ServiceID is the e-mail service to send through; 0 lets the mailer
	// choose its default.
	ServiceID int64
	// Kind is MailPasswordReset or MailConfirmation.
	Kind string
	// To and ToName address the recipient.
	To, ToName string
	// Subject and Text are a ready plain-text message.
	Subject, Text string
	// Data holds the fields a template may use: first_name, last_name,
	// name, email, confirm_code.
	Data map[string]string
}

// Kinds of Mail.
const (
	MailPasswordReset = "password_reset"
	MailConfirmation  = "registration_confirmation"
)

// Mailer delivers e-mail; the email service's backends implement it.
type Mailer interface {
	SendMail(ctx context.Context, m Mail) error
}

// MailerAvailability is implemented by Mailers that can tell in advance
// whether they can send through an e-mail service (0: their default), so
// that answers never depend on whether the address has an account.
type MailerAvailability interface {
	CanSend(serviceID int64) bool
}

// canMail reports whether mail can be sent through serviceID.
func (s *Engine) canMail(serviceID int64) bool {
	if s.opts.Mailer == nil {
		return false
	}
	if c, ok := s.opts.Mailer.(MailerAvailability); ok {
		return c.CanSend(serviceID)
	}
	return true
}

// ErrNoMailer is returned by a Mailer that has no e-mail service to send
// through; callers treat it like a missing Mailer.
var ErrNoMailer = errors.New("identity: no e-mail service is configured")
