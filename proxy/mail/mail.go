// Package mail is the platform's one Mailer: the identity engine's reset
// and confirmation mails go through the e-mail service the configuration
// names, filled into its stored template. Any backend whose type
// implements TemplateSender (local_email, smtp_email) can deliver them.
package mail

import (
	"context"
	"fmt"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// DefaultService is the service that delivers the identity engine's mail
// when the user service's configuration names none.
const DefaultService = "email"

// TemplateSender is what an e-mail backend offers the platform: send a
// stored template (0: none) with data filling its fields and addressing it
// (to, subject, body_text, ...). proxy/email's backends implement it.
type TemplateSender interface {
	SendTemplate(ctx context.Context, templateID int64, data map[string]string) error
}

// Mailer is the platform's one identity.Mailer, handed by the composition
// root to every backend that sends mail (the user and system services): it
// sends through the e-mail service a message names by id (0: the service
// named "email") as that service is configured now, so a reconfigured or
// replaced e-mail service is used from its next message on.
type Mailer struct {
	reg service.Registry
	// publicURL prefixes a link that names a page of this instance
	// (Config.PublicURL).
	publicURL string
}

// New returns the Mailer sending through the services of reg. publicURL
// (Config.PublicURL), when set, prefixes the links of mails that name a
// page of this instance.
func New(reg service.Registry, publicURL string) *Mailer {
	return &Mailer{reg: reg, publicURL: publicURL}
}

// sender finds the active e-mail service of id and its backend.
func (m *Mailer) sender(serviceID int64) (TemplateSender, bool) {
	snap := m.reg.Snapshot()
	if snap == nil {
		return nil, false
	}
	var svc *store.Service
	if serviceID == 0 {
		svc = snap.Service(DefaultService)
	} else {
		svc = snap.ServiceByID(serviceID)
	}
	if svc == nil || !svc.IsActive {
		return nil, false
	}
	be, ok := m.reg.Backend(svc.Name)
	if !ok {
		return nil, false
	}
	ts, ok := be.(TemplateSender)
	return ts, ok
}

// CanSend implements identity.MailerAvailability.
func (m *Mailer) CanSend(serviceID int64) bool {
	_, ok := m.sender(serviceID)
	return ok
}

// SendMail implements identity.Mailer: the message's template filled with
// its data, or its own subject and text when it names no template.
func (m *Mailer) SendMail(ctx context.Context, msg identity.Mail) error {
	ts, ok := m.sender(msg.ServiceID)
	if !ok {
		return identity.ErrNoMailer
	}
	data := make(map[string]string, len(msg.Data)+3)
	for k, v := range msg.Data {
		data[k] = v
	}
	data["to"] = msg.To
	if link := data["link"]; strings.HasPrefix(link, "/") && m.publicURL != "" {
		data["link"] = strings.TrimSuffix(m.publicURL, "/") + link
	}
	if msg.TemplateID == 0 {
		data["subject"], data["body_text"] = msg.Subject, msg.Text
	}
	if err := ts.SendTemplate(ctx, msg.TemplateID, data); err != nil {
		return fmt.Errorf("mail: send %s mail: %w", msg.Kind, err)
	}
	return nil
}
