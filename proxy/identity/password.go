package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Prefixes of store.User.ConfirmCode: a pending password reset, or a
// registration awaiting confirmation (the user cannot sign in until the
// code is used). The code itself is never stored, only its SHA-256.
const (
	codeReset   = "reset:"
	codeConfirm = "confirm:"
)

// CodeLength is the length of reset and confirmation codes: uppercase
// letters and digits, as DreamFactory's.
const CodeLength = 32

// Messages of the password resource (DreamFactory's texts).
const (
	MsgResetMissingEmail   = "Missing required email for password reset confirmation."
	MsgResetMissingNew     = "Missing new password for reset."
	MsgCodeFormat          = "Invalid confirmation code format."
	MsgCodeNotFound        = "The supplied email and/or confirmation code were not found in the system."
	MsgCodeExpired         = "Confirmation code expired."
	MsgChangeNeedsBoth     = "Both old and new password are required to change the password."
	MsgOldPasswordMismatch = "The password supplied does not match."
	MsgNotEnoughInfo       = "Not enough information provided to change password."
	MsgMissingAnswer       = "Missing security answer."
	MsgAnswerMismatch      = "The answer supplied does not match."
	MsgNoResetChannel      = "No security question found or email confirmation available for this user. Please contact your administrator."
)

func pendingConfirmation(u *store.User) bool { return strings.HasPrefix(u.ConfirmCode, codeConfirm) }

// newCode returns a random code of CodeLength uppercase letters and digits.
func newCode() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, CodeLength)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	for i := range b {
		// 252 = 7*36: reject-free mapping would bias; re-draw the rare
		// bytes above it.
		for b[i] >= 252 {
			var one [1]byte
			if _, err := rand.Read(one[:]); err != nil {
				panic("crypto/rand failed: " + err.Error())
			}
			b[i] = one[0]
		}
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func hashCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// codeFormatOK checks a code's shape before any lookup.
func codeFormatOK(code string) bool {
	if len(code) != CodeLength {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// codeMatches reports whether code is the user's pending code (either
// kind) and whether it is still valid.
func (s *Engine) codeMatches(u *store.User, code string) (match, expired bool) {
	stored := u.ConfirmCode
	var h string
	switch {
	case strings.HasPrefix(stored, codeReset):
		h = strings.TrimPrefix(stored, codeReset)
	case strings.HasPrefix(stored, codeConfirm):
		h = strings.TrimPrefix(stored, codeConfirm)
	default:
		return false, false
	}
	if subtle.ConstantTimeCompare([]byte(h), []byte(hashCode(code))) != 1 {
		return false, false
	}
	return true, u.ConfirmExpiry == nil || !s.now().Before(*u.ConfirmExpiry)
}

// PasswordRequest is a change or reset of a password.
type PasswordRequest struct {
	// Admin selects the administrators' flows (administrators only);
	// otherwise users only.
	Admin bool
	// Fields are the body: old_password, new_password, email, code,
	// security_answer.
	Fields Fields
	// Token is the caller's session token, for a change ("": the session
	// of the caller in ctx).
	Token string
	// Client is the caller's address for throttling (see ClientKey).
	Client string
	// Reset asks for a reset code to be e-mailed to email.
	Reset bool
	// Login opens a new session after a reset or change and answers its
	// token.
	Login bool
}

// Password changes or resets a password:
//
//   - Reset with {email}: e-mail a reset code (an *Answer), or answer the
//     user's *SecurityQuestion when they have one;
//   - {email, code, new_password}: reset with the e-mailed code;
//   - {email, security_answer, new_password}: reset with the answer;
//   - {old_password, new_password} with a session: change the password.
//
// A reset or change revokes every session of the user; Login opens a new
// one and answers its token. The answer is an *Answer or a
// *SecurityQuestion.
func (s *Engine) Password(ctx context.Context, pr PasswordRequest) (any, error) {
	p := pr.Fields
	var f struct{ old, new, email, code, answer string }
	for _, x := range []struct {
		name string
		dst  *string
	}{{"old_password", &f.old}, {"new_password", &f.new}, {"email", &f.email}, {"code", &f.code}, {"security_answer", &f.answer}} {
		var err error
		if *x.dst, err = p.str(x.name); err != nil {
			return nil, err
		}
	}
	f.email = strings.TrimSpace(f.email)
	switch {
	case f.old != "":
		return s.changePassword(ctx, pr, f.old, f.new)
	case pr.Reset:
		return s.requestReset(ctx, pr.Admin, f.email)
	case f.code != "":
		return s.resetWithCode(ctx, pr, f.email, f.code, f.new)
	case f.answer != "":
		return s.resetWithAnswer(ctx, pr, f.email, f.answer, f.new)
	}
	return nil, invalid(MsgNotEnoughInfo)
}

// eligible reports whether u may use the password flows of this endpoint.
func eligible(u *store.User, admin bool) bool {
	return u != nil && u.IsActive && u.IsSysAdmin == admin
}

// weakPassword is the 400 for a password that breaks the composition rule.
func weakPassword(field string) error {
	msg := fmt.Sprintf("The password must have at least %d characters and at most 72 bytes.", store.MinPasswordLength)
	return invalid("Invalid data supplied. %s", msg).withContext(map[string][]string{field: {msg}})
}

func (s *Engine) changePassword(ctx context.Context, pr PasswordRequest, old, new string) (*Answer, error) {
	sess, u, _, err := s.requireSession(ctx, pr.Token, pr.Admin)
	if err != nil {
		return nil, err
	}
	if u.IsSysAdmin != pr.Admin {
		return nil, forbidden("You are not authorized to reset/change password for the account %s", u.Email)
	}
	if new == "" {
		return nil, invalid(MsgChangeNeedsBoth)
	}
	keys := s.keys(pr.Client, u.Email)
	if err := s.throttled(ctx, keys); err != nil {
		return nil, err
	}
	if !store.CheckPassword(u.Password, old) {
		s.thr.Fail(keys)
		s.log.WarnContext(ctx, "password change with a wrong old password", "user_id", u.ID, "address", keys.Address)
		return nil, invalid(MsgOldPasswordMismatch)
	}
	s.thr.Succeed(keys)
	if err := s.setPassword(ctx, u, new, "new_password"); err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "password changed", "user_id", u.ID)
	return s.afterPasswordSet(ctx, u, sess.AppID, pr.Login)
}

// setPassword stores a new password, clears any pending code and revokes
// every session of the user.
func (s *Engine) setPassword(ctx context.Context, u *store.User, password, field string) error {
	hash, err := store.HashPassword(password)
	if errors.Is(err, store.ErrWeakPassword) {
		return weakPassword(field)
	}
	if err != nil {
		return internal(err)
	}
	now := s.now()
	err = s.st.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model((*store.User)(nil)).
			Set("password = ?", hash).Set("confirm_code = NULL").Set("confirm_expiry = NULL").
			Set("last_modified_date = ?", now.Truncate(time.Second)).
			Where("id = ?", u.ID).Exec(ctx); err != nil {
			return fmt.Errorf("identity: set password: %w", err)
		}
		return s.revokeUser(ctx, tx, u.ID, now)
	})
	if err != nil {
		return internal(err)
	}
	s.shared.cache.dropUser(u.ID)
	u.Password, u.ConfirmCode, u.ConfirmExpiry = hash, "", nil
	return nil
}

