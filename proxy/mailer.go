package proxy

import (
	"context"
	"fmt"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// DefaultEmailService is the service that delivers the identity engine's
// mail when the user service's configuration names none.
const DefaultEmailService = "email"

// templateSender is what an e-mail backend offers the platform: send a
// stored template (0: none) with data filling its fields and addressing it
// (to, subject, body_text, ...). proxy/email's backends implement it.
type templateSender interface {
	SendTemplate(ctx context.Context, templateID int64, data map[string]string) error
}

// registryMailer is the platform's one identity.Mailer, handed to every
// backend that sends mail (the user and system services): it sends
// through the e-mail service a message names by id (0: the service named
// "email") as that service is configured now, so a reconfigured or
// replaced e-mail service is used from its next message on.
type registryMailer struct {
	reg service.Registry
	// publicURL prefixes a link that names a page of this instance
	// (Config.PublicURL).
	publicURL string
}

// sender finds the active e-mail service of id and its backend.
func (m registryMailer) sender(serviceID int64) (templateSender, bool) {
	snap := m.reg.Snapshot()
	if snap == nil {
		return nil, false
	}
	var svc *store.Service
	if serviceID == 0 {
		svc = snap.Service(DefaultEmailService)
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
	ts, ok := be.(templateSender)
	return ts, ok
}

// CanSend implements identity.MailerAvailability.
func (m registryMailer) CanSend(serviceID int64) bool {
	_, ok := m.sender(serviceID)
	return ok
}

// SendMail implements identity.Mailer: the message's template filled with
// its data, or its own subject and text when it names no template.
func (m registryMailer) SendMail(ctx context.Context, msg identity.Mail) error {
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
		return fmt.Errorf("proxy: send %s mail: %w", msg.Kind, err)
	}
	return nil
}
