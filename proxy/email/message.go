package email

import (
	"encoding/json"
	"fmt"
	"html"
	"net/mail"
	"regexp"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Address is a recipient or sender.
type Address struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email"`
}

// String formats the address for a header.
func (a Address) String() string { return (&mail.Address{Name: a.Name, Address: a.Email}).String() }

// Message is one e-mail, ready to send: replacement fields applied.
type Message struct {
	From     Address
	ReplyTo  *Address
	To       []Address
	CC       []Address
	BCC      []Address
	Subject  string
	BodyText string
	BodyHTML string
}

// Recipients is the number of addresses the message goes to.
func (m *Message) Recipients() int { return len(m.To) + len(m.CC) + len(m.BCC) }

// maxRecipients caps the addresses of one message.
const maxRecipients = 500

// parseAddress checks one e-mail address ("a@x.io" or "Ann <a@x.io>").
func parseAddress(s string) (Address, error) {
	a, err := mail.ParseAddress(strings.TrimSpace(s))
	if err != nil || strings.ContainsAny(a.Address, "\r\n") {
		return Address{}, apierr.BadRequest("Invalid email - '%s'.", s)
	}
	return Address{Name: a.Name, Email: a.Address}, nil
}

// addresses reads DreamFactory's address forms: a string (one address or
// a comma-separated list), an object {"name","email"}, or a list of
// either. JSON text holding one of those (as templates store them) is
// read too.
func addresses(v any) ([]Address, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return nil, nil
		}
		if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
			var inner any
			if err := json.Unmarshal([]byte(s), &inner); err == nil {
				return addresses(inner)
			}
		}
		list, err := mail.ParseAddressList(s)
		if err != nil {
			return nil, apierr.BadRequest("Invalid email - '%s'.", s)
		}
		out := make([]Address, 0, len(list))
		for _, a := range list {
			out = append(out, Address{Name: a.Name, Email: a.Address})
		}
		return out, nil
	case map[string]any:
		em, _ := x["email"].(string)
		if strings.TrimSpace(em) == "" {
			return nil, apierr.BadRequest("Email can not be empty.")
		}
		a, err := parseAddress(em)
		if err != nil {
			return nil, err
		}
		if name, ok := x["name"].(string); ok {
			a.Name = strings.TrimSpace(name)
		}
		return []Address{a}, nil
	case []any:
		var out []Address
		for _, e := range x {
			as, err := addresses(e)
			if err != nil {
				return nil, err
			}
			out = append(out, as...)
		}
		return out, nil
	}
	return nil, apierr.BadRequest("Invalid email - '%v'.", v)
}

// Data is a message request: DreamFactory's fields (to, cc, bcc, subject,
// body_text, body_html, from_name, from_email, reply_to_name,
// reply_to_email) and any other fields, used as replacement values.
type Data map[string]any

// str returns a string field ("" when absent or not a string).
func (d Data) str(k string) string {
	s, _ := d[k].(string)
	return s
}

// merge overlays top on d (top wins) and returns d.
func (d Data) merge(top Data) Data {
	for k, v := range top {
		d[k] = v
	}
	return d
}

// templateData is a stored template as request fields; empty fields are
// left out so they do not hide the service's defaults. Its stored
// defaults (a JSON object) come first.
func templateData(t *store.EmailTemplate) Data {
	d := Data{}
	if strings.TrimSpace(t.Defaults) != "" {
		var def map[string]any
		if err := json.Unmarshal([]byte(t.Defaults), &def); err == nil {
			d.merge(def)
		}
	}
	for k, v := range map[string]string{
		"to": t.To, "cc": t.CC, "bcc": t.BCC, "subject": t.Subject, "body_text": t.BodyText, "body_html": t.BodyHTML,
		"from_name": t.FromName, "from_email": t.FromEmail, "reply_to_name": t.ReplyToName, "reply_to_email": t.ReplyToEmail,
	} {
		if strings.TrimSpace(v) != "" {
			d[k] = v
		}
	}
	return d
}

