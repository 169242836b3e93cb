package oidc

import (
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// ConfigSchema implements service.ConfigSchemer: the keys the type reads.
func (t Type) ConfigSchema() []service.ConfigField {
	p := t.profile()
	icon := "A CSS class clients show next to the sign-in button"
	if p.icon != "" {
		icon += ", for example " + p.icon
	}
	fields := []service.ConfigField{
		{Name: "client_id", Label: "Client ID", Type: "string", Required: true, Description: "The client (application) id registered with the provider."},
		{Name: "client_secret", Label: "Client secret", Type: "password", Required: p.secretRequired, Description: "The client's secret." + map[bool]string{true: "", false: " Optional: a public client signs in with PKCE alone."}[p.secretRequired]},
		{Name: "redirect_url", Label: "Redirect URL", Type: "string", Required: true, Description: "Where the provider sends the browser back, as registered with the provider: <host>/api/v2/user/session?oauth_callback=true&service=<name> or <host>/api/v2/<name>/sso (add &api_key=<key> unless the instance runs with --compat dreamfactory)."},
		{Name: "default_role", Label: "Default role", Type: "integer", Description: "The role (id) users created on first sign-in get through every app."},
		{Name: "allow_new_users", Label: "Allow new users", Type: "boolean", Default: true, Description: "Create a user on first sign-in; when false only users seen before may sign in."},
		{Name: "icon_class", Label: "Icon class", Type: "string", Description: icon + "."},
	}
	scopes := service.ConfigField{Name: "scopes", Label: "Scopes", Type: "string", Description: "Comma-separated scopes to ask for"}
	if len(p.scopes) > 0 {
		scopes.Default = joinScopes(p.scopes)
	}
	if p.oidc {
		scopes.Description += "; openid is always asked for."
	} else {
		scopes.Description += "."
	}
	fields = append(fields, scopes)
	url := func(name, label, def, desc string, required bool) service.ConfigField {
		f := service.ConfigField{Name: name, Label: label, Type: "string", Required: required, Description: desc + " Must be https (plain http only for a provider on localhost)."}
		if def != "" {
			f.Default = def
		}
		return f
	}
	switch {
	case p.name == TypeName:
		fields = append(fields,
			url("discovery_document", "Discovery document", "", "The provider's issuer URL or its /.well-known/openid-configuration; when given it supplies the endpoints below.", false),
			url("issuer", "Issuer", "", "The provider's issuer, required without a discovery document.", false),
			url("auth_endpoint", "Authorization endpoint", "", "Required without a discovery document.", false),
			url("token_endpoint", "Token endpoint", "", "Required without a discovery document.", false),
			url("jwks_uri", "JWKS URI", "", "The provider's signing keys; required without a discovery document.", false),
			url("user_endpoint", "User-info endpoint", "", "Asked for the e-mail when the ID token carries none.", false))
	case p.name == TypeAzureAD:
		fields = append(fields,
			service.ConfigField{Name: "tenant_id", Label: "Tenant ID", Type: "string", Required: true, Description: "The directory (tenant) id or a verified domain; common, organizations or consumers admit accounts of any tenant, and the token's issuer is then checked against its own tenant (tid)."},
			url("authority_url", "Authority URL", MicrosoftAuthority, "The Microsoft identity platform's address (another cloud's, for example https://login.microsoftonline.us).", false),
			url("discovery_document", "Discovery document", "", "Overrides <authority_url>/<tenant_id>/v2.0.", false))
	case p.name == TypeMicrosoftLive:
		fields = append(fields,
			url("authority_url", "Authority URL", MicrosoftAuthority, "The Microsoft identity platform's address.", false),
			url("discovery_document", "Discovery document", "", "Overrides <authority_url>/consumers/v2.0.", false))
	case p.oidc:
		fields = append(fields, url("discovery_document", "Discovery document", p.issuer(Config{}), "The provider's issuer URL or its /.well-known/openid-configuration.", false))
	case p.name == TypeGeneric:
		fields = append(fields,
			url("auth_endpoint", "Authorization endpoint", "", "The provider's authorization endpoint.", true),
			url("token_endpoint", "Token endpoint", "", "The provider's token endpoint.", true),
			url("user_endpoint", "User-info endpoint", "", "Answers the signed-in user as a JSON object for the access token (Authorization: Bearer).", true),
			service.ConfigField{Name: "id_field", Label: "Id field", Type: "string", Description: "The user-info field holding the user's stable id (dotted names reach into objects); default id, else sub."},
			service.ConfigField{Name: "email_field", Label: "E-mail field", Type: "string", Default: "email", Description: "The user-info field holding the e-mail address."},
			service.ConfigField{Name: "email_verified_field", Label: "E-mail verified field", Type: "string", Default: "email_verified", Description: "The user-info field that is true when the provider has verified the address. False refuses the sign-in; absent, the address is not used and the user is keyed by its id."},
			service.ConfigField{Name: "name_field", Label: "Name field", Type: "string", Default: "name", Description: "The user-info field holding the display name."},
			service.ConfigField{Name: "trust_email", Label: "Trust e-mail", Type: "boolean", Default: false, Description: "Use the e-mail when the answer has no verification field: only for a provider that gives verified addresses alone."})
	default:
		authHint, userHint := "", "Overrides the provider's user endpoint."
		switch p.name {
		case TypeGitHub:
			authHint = " (GitHub Enterprise: https://<host>/login/oauth/authorize)"
			userHint = "Overrides the REST API's /user (GitHub Enterprise: https://<host>/api/v3/user); /emails below it gives the verified primary e-mail."
		case TypeBitbucket:
			userHint = "Overrides the REST API's /2.0/user; /emails below it gives the confirmed primary e-mail."
		case TypeFacebook:
			userHint = "Overrides the Graph API's /me (with the fields id, name, first_name, last_name)."
		}
		fields = append(fields,
			url("auth_endpoint", "Authorization endpoint", p.authURL, "Overrides the provider's authorization endpoint"+authHint+".", false),
			url("token_endpoint", "Token endpoint", p.tokenURL, "Overrides the provider's token endpoint.", false),
			url("user_endpoint", "User endpoint", p.userURL, userHint, false))
	}
	return fields
}

func joinScopes(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}
