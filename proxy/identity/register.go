package identity

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Messages of the register resource.
const (
	MsgRegistrationClosed = "Open registration is not enabled on this service. An administrator can enable it with allow_open_registration in the user service's config."
	MsgEmailTaken         = "A user with this email already exists."
)

// ConfirmCodeTTL is how long a registration confirmation code stays valid.
const ConfirmCodeTTL = 24 * time.Hour

// RegisterRequest is an open registration, or its confirmation.
type RegisterRequest struct {
	// Fields are the body: email, password (or new_password),
	// password_confirmation, first_name, last_name, name, phone,
	// security_question, security_answer; or email and code to confirm.
	Fields Fields
	// Client is the caller's address for throttling (see ClientKey).
	Client string
	// Login signs the new user in and answers the session token.
	Login bool
}

// Register registers a user when open registration is enabled (Forbidden
// otherwise). The new user gets Registration.RoleID through every app, as
// in DreamFactory, and Options.Changed is called once that mapping is
// committed. When Registration.EmailServiceID is set the account must be
// confirmed with the code e-mailed to it ({email, code} registered again)
// before it can sign in. The answer notes a confirmation sent, or carries
// a session token when Login is asked for.
func (s *Engine) Register(ctx context.Context, rr RegisterRequest) (*Answer, error) {
	reg := s.opts.Registration
	if !reg.Open {
		return nil, forbidden(MsgRegistrationClosed)
	}
	p := rr.Fields
	if p.has("code") {
		return s.confirm(ctx, rr)
	}
	u, answer, err := newUserFrom(p)
	if err != nil {
		return nil, err
	}
	confirm := reg.EmailServiceID != nil
	if confirm && !s.canMail(*reg.EmailServiceID) {
		return nil, unavailable("Registration needs a confirmation e-mail, but no e-mail service is available. Please contact your administrator.")
	}
	if other, err := s.findUser(ctx, u.Email); err != nil {
		return nil, err
	} else if other != nil {
		return nil, conflict(MsgEmailTaken)
	}
	app := appID(ctx)
	var roleID int64
	if reg.RoleID != nil {
		roleID = *reg.RoleID
		if snap := s.snapshot(); snap != nil && snap.Role(roleID) == nil {
			return nil, internalMsg("The user service's open_reg_role_id names role %d, which does not exist.", roleID)
		}
	}
	if answer != "" {
		h, err := bcrypt.GenerateFromPassword([]byte(answer), store.PasswordCost())
		if err != nil {
			return nil, invalid("Validation failed").withContext(map[string][]string{"security_answer": {"may not be longer than 72 bytes"}})
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
		if roleID == 0 {
			return nil
		}
		// As DreamFactory does (User::applyDefaultUserAppRole), the
		// registration role applies through every app, so the new user
		// has it whatever key (or none) the next call comes with.
		var apps []int64
		if err := tx.NewSelect().Model((*store.App)(nil)).Column("id").Order("id").Scan(ctx, &apps); err != nil {
			return err
		}
		if len(apps) == 0 {
			return nil
		}
		maps := make([]store.UserAppRole, len(apps))
		for i, a := range apps {
			maps[i] = store.UserAppRole{UserID: u.ID, AppID: a, RoleID: roleID}
		}
		if _, err := tx.NewInsert().Model(&maps).Exec(ctx); err != nil {
			return err
		}
		// user_to_app_to_role is part of the configuration snapshot.
		return store.Touch(ctx, tx)
	})
	if err != nil {
		if s.isUnique(err) {
			return nil, conflict(MsgEmailTaken)
		}
		return nil, internal(fmt.Errorf("identity: register: %w", err))
	}
	s.log.InfoContext(ctx, "user registered", "user_id", u.ID, "confirmation_required", confirm)
	if roleID != 0 && s.opts.Changed != nil {
		if err := s.opts.Changed(context.WithoutCancel(ctx)); err != nil {
			// The mapping is committed; other instances (and this one)
			// pick it up with the next poll.
			s.log.WarnContext(ctx, "reload after registration failed", "user_id", u.ID, "error", err)
		}
	}
	if confirm {
		m := Mail{Kind: MailConfirmation, ServiceID: *reg.EmailServiceID, To: u.Email, ToName: u.Name,
			Subject: "Confirm your registration",
			Text: fmt.Sprintf("Hello %s,\n\nUse this code to confirm your registration: %s\nIt expires in %d hours.\n",
				displayName(u), code, int64(ConfirmCodeTTL/time.Hour)),
			Data: mailData(u, code, "Registration Confirmation", confirmLink(s.opts.ConfirmRegisterURL, u, code)),
		}
		if reg.EmailTemplateID != nil {
			m.TemplateID = *reg.EmailTemplateID
		}
		if err := s.opts.Mailer.SendMail(ctx, m); err != nil {
			// Undo, so that the address can register again.
			_, _ = s.st.DB.NewDelete().Model((*store.User)(nil)).Where("id = ?", u.ID).Exec(context.WithoutCancel(ctx))
			if errors.Is(err, ErrNoMailer) {
				return nil, unavailable("Registration needs a confirmation e-mail, but no e-mail service is available. Please contact your administrator.")
			}
			s.log.ErrorContext(ctx, "registration e-mail failed", "user_id", u.ID, "error", err)
			return nil, unavailable("The confirmation e-mail could not be sent; try again later.").withCause(err)
		}
		return &Answer{Success: true, ConfirmationRequired: true}, nil
	}
	if rr.Login {
		return s.afterPasswordSet(ctx, u, app, true)
	}
	return &Answer{Success: true}, nil
}