// afterPasswordSet answers a reset or change: {"success":true}, with a new
// session's token when login is asked for.
func (s *Engine) afterPasswordSet(ctx context.Context, u *store.User, sessApp int64, login bool) (*Answer, error) {
	if !login {
		return &Answer{Success: true}, nil
	}
	app := appID(ctx)
	if app == 0 {
		app = sessApp
	}
	acc := s.Resolve(u.ID, u.IsSysAdmin, app)
	if !acc.Admin && acc.RoleID != 0 && !acc.RoleActive {
		return nil, forbidden(MsgRoleInactive)
	}
	iss, err := s.open(ctx, u, app, s.opts.TokenTTL, false)
	if err != nil {
		return nil, err
	}
	return &Answer{Success: true, SessionToken: iss.token}, nil
}

func (s *Engine) requestReset(ctx context.Context, admin bool, email string) (any, error) {
	if email == "" {
		return nil, invalid(MsgResetMissingEmail)
	}
	var serviceID int64
	if s.opts.PasswordEmailServiceID != nil {
		serviceID = *s.opts.PasswordEmailServiceID
	}
	canMail := s.canMail(serviceID)
	u, err := s.findUser(ctx, email)
	if err != nil {
		return nil, err
	}
	if !eligible(u, admin) {
		// Same answer as a sent code: the response must not tell which
		// addresses have accounts.
		if !canMail {
			s.log.WarnContext(ctx, "password reset requested but no e-mail service is configured")
			return nil, internalMsg(MsgNoResetChannel)
		}
		return &Answer{Success: true}, nil
	}
	if q := strings.TrimSpace(u.SecurityQuestion); q != "" && u.SecurityAnswer != "" && !pendingConfirmation(u) {
		return &SecurityQuestion{SecurityQuestion: q}, nil
	}
	if !canMail {
		s.log.WarnContext(ctx, "password reset requested but no e-mail service is configured", "user_id", u.ID)
		return nil, internalMsg(MsgNoResetChannel)
	}
	prefix := codeReset
	if pendingConfirmation(u) {
		prefix = codeConfirm // a reset must not skip the e-mail confirmation
	}
	code := newCode()
	expiry := s.now().Add(s.opts.ResetCodeTTL).Truncate(time.Second)
	if _, err := s.st.DB.NewUpdate().Model((*store.User)(nil)).
		Set("confirm_code = ?", prefix+hashCode(code)).Set("confirm_expiry = ?", expiry).
		Where("id = ?", u.ID).Exec(ctx); err != nil {
		return nil, internal(fmt.Errorf("identity: store reset code: %w", err))
	}
	mins := int64(s.opts.ResetCodeTTL / time.Minute)
	m := Mail{
		Kind: MailPasswordReset, To: u.Email, ToName: u.Name,
		Subject: "Password reset",
		Text: fmt.Sprintf("Hello %s,\n\nUse this code to reset your password: %s\nIt expires in %d minutes. If you did not ask for a reset, ignore this message.\n",
			displayName(u), code, mins),
		Data: mailData(u, code, "Password Reset", confirmLink(s.opts.ConfirmResetURL, u, code)),
	}
	m.ServiceID = serviceID
	if s.opts.PasswordEmailTemplateID != nil {
		m.TemplateID = *s.opts.PasswordEmailTemplateID
	}
	if err := s.opts.Mailer.SendMail(ctx, m); err != nil {
		if errors.Is(err, ErrNoMailer) {
			s.log.WarnContext(ctx, "password reset requested but no e-mail service is configured", "user_id", u.ID)
			return nil, internalMsg(MsgNoResetChannel)
		}
		s.log.ErrorContext(ctx, "password reset e-mail failed", "user_id", u.ID, "error", err)
		return nil, internalMsg("Error processing password reset: the e-mail could not be sent.").withCause(err)
	}
	s.log.InfoContext(ctx, "password reset code sent", "user_id", u.ID)
	return &Answer{Success: true}, nil
}

