package user

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/identity"
)

// Component names of the sign-in resources' documents.
const (
	compLogin    = "Login"
	compSession  = "Session"
	compPassword = "PasswordRequest"
	compProfile  = "Profile"
	compRegister = "Registration"
	compSuccess  = "AuthSuccess"
)

// errorRef is the shared error response of status name (see
// service.AddErrors).
func errorRef(name string) *openapi3.ResponseRef {
	return &openapi3.ResponseRef{Ref: "#/components/responses/" + name}
}

func schemaRef(name string) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("#/components/schemas/"+name, nil)
}

func str(desc string) *openapi3.Schema {
	s := openapi3.NewStringSchema()
	s.Description = desc
	return s
}

// Document documents the resources of s (see the package function).
func (s *SignIn) Document(doc *openapi3.T) { Document(doc, s.admin) }

// Document adds the sign-in resources SignIn serves to doc, whose
// components must already hold the shared error responses: below
// "/admin" for the system service (admin true: session, password,
// profile) or at the service root for a user service (also register).
func Document(doc *openapi3.T, admin bool) {
	prefix, who, tag := "", "user", ""
	if admin {
		prefix, who, tag = "/admin", "administrator", "admin"
	}
	c := doc.Components
	c.Schemas[compLogin] = openapi3.NewSchemaRef("", loginSchema(admin))
	c.Schemas[compSession] = openapi3.NewSchemaRef("", sessionSchema())
	c.Schemas[compPassword] = openapi3.NewSchemaRef("", passwordSchema())
	c.Schemas[compProfile] = openapi3.NewSchemaRef("", profileSchema())
	ok := openapi3.NewObjectSchema().
		WithProperty("success", openapi3.NewBoolSchema()).
		WithProperty("session_token", str("A new session token (?login=true, or after an e-mail change).")).
		WithProperty("confirmation_required", openapi3.NewBoolSchema())
	ok.Required = []string{"success"}
	c.Schemas[compSuccess] = openapi3.NewSchemaRef("", ok)

	op := func(id, group, summary, desc string) *openapi3.Operation {
		o := openapi3.NewOperation()
		o.OperationID = id
		t := group
		if tag != "" {
			t = tag
		}
		o.Tags = []string{t}
		o.Summary, o.Description = summary, desc
		o.Responses = openapi3.NewResponses()
		o.Responses.Set("default", errorRef("Error"))
		return o
	}
	respond := func(o *openapi3.Operation, desc string, schema *openapi3.SchemaRef, errs ...string) {
		r := openapi3.NewResponse().WithDescription(desc)
		if schema != nil {
			r = r.WithJSONSchemaRef(schema)
		}
		o.Responses.Set("200", &openapi3.ResponseRef{Value: r})
		codes := map[string]string{"BadRequest": "400", "Unauthorized": "401", "Forbidden": "403", "NotFound": "404",
			"Conflict": "409", "TooManyRequests": "429", "ServiceUnavailable": "503"}
		for _, e := range errs {
			o.Responses.Set(codes[e], errorRef(e))
		}
	}
	body := func(o *openapi3.Operation, desc string, required bool, schema string) {
		rb := openapi3.NewRequestBody().WithDescription(desc).WithJSONSchemaRef(schemaRef(schema))
		rb.Required = required
		o.RequestBody = &openapi3.RequestBodyRef{Value: rb}
	}
	add := func(path, method string, o *openapi3.Operation) { doc.AddOperation(prefix+path, method, o) }

	login := op("login", "session", "Sign in",
		"Signs the "+who+" in with e-mail and password and answers a session token (send it as X-Platform-Session-Token). duration sets the lifetime in minutes; 0 keeps the session while it is used (X-Platform-Session-Lifetime: browser). Failed attempts are throttled (429).")
	body(login, "The credentials.", true, compLogin)
	respond(login, "The session.", schemaRef(compSession), "BadRequest", "Unauthorized", "Forbidden", "TooManyRequests")
	add("/session", http.MethodPost, login)

	info := op("getSession", "session", "The current session", "The signed-in "+who+"'s session, from the session token sent.")
	respond(info, "The session.", schemaRef(compSession), "Unauthorized")
	add("/session", http.MethodGet, info)

	refresh := op("refreshSession", "session", "Refresh the session token",
		"Replaces the session token sent (header or ?session_token=) with a new one; the old one stops working.")
	refresh.AddParameter(openapi3.NewQueryParameter("session_token").WithDescription("The token to refresh, when not sent in a header.").WithSchema(openapi3.NewStringSchema()))
	respond(refresh, "The session with its new token.", schemaRef(compSession), "Unauthorized")
	add("/session", http.MethodPut, refresh)

	logout := op("logout", "session", "Sign out", "Ends the session of the token sent, on every instance.")
	respond(logout, "Signed out.", schemaRef(compSuccess), "Unauthorized")
	add("/session", http.MethodDelete, logout)

	pw := op("password", "password", "Change or reset the password",
		"With a session, {old_password, new_password} changes the password. Without one: ?reset=true with {email} sends a reset code by e-mail (or answers the security question), then {email, code, new_password} or {email, security_answer, new_password} sets a new password. Every session of the "+who+" ends; ?login=true answers a new session token.")
	pw.AddParameter(openapi3.NewQueryParameter("reset").WithDescription("Request a reset code for email.").WithSchema(openapi3.NewBoolSchema()))
	pw.AddParameter(openapi3.NewQueryParameter("login").WithDescription("Sign in with the new password and answer a session token.").WithSchema(openapi3.NewBoolSchema()))
	body(pw, "The password change or reset.", true, compPassword)
	respond(pw, "Done.", nil, "BadRequest", "Unauthorized", "NotFound", "TooManyRequests", "ServiceUnavailable")
	pwResp := openapi3.NewObjectSchema().
		WithProperty("success", openapi3.NewBoolSchema()).
		WithProperty("session_token", openapi3.NewStringSchema()).
		WithProperty("security_question", str("The user's security question, answering a reset request."))
	pw.Responses.Value("200").Value.WithJSONSchema(pwResp)
	add("/password", http.MethodPost, pw)

	prof := op("getProfile", "profile", "The "+who+"'s profile", "The signed-in "+who+"'s profile.")
	respond(prof, "The profile.", schemaRef(compProfile), "Unauthorized")
	add("/profile", http.MethodGet, prof)

	upd := op("updateProfile", "profile", "Update the profile",
		"Changes the fields sent. A changed e-mail ends the other sessions and answers a new session_token for this one.")
	body(upd, "The fields to change.", true, compProfile)
	respond(upd, "Updated.", schemaRef(compSuccess), "BadRequest", "Unauthorized", "Conflict")
	add("/profile", http.MethodPost, upd)

	if admin {
		return
	}
	c.Schemas[compRegister] = openapi3.NewSchemaRef("", registerSchema())
	reg := op("register", "register", "Register",
		"Open registration, when the service allows it (403 otherwise). When a confirmation e-mail is configured, the account must be confirmed by posting {email, code} here before it can sign in. ?login=true answers a session token.")
	reg.AddParameter(openapi3.NewQueryParameter("login").WithDescription("Sign the new user in.").WithSchema(openapi3.NewBoolSchema()))
	body(reg, "The new user, or {email, code} to confirm.", true, compRegister)
	respond(reg, "Registered.", schemaRef(compSuccess), "BadRequest", "Forbidden", "Conflict", "ServiceUnavailable")
	add("/register", http.MethodPost, reg)
}

