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

// Profile is the signed-in user's own record as DreamFactory shows it.
type Profile struct {
	Username         string `json:"username"`
	FirstName        string `json:"first_name"`
	LastName         string `json:"last_name"`
	Name             string `json:"name"`
	Email            string `json:"email"`
	Phone            string `json:"phone"`
	SecurityQuestion string `json:"security_question"`
	DefaultAppID     *int64 `json:"default_app_id"`
	OAuthProvider    string `json:"oauth_provider"`
	ADLDAP           string `json:"adldap"`
}

// MaxFieldLength is the length limit of the profile's text fields.
const MaxFieldLength = 255

// Profile returns the profile of the user signed in with token (or, when
// token is "", of the caller in ctx). admin selects the administrators'
// profile.
func (s *Engine) Profile(ctx context.Context, admin bool, token string) (*Profile, error) {
	_, u, _, err := s.requireSession(ctx, token, admin)
	if err != nil {
		return nil, err
	}
	return &Profile{Username: u.Username, FirstName: u.FirstName, LastName: u.LastName,
		Name: u.Name, Email: u.Email, Phone: u.Phone, SecurityQuestion: u.SecurityQuestion,
		DefaultAppID: u.DefaultAppID}, nil
}

// UpdateProfile changes the fields p holds (username, first_name,
// last_name, name, email, phone, security_question, security_answer,
// default_app_id) of the user signed in with token (or the caller in ctx).
// Changing the e-mail retires every token of the user (their sub no longer
// matches) and answers a new token for this session.
func (s *Engine) UpdateProfile(ctx context.Context, admin bool, token string, p Fields) (*Answer, error) {
	sess, u, _, err := s.requireSession(ctx, token, admin)
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, invalid("No data supplied for operation.")
	}
	problems := map[string][]string{}
	var cols []string
	next := *u
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"username", &next.Username}, {"first_name", &next.FirstName}, {"last_name", &next.LastName},
		{"name", &next.Name}, {"email", &next.Email}, {"phone", &next.Phone},
		{"security_question", &next.SecurityQuestion},
	} {
		if !p.has(f.name) {
			continue
		}
		v, err := p.str(f.name)
		if err != nil {
			problems[f.name] = append(problems[f.name], "must be a string")
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) > MaxFieldLength {
			problems[f.name] = append(problems[f.name], fmt.Sprintf("may not be longer than %d characters", MaxFieldLength))
			continue
		}
		*f.dst = v
		cols = append(cols, f.name)
	}
	if p.has("name") && next.Name == "" {
		problems["name"] = append(problems["name"], "must not be empty")
	}
	if p.has("email") {
		if a, err := mail.ParseAddress(next.Email); err != nil || a.Address != next.Email {
			problems["email"] = append(problems["email"], "must be a valid e-mail address")
		}
	}
	if p.has("security_answer") {
		ans, err := p.str("security_answer")
		switch {
		case err != nil:
			problems["security_answer"] = append(problems["security_answer"], "must be a string")
		case ans == "":
			next.SecurityAnswer = ""
			cols = append(cols, "security_answer")
		default:
			h, err := bcrypt.GenerateFromPassword([]byte(ans), store.PasswordCost())
			if err != nil {
				problems["security_answer"] = append(problems["security_answer"], "may not be longer than 72 bytes")
				break
			}
			next.SecurityAnswer = string(h)
			cols = append(cols, "security_answer")
		}
	}
	if _, present := p["default_app_id"]; present {
		id, ok, err := p.int("default_app_id")
		switch {
		case err != nil:
			problems["default_app_id"] = append(problems["default_app_id"], "must be an integer or null")
		case !ok:
			next.DefaultAppID = nil
			cols = append(cols, "default_app_id")
		default:
			if snap := s.snapshot(); snap != nil && snap.App(id) == nil {
				problems["default_app_id"] = append(problems["default_app_id"], fmt.Sprintf("app %d does not exist", id))
				break
			}
			next.DefaultAppID = &id
			cols = append(cols, "default_app_id")
		}
	}
	if len(problems) > 0 {
		return nil, invalid("Validation failed").withContext(problems)
	}
	if len(cols) == 0 {
		return nil, invalid("No data supplied for operation.")
	}
	emailChanged := next.Email != u.Email
	if emailChanged {
		other, err := s.findUser(ctx, next.Email)
		if err != nil {
			return nil, err
		}
		if other != nil && other.ID != u.ID {
			return nil, conflict("A user with this email already exists.")
		}
	}
	now := s.now()
	next.LastModifiedDate = now.Truncate(time.Second)
	cols = append(cols, "last_modified_date")
	err = s.st.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model(&next).Column(cols...).WherePK().Exec(ctx); err != nil {
			return err
		}
		if emailChanged {
			return s.revokeUser(ctx, tx, u.ID, now)
		}
		return nil
	})
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return nil, ae
		}
		if s.isUnique(err) {
			return nil, conflict("A user with this email already exists.")
		}
		return nil, internal(fmt.Errorf("identity: update profile: %w", err))
	}
	s.shared.cache.dropUser(u.ID)
	if !emailChanged {
		return &Answer{Success: true}, nil
	}
	// The old tokens' sub no longer matches: issue this session a new one.
	ttl := sess.ExpiresAt.Sub(sess.IssuedAt)
	if ttl <= 0 {
		ttl = s.opts.TokenTTL
	}
	app := appID(ctx)
	if app == 0 {
		app = sess.AppID
	}
	iss, err := s.open(ctx, &next, app, ttl, sess.Browser)
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "e-mail changed; sessions renewed", "user_id", u.ID)
	return &Answer{Success: true, SessionToken: iss.token}, nil
}

// isUnique reports whether err is a unique-constraint violation.
func (s *Engine) isUnique(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unique") || strings.Contains(msg, "duplicate")
}
