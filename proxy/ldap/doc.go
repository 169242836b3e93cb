// Package ldap is the `ldap` (Standard LDAP, e.g. OpenLDAP) and `adldap`
// (Active Directory) service types: sign-in with directory credentials
// (DreamFactory's df-adldap), with the identity engine's session as the
// result.
//
// A client signs in with POST /api/v2/user/session and the body
// {"service":"<name>","username":"…","password":"…"} (the service may
// also be in the query; email is accepted for username). The backend:
//
//  1. connects over LDAPS, or over LDAP upgraded with StartTLS before
//     anything else is sent; the server's certificate is always verified
//     (system roots, or ca_cert). Plain LDAP and turning verification off
//     are refused when the service is saved.
//  2. ldap: finds the user's entry under base_dn by username_attribute
//     (uid), anonymously or as the service account, and binds as its DN
//     with the password. adldap: with a service account, the same by
//     sAMAccountName (userPrincipalName for user@domain, the name after
//     the backslash for DOMAIN\user); without one, binds as
//     user@account_suffix (or the name as typed) and then reads its own
//     entry.
//  3. reads the mapped attributes (first_name, last_name, email,
//     display_name) and the groups: memberOf, else (ldap) the
//     groupOfNames, groupOfUniqueNames and posixGroup entries naming the
//     user under group_base_dn.
//  4. signs the user in through identity.SignInExternal: a shadow user
//     <local>+<service>@<domain> created on first sign-in and linked
//     after. With group mapping on, the user's role through each app is
//     set on every sign-in: the first group_roles entry whose group the
//     user is in (and whose app_id is that app or null), else
//     default_role, else none. Without it, default_role is given on first
//     sign-in only.
//
// The answer is the session response of a password sign-in plus
// groupMembership (the user's group DNs), as DreamFactory answers.
//
// Errors: a missing username or password is 400; a wrong password and an
// unknown user are the same 401 ("Invalid username and password
// provided.", as DreamFactory and the password sign-in, so that the
// answer does not tell which user names exist; the log says which) and
// count for the login throttle (429 after repeated failures); an Active
// Directory account that is disabled, locked or expired is a 401 naming
// that; a directory that cannot be reached or is busy is 503; a TLS
// failure (untrusted or wrong-name certificate, StartTLS refused) and a
// refused service account or search are 502. The password is never
// logged. Administrators cannot sign in this way: the admin session
// ignores `service`, as DreamFactory's does.
package ldap