// loginSchema is the body of a sign-in; the users' one may name a
// sign-in service (LDAP, Active Directory) that checks a username.
func loginSchema(admin bool) *openapi3.Schema {
	dur := openapi3.NewIntegerSchema().WithMin(0)
	dur.Description = "Lifetime in minutes; 0 keeps the session while it is used. Default 24 hours."
	s := openapi3.NewObjectSchema().
		WithProperty("email", openapi3.NewStringSchema().WithFormat("email")).
		WithProperty("password", openapi3.NewStringSchema().WithFormat("password")).
		WithProperty("duration", dur)
	s.Required = []string{"email", "password"}
	if !admin {
		s.WithProperty("service", str("An LDAP or Active Directory service (see the environment's authentication.adldap) that checks username and password instead (also accepted as ?service=)."))
		s.WithProperty("username", str("The directory user name, with service; email is accepted in its place."))
		s.Required = []string{"password"}
	}
	return s
}

func sessionSchema() *openapi3.Schema {
	app := openapi3.NewObjectSchema().
		WithProperty("id", openapi3.NewInt64Schema()).
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("label", openapi3.NewStringSchema()).
		WithProperty("description", openapi3.NewStringSchema()).
		WithProperty("is_url_external", openapi3.NewBoolSchema()).
		WithProperty("launch_url", openapi3.NewStringSchema()).
		WithProperty("requires_fullscreen", openapi3.NewBoolSchema()).
		WithProperty("allow_fullscreen_toggle", openapi3.NewBoolSchema()).
		WithProperty("toggle_location", openapi3.NewStringSchema()).
		WithProperty("is_default", openapi3.NewBoolSchema())
	s := openapi3.NewObjectSchema().
		WithProperty("session_token", str("Send as X-Platform-Session-Token.")).
		WithProperty("session_id", openapi3.NewStringSchema()).
		WithProperty("id", openapi3.NewInt64Schema()).
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("first_name", openapi3.NewStringSchema()).
		WithProperty("last_name", openapi3.NewStringSchema()).
		WithProperty("email", openapi3.NewStringSchema()).
		WithProperty("is_sys_admin", openapi3.NewBoolSchema()).
		WithProperty("role", openapi3.NewStringSchema()).
		WithProperty("last_login_date", str("2006-01-02 15:04:05, UTC.")).
		WithProperty("token_expiry_date", str("2006-01-02 15:04:05, UTC.")).
		WithProperty("apps", openapi3.NewArraySchema().WithItems(app)).
		WithProperty("ticket", str("Always empty.")).
		WithProperty("ticket_expiry", str("Always empty."))
	s.Required = []string{"session_token", "session_id", "id", "email"}
	return s
}