// defaultsData is a service's defaults as request fields.
func defaultsData(d Defaults) Data {
	out := Data{}
	for _, p := range d.Parameters {
		if p.Active == nil || *p.Active {
			out[p.Name] = p.Value
		}
	}
	for k, v := range map[string]string{"from_name": d.FromName, "from_email": d.FromEmail, "reply_to_name": d.ReplyToName, "reply_to_email": d.ReplyToEmail} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// lookupValues are the lookups a message may use: the caller's identity
// and the named lookups that apply to it (private ones never: a message
// leaves the platform).
func lookupValues(snap *store.Snapshot, id *caller.Identity) map[string]string {
	var appID, roleID, userID int64
	if id != nil {
		appID, roleID, userID = id.AppID, id.RoleID, id.UserID
	}
	values := snap.LookupsFor(appID, roleID, userID, false)
	if id != nil {
		if id.UserID != 0 {
			values["user.id"] = fmt.Sprint(id.UserID)
			values["user.email"] = id.UserEmail
			values["user.name"] = id.UserName
			values["user.display_name"] = id.UserName
		}
		if id.AppID != 0 {
			values["app.id"] = fmt.Sprint(id.AppID)
			values["app.name"] = id.AppName
		}
		if id.RoleID != 0 {
			values["role.id"] = fmt.Sprint(id.RoleID)
			values["role.name"] = id.RoleName
		}
	}
	return values
}

// replace substitutes, in s, lookups first and then every {field} whose
// field is a string value of data. Tokens with no value stay as they are,
// as DreamFactory leaves them. Values are inserted as they are in text and
// HTML-escaped in HTML bodies.
func replace(s string, data Data, lookups map[string]string, escapeHTML bool) string {
	if !strings.Contains(s, "{") {
		return s
	}
	values := make(map[string]string, len(data)+len(lookups))
	for k, v := range lookups {
		values[k] = v
	}
	for k, v := range data {
		if str, ok := v.(string); ok {
			if _, isLookup := lookups[k]; !isLookup {
				values[k] = str
			}
		}
	}
	return fieldToken.ReplaceAllStringFunc(s, func(tok string) string {
		v, err := caller.ReplaceLookups(tok, values)
		if err != nil {
			return tok
		}
		if escapeHTML {
			return html.EscapeString(v)
		}
		return v
	})
}

// fieldToken is a replacement token: a lookup, with or without modifiers.
var fieldToken = regexp.MustCompile(`\{\w+[()|\w.\-]*\}`)

// build turns merged request data into a message. defaultFrom is used
// when neither the data nor the service names a sender.
func build(d Data, lookups map[string]string, defaultFrom Address) (*Message, error) {
	if _, ok := d["attachment"]; ok {
		return nil, apierr.BadRequest("Attachments are not supported by this e-mail service.")
	}
	if _, ok := d["import_url"]; ok {
		return nil, apierr.BadRequest("Attachments are not supported by this e-mail service.")
	}
	m := &Message{}
	var err error
	if m.To, err = addresses(d["to"]); err != nil {
		return nil, err
	}
	if len(m.To) == 0 {
		return nil, apierr.BadRequest("Invalid email - ''.")
	}
	if m.CC, err = addresses(d["cc"]); err != nil {
		return nil, err
	}
	if m.BCC, err = addresses(d["bcc"]); err != nil {
		return nil, err
	}
	if m.Recipients() > maxRecipients {
		return nil, apierr.BadRequest("Too many recipients: at most %d per message.", maxRecipients)
	}
	m.From = defaultFrom
	if fe := d.str("from_email"); fe != "" {
		if m.From, err = parseAddress(fe); err != nil {
			return nil, err
		}
		m.From.Name = ""
	}
	if fn := d.str("from_name"); fn != "" {
		m.From.Name = fn
	}
	if re := d.str("reply_to_email"); re != "" {
		a, err := parseAddress(re)
		if err != nil {
			return nil, err
		}
		a.Name = d.str("reply_to_name")
		m.ReplyTo = &a
	}
	m.Subject = strings.NewReplacer("\r", " ", "\n", " ").Replace(replace(d.str("subject"), d, lookups, false))
	m.BodyText = replace(d.str("body_text"), d, lookups, false)
	m.BodyHTML = replace(d.str("body_html"), d, lookups, true)
	if m.Subject == "" && m.BodyText == "" && m.BodyHTML == "" {
		return nil, apierr.BadRequest("No valid data in request.")
	}
	return m, nil
}

// stripTags is a plain-text rendering of an HTML body, for templates that
// have no text body.
func stripTags(s string) string {
	s = breakTag.ReplaceAllString(s, "\n")
	s = anyTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" || (len(out) > 0 && out[len(out)-1] != "") {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

var (
	breakTag = regexp.MustCompile(`(?i)<\s*(br|/p|/div|/h\d|/li|/tr)\s*/?>`)
	anyTag   = regexp.MustCompile(`<[^>]*>`)
)
