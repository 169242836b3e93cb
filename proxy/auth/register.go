package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Messages of the register resource.
const (
	MsgRegistrationClosed = "Open registration is not enabled on this service. An administrator can enable it with allow_open_registration in the user service's config."
	MsgEmailTaken         = "A user with this email already exists."
)

// ConfirmCodeTTL is how long a registration confirmation code stays valid.
const ConfirmCodeTTL = 24 * time.Hour

// Register serves POST (PUT and PATCH alike) /user/register when open
// registration is enabled, and 403 otherwise. The body is {email, password
// (or new_password), password_confirmation?, first_name?, last_name?,
// name?, phone?, security_question?, security_answer?}. The new user gets
// Registration.RoleID for the app they registered through. When
// Registration.EmailServiceID is set the account must be confirmed with the
// code e-mailed to it ({email, code} posted here again) before it can sign
// in. Answers {"success":true}, with confirmation_required when a code was
// sent, or with a session_token for ?login=true.
func (s *Service) Register() apierr.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
		default:
			return unsupported(r, "register")
		}
		reg := s.opts.Registration
		if !reg.Open {
			return apierr.Forbidden(MsgRegistrationClosed)
		}
		p, err := readPayload(r)
		if err != nil {
			return err
		}
		if p.has("code") {
			return s.confirm(w, r, p)
		}
		u, answer, err := newUserFrom(p)
		if err != nil {
			return err
		}
		ctx := r.Context()
		confirm := reg.EmailServiceID != nil
		if confirm && !s.canMail(*reg.EmailServiceID) {
			return apierr.Unavailable("Registration needs a confirmation e-mail, but no e-mail service is available. Please contact your administrator.")
		}
		if other, err := s.findUser(ctx, u.Email); err != nil {
			return err
		} else if other != nil {
			return apierr.Conflict(MsgEmailTaken)
		}
		app := appID(r)
		var roleID int64
		if reg.RoleID != nil {
			roleID = *reg.RoleID
			if snap := s.snapshot(); snap != nil && snap.Role(roleID) == nil {
				return apierr.InternalMsg("The user service's open_reg_role_id names role %d, which does not exist.", roleID)
			}
		}
		if answer != "" {
			h, err := bcrypt.GenerateFromPassword([]byte(answer), store.PasswordCost())
			if err != nil {
				return apierr.BadRequest("Validation failed").WithContext(map[string][]string{"security_answer": {"may not be longer than 72 bytes"}})
			}
			u.SecurityAnswer = string(h)
		}
		now := s.now().Truncate(time.Second)
		code := ""
		if confirm {
			code = newCode()
			exp := now.Add(ConfirmCodeTTL)
			u.ConfirmCode, u.ConfirmExpiry = codeConfirm+hashCode(code), &exp
		}
		u.CreatedDate, u.LastModifiedDate = now, now
		err = s.st.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewInsert().Model(u).Exec(ctx); err != nil {
				return err
			}
			if roleID != 0 && app != 0 {
				if _, err := tx.NewInsert().Model(&store.UserAppRole{UserID: u.ID, AppID: app, RoleID: roleID}).Exec(ctx); err != nil {
					return err
				}
				// user_to_app_to_role is part of the configuration snapshot.
				return store.Touch(ctx, tx)
			}
			return nil
		})
		if err != nil {
			if s.isUnique(err) {
				return apierr.Conflict(MsgEmailTaken)
			}
			return apierr.Internal(fmt.Errorf("auth: register: %w", err))
		}
		s.log.InfoContext(ctx, "user registered", "user_id", u.ID, "confirmation_required", confirm)
		if confirm {
			m := Mail{Kind: MailConfirmation, ServiceID: *reg.EmailServiceID, To: u.Email, ToName: u.Name,
				Subject: "Confirm your registration",
				Text: fmt.Sprintf("Hello %s,\n\nUse this code to confirm your registration: %s\nIt expires in %d hours.\n",
					displayName(u), code, int64(ConfirmCodeTTL/time.Hour)),
				Data: mailData(u, code),
			}
			if err := s.opts.Mailer.SendMail(ctx, m); err != nil {
				// Undo, so that the address can register again.
				_, _ = s.st.DB.NewDelete().Model((*store.User)(nil)).Where("id = ?", u.ID).Exec(context.WithoutCancel(ctx))
				if errors.Is(err, ErrNoMailer) {
					return apierr.Unavailable("Registration needs a confirmation e-mail, but no e-mail service is available. Please contact your administrator.")
				}
				s.log.ErrorContext(ctx, "registration e-mail failed", "user_id", u.ID, "error", err)
				return apierr.Unavailable("The confirmation e-mail could not be sent; try again later.").WithCause(err)
			}
			return writeJSON(w, success{Success: true, ConfirmationRequired: true})
		}
		if boolParam(r, "login") {
			return s.afterPasswordSet(w, r, u, app, true)
		}
		return writeJSON(w, success{Success: true})
	}
}

