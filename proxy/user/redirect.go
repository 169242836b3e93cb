package user

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// RedirectSignedIn ends a sign-in through another provider in the
// browser: 302 to target with the session token in place of _token_
// (DreamFactory's SAML RelayState), else as ?session_token= (its OAuth
// callback).
func RedirectSignedIn(w http.ResponseWriter, r *http.Request, target, token string) {
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, withToken(target, token), http.StatusFound)
}

// withToken puts the session token in target: in place of _token_, else
// as ?session_token=.
func withToken(target, token string) string {
	if strings.Contains(target, "_token_") {
		return strings.ReplaceAll(target, "_token_", url.QueryEscape(token))
	}
	return withQuery(target, "session_token", token)
}

// RedirectFailed ends a failed sign-in in the browser as DreamFactory's
// OAuth callback does: 302 to target with ?error=<the message>. It
// returns err unchanged, having written nothing, when target is empty or
// err is no envelope error (an unexpected failure stays a logged 500).
func RedirectFailed(w http.ResponseWriter, r *http.Request, target string, err error) error {
	var ae *apierr.Error
	if err == nil || target == "" || !errors.As(err, &ae) {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, withQuery(target, "error", ae.Message), http.StatusFound)
	return nil
}

// withQuery sets the query parameter k of target to v.
func withQuery(target, k, v string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}