func displayName(u *store.User) string {
	if u.FirstName != "" {
		return u.FirstName
	}
	if u.Name != "" {
		return u.Name
	}
	return u.Email
}

// checkCode finds the user of email whose pending code is code; its errors
// are DreamFactory's and count as failed attempts.
func (s *Engine) checkCode(ctx context.Context, client string, admin bool, email, code string) (*store.User, error) {
	if email == "" {
		return nil, invalid(MsgResetMissingEmail)
	}
	if !codeFormatOK(code) {
		return nil, invalid(MsgCodeFormat)
	}
	keys := s.keys(client, email)
	if err := s.throttled(ctx, keys); err != nil {
		return nil, err
	}
	u, err := s.findUser(ctx, email)
	if err != nil {
		return nil, err
	}
	match, expired := false, false
	if eligible(u, admin) {
		match, expired = s.codeMatches(u, code)
	}
	if !match {
		s.thr.Fail(keys)
		s.log.WarnContext(ctx, "wrong reset or confirmation code", "address", keys.Address)
		return nil, notFound(MsgCodeNotFound)
	}
	if expired {
		return nil, invalid(MsgCodeExpired)
	}
	s.thr.Succeed(keys)
	return u, nil
}

func (s *Engine) resetWithCode(ctx context.Context, pr PasswordRequest, email, code, new string) (*Answer, error) {
	if email == "" {
		return nil, invalid(MsgResetMissingEmail)
	}
	if new == "" {
		return nil, invalid(MsgResetMissingNew)
	}
	u, err := s.checkCode(ctx, pr.Client, pr.Admin, email, code)
	if err != nil {
		return nil, err
	}
	if err := s.setPassword(ctx, u, new, "new_password"); err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "password reset with a code", "user_id", u.ID)
	return s.afterPasswordSet(ctx, u, 0, pr.Login)
}

func (s *Engine) resetWithAnswer(ctx context.Context, pr PasswordRequest, email, answer, new string) (*Answer, error) {
	switch {
	case email == "":
		return nil, invalid(MsgResetMissingEmail)
	case new == "":
		return nil, invalid(MsgResetMissingNew)
	case answer == "":
		return nil, invalid(MsgMissingAnswer)
	}
	keys := s.keys(pr.Client, email)
	if err := s.throttled(ctx, keys); err != nil {
		return nil, err
	}
	u, err := s.findUser(ctx, email)
	if err != nil {
		return nil, err
	}
	hash := ""
	if eligible(u, pr.Admin) && !pendingConfirmation(u) {
		hash = u.SecurityAnswer
	}
	if !store.CheckPassword(hash, answer) {
		s.thr.Fail(keys)
		s.log.WarnContext(ctx, "wrong security answer", "address", keys.Address)
		return nil, invalid(MsgAnswerMismatch)
	}
	s.thr.Succeed(keys)
	if err := s.setPassword(ctx, u, new, "new_password"); err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "password reset with the security answer", "user_id", u.ID)
	return s.afterPasswordSet(ctx, u, 0, pr.Login)
}

func numericDate(t time.Time) *jwt.NumericDate { return jwt.NewNumericDate(t) }