// confirm completes a registration with its e-mailed code: {email, code}.
func (s *Service) confirm(w http.ResponseWriter, r *http.Request, p payload) error {
	email, err := p.str("email")
	if err != nil {
		return err
	}
	code, err := p.str("code")
	if err != nil {
		return err
	}
	u, err := s.checkCode(r, false, strings.TrimSpace(email), code)
	if err != nil {
		return err
	}
	if !pendingConfirmation(u) {
		return apierr.NotFound(MsgCodeNotFound)
	}
	ctx := r.Context()
	if _, err := s.st.DB.NewUpdate().Model((*store.User)(nil)).
		Set("confirm_code = NULL").Set("confirm_expiry = NULL").
		Where("id = ?", u.ID).Exec(ctx); err != nil {
		return apierr.Internal(fmt.Errorf("auth: confirm registration: %w", err))
	}
	u.ConfirmCode, u.ConfirmExpiry = "", nil
	s.log.InfoContext(ctx, "registration confirmed", "user_id", u.ID)
	if boolParam(r, "login") {
		return s.afterPasswordSet(w, r, u, 0, true)
	}
	return writeJSON(w, success{Success: true})
}

// newUserFrom validates a registration body and builds the user (password
// hashed; the security answer is returned for hashing separately). Names
// default as DreamFactory's: first name from the e-mail's local part, the
// display name from first and last.
func newUserFrom(p payload) (*store.User, string, error) {
	problems := map[string][]string{}
	get := func(name string) string {
		v, err := p.str(name)
		if err != nil {
			problems[name] = append(problems[name], "must be a string")
			return ""
		}
		v = strings.TrimSpace(v)
		if len(v) > maxField {
			problems[name] = append(problems[name], fmt.Sprintf("may not be longer than %d characters", maxField))
		}
		return v
	}
	u := &store.User{IsActive: true}
	u.Email = get("email")
	u.FirstName, u.LastName, u.Name = get("first_name"), get("last_name"), get("name")
	u.Phone, u.SecurityQuestion = get("phone"), get("security_question")
	answer, err := p.str("security_answer")
	if err != nil {
		problems["security_answer"] = append(problems["security_answer"], "must be a string")
	}
	password, err := p.str("new_password")
	if err == nil && password == "" {
		password, err = p.str("password")
	}
	if err != nil {
		problems["password"] = append(problems["password"], "must be a string")
	}
	confirmation, cerr := p.str("password_confirmation")
	switch {
	case u.Email == "":
		problems["email"] = append(problems["email"], "The email field is required.")
	default:
		if a, err := mail.ParseAddress(u.Email); err != nil || a.Address != u.Email {
			problems["email"] = append(problems["email"], "The email must be a valid email address.")
		}
	}
	var hash string
	switch {
	case password == "":
		problems["password"] = append(problems["password"], "The password field is required.")
	case cerr != nil || (p.has("password_confirmation") && confirmation != password):
		problems["password"] = append(problems["password"], "The password confirmation does not match.")
	default:
		h, err := store.HashPassword(password)
		if errors.Is(err, store.ErrWeakPassword) {
			problems["password"] = append(problems["password"],
				fmt.Sprintf("The password must have at least %d characters and at most 72 bytes.", store.MinPasswordLength))
		} else if err != nil {
			return nil, "", apierr.Internal(err)
		}
		hash = h
	}
	if len(problems) > 0 {
		return nil, "", apierr.BadRequest("Validation failed").WithContext(problems)
	}
	u.Password = hash
	if u.FirstName == "" {
		local, _, _ := strings.Cut(u.Email, "@")
		u.FirstName = local
	}
	if u.LastName == "" {
		if first, last, ok := strings.Cut(u.FirstName, "."); ok && last != "" {
			u.FirstName, u.LastName = first, last
		}
	}
	if u.Name == "" {
		u.Name = strings.TrimSpace(u.FirstName + " " + u.LastName)
	}
	return u, answer, nil
}
