package identity

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Mail is one message for a Mailer.
type Mail struct {
	// ServiceID is the e-mail service to send through; 0 lets the mailer
	// choose its default.
	ServiceID int64
	// TemplateID is the stored e-mail template to send (the user service's
	// password_email_template_id or open_reg_email_template_id); 0 sends
	// Subject and Text as they are. A template's {fields} are filled from
	// Data.
	TemplateID int64
	// Kind is MailPasswordReset or MailConfirmation.
	Kind string
	// To and ToName address the recipient.
	To, ToName string
	// Subject and Text are a ready plain-text message.
	Subject, Text string
	// Data holds the fields a template may use, as DreamFactory names
	// them: to, first_name, last_name, name, email, phone, confirm_code,
	// link and content_header.
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

// Default pages the links of reset and confirmation mails point at: the
// routes of DreamFactory's admin application (df.confirm_reset_url,
// df.confirm_register_url).
const (
	DefaultConfirmResetURL    = "/dreamfactory/dist/#/auth/reset-password"
	DefaultConfirmRegisterURL = "/dreamfactory/dist/#/auth/register-confirm"
)

// confirmLink is DreamFactory's link of a code mail: the page, then code,
// email and username in the query.
func confirmLink(page string, u *store.User, code string) string {
	sep := "?"
	if strings.Contains(page, "?") {
		sep = "&"
	}
	// DreamFactory's order: code, email, username.
	return page + sep + "code=" + url.QueryEscape(code) + "&email=" + url.QueryEscape(u.Email) +
		"&username=" + url.QueryEscape(u.Username)
}

// mailData is the template data of a code mail to u.
func mailData(u *store.User, code, header, link string) map[string]string {
	return map[string]string{"to": u.Email, "first_name": u.FirstName, "last_name": u.LastName, "name": u.Name,
		"email": u.Email, "phone": u.Phone, "confirm_code": code, "content_header": header, "link": link}
}