func passwordSchema() *openapi3.Schema {
	return openapi3.NewObjectSchema().
		WithProperty("email", openapi3.NewStringSchema().WithFormat("email")).
		WithProperty("old_password", openapi3.NewStringSchema().WithFormat("password")).
		WithProperty("new_password", openapi3.NewStringSchema().WithFormat("password")).
		WithProperty("code", str("The reset code sent by e-mail.")).
		WithProperty("security_answer", openapi3.NewStringSchema())
}

func profileSchema() *openapi3.Schema {
	max := func() *openapi3.Schema { return openapi3.NewStringSchema().WithMaxLength(identity.MaxFieldLength) }
	return openapi3.NewObjectSchema().
		WithProperty("username", max()).
		WithProperty("first_name", max()).
		WithProperty("last_name", max()).
		WithProperty("name", max()).
		WithProperty("email", max().WithFormat("email")).
		WithProperty("phone", max()).
		WithProperty("security_question", max()).
		WithProperty("security_answer", str("Write only: never returned.").WithFormat("password")).
		WithProperty("default_app_id", openapi3.NewInt64Schema().WithNullable()).
		WithProperty("oauth_provider", openapi3.NewStringSchema()).
		WithProperty("adldap", openapi3.NewStringSchema())
}

func registerSchema() *openapi3.Schema {
	return openapi3.NewObjectSchema().
		WithProperty("email", openapi3.NewStringSchema().WithFormat("email")).
		WithProperty("password", openapi3.NewStringSchema().WithFormat("password")).
		WithProperty("new_password", str("Same as password.").WithFormat("password")).
		WithProperty("password_confirmation", openapi3.NewStringSchema().WithFormat("password")).
		WithProperty("first_name", openapi3.NewStringSchema()).
		WithProperty("last_name", openapi3.NewStringSchema()).
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("phone", openapi3.NewStringSchema()).
		WithProperty("security_question", openapi3.NewStringSchema()).
		WithProperty("security_answer", openapi3.NewStringSchema()).
		WithProperty("code", str("The confirmation code sent by e-mail (confirms a registration)."))
}
