// Package email is the e-mail service backend, for the service types
// local_email (each message written as an RFC 5322 .eml file under the
// data directory, DIR/storage/email by default: nothing is delivered, so a
// fresh instance can show every mail it would send) and smtp_email (an
// SMTP server, with github.com/wneessen/go-mail: STARTTLS, TLS, and
// authentication with the mechanism the server offers).
//
// POST /api/v2/{service} sends one message with DreamFactory's body:
//
//	{"to":[{"name":"Ann Lee","email":"ann@example.com"}], "cc":"b@x.io", "bcc":["c@x.io"],
//	 "subject":"Hello {first_name}", "body_text":"Hi {first_name}", "body_html":"<p>Hi</p>",
//	 "from_name":"Shop", "from_email":"shop@example.com", "first_name":"Ann"}
//
// Addresses are a string (one or a comma-separated list), an object
// {"name","email"}, or a list of either; a bad one is a 400 "Invalid email
// - '…'.". ?template=NAME or ?template_id=ID starts from a stored
// email_template; the service's parameters come first, then the template's
// defaults and fields, then the request's. In the subject and bodies,
// lookups ({user.email}, {app.name}, named lookups, with modifiers) and
// then every {field} that is a string of the merged request are replaced;
// unknown tokens stay as they are, as in DreamFactory. Values inserted
// into body_html are HTML-escaped. The answer is {"count":N}, the number
// of recipients. A mail server that cannot be reached is a 503, one that
// refuses the message a 502. Attachments are not supported (400).
//
// [Backend.SendTemplate] is how the platform's mailer (proxy/mail) sends
// password-reset, registration and invitation mails through the e-mail
// service and template the user service's configuration names.
//
// smtp_email connects only where the upstream allow list permits
// (serve --upstream-allow, proxy/upstream; a refused address is a 502). It
// sends with go-mail, extended here in one place: go-mail treats a
// connection from a dial function as unencrypted, so for an SSL port
// behind the allow list the TLS handshake is ours and authentication is
// PLAIN over it rather than go-mail's auto-discovery.
package email