// confirm completes a registration with its e-mailed code: {email, code}.
func (s *Engine) confirm(ctx context.Context, rr RegisterRequest) (*Answer, error) {
	p := rr.Fields
	email, err := p.str("email")
	if err != nil {
		return nil, err
	}
	code, err := p.str("code")
	if err != nil {
		return nil, err
	}
	u, err := s.checkCode(ctx, rr.Client, false, strings.TrimSpace(email), code)
	if err != nil {
		return nil, err
	}
	if !pendingConfirmation(u) {
		return nil, notFound(MsgCodeNotFound)
	}
	if _, err := s.st.DB.NewUpdate().Model((*store.User)(nil)).
		Set("confirm_code = NULL").Set("confirm_expiry = NULL").
		Where("id = ?", u.ID).Exec(ctx); err != nil {
		return nil, internal(fmt.Errorf("identity: confirm registration: %w", err))
	}
	u.ConfirmCode, u.ConfirmExpiry = "", nil
	s.log.InfoContext(ctx, "registration confirmed", "user_id", u.ID)
	if rr.Login {
		return s.afterPasswordSet(ctx, u, 0, true)
	}
	return &Answer{Success: true}, nil
}

// newUserFrom validates a registration body and builds the user (password
// hashed; the security answer is returned for hashing separately). Names
// default as DreamFactory's: first name from the e-mail's local part, the
// display name from first and last.
func newUserFrom(p Fields) (*store.User, string, error) {
	problems := map[string][]string{}
	get := func(name string) string {
		v, err := p.str(name)
		if err != nil {
			problems[name] = append(problems[name], "must be a string")
			return ""
		}
		v = strings.TrimSpace(v)
		if len(v) > MaxFieldLength {
			problems[name] = append(problems[name], fmt.Sprintf("may not be longer than %d characters", MaxFieldLength))
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
			return nil, "", internal(err)
		}
		hash = h
	}
	if len(problems) > 0 {
		return nil, "", invalid("Validation failed").withContext(problems)
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

// RegistrationOpen reports whether open registration is enabled.
func (s *Engine) RegistrationOpen() bool { return s.opts.Registration.Open }
