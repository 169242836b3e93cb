package system

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/uptrace/bun"
	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/proxy/apierr"
	"github.com/portcullis-dev/portcullis/proxy/filter"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// passwordCodec hashes a password on write (store.HashPassword enforces
// the contract's composition rule); null leaves the password as it is.
func passwordCodec() fieldOpt {
	return withCodec(nil, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			return nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("must be a string")
		}
		h, err := store.HashPassword(s)
		if errors.Is(err, store.ErrWeakPassword) {
			return err
		}
		if err != nil {
			return fmt.Errorf("could not be hashed")
		}
		v.SetString(h)
		return nil
	})
}

// secretCodec hashes a security answer (case and surrounding blanks
// ignored, as answers are typed from memory); null clears it.
func secretCodec() fieldOpt {
	return withCodec(nil, func(raw json.RawMessage, v reflect.Value) error {
		if isNullJSON(raw) {
			v.SetString("")
			return nil
		}
		s, ok := scalarText(raw)
		if !ok {
			return fmt.Errorf("must be a string")
		}
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			v.SetString("")
			return nil
		}
		if len(s) > 72 {
			return fmt.Errorf("must have at most 72 bytes")
		}
		h, err := bcrypt.GenerateFromPassword([]byte(s), store.PasswordCost())
		if err != nil {
			return fmt.Errorf("could not be hashed")
		}
		v.SetString(string(h))
		return nil
	})
}

// userTable is /system/user (admin false), /system/admin (admin true) or,
// with scoped false, every user (for relations).
func (b *Backend) userTable(name string, admin, scoped bool) *table[store.User] {
	t := &table[store.User]{
		name: name,
		key:  "id",
		fields: append([]*field{
			col("id", filter.KindInteger, readOnly),
			col("name", filter.KindString, readWrite),
			col("username", filter.KindString, readWrite),
			col("first_name", filter.KindString, readWrite),
			col("last_name", filter.KindString, readWrite),
			col("email", filter.KindString, readWrite),
			col("password", filter.KindString, writeOnly, passwordCodec()),
			col("is_active", filter.KindBoolean, readWrite),
			col("phone", filter.KindString, readWrite),
			col("security_question", filter.KindString, readWrite),
			col("security_answer", filter.KindString, writeOnly, secretCodec()),
			col("default_app_id", filter.KindInteger, readWrite),
			col("last_login_date", filter.KindTime, readOnly),
			computed("confirmed", func(rec reflect.Value) any {
				u := rec.Addr().Interface().(*store.User)
				return u.ConfirmCode == "" || u.ConfirmCode == "y"
			}),
		}, auditFields()...),
		relations: []*relation{
			{name: "user_to_app_to_role_by_user_id", target: b.model("user_to_app_to_role"), many: true, fk: "user_id", writable: true},
			{name: "lookup_by_user_id", target: b.model("lookup_child"), many: true, fk: "user_id", writable: true},
			{name: "app_by_default_app_id", target: b.model("app"), fk: "default_app_id"},
			{name: "limits_by_user_id", target: b.model("limit"), many: true, fk: "user_id"},
		},
		defaults: func(_ *writer, u *store.User) { u.IsActive, u.IsSysAdmin = true, admin },
		validate: func(c *check, u, old *store.User, p *problems) error {
			return b.validateUser(c, u, old, p, admin)
		},
	}
	if scoped {
		t.scope = func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("?.is_sys_admin = ?", bun.Ident(t.alias), admin)
		}
		if admin {
			t.beforeDelete = b.beforeDeleteAdmin
		}
		t.afterDelete = func(w *writer, u *store.User) error {
			w.revokeAfter(u.ID)
			return nil
		}
	}
	return t
}

func (b *Backend) validateUser(c *check, u, old *store.User, p *problems, admin bool) error {
	w := c.w
	email(p, "email", &u.Email, true)
	text(p, "first_name", &u.FirstName, false, 255)
	text(p, "last_name", &u.LastName, false, 255)
	text(p, "username", &u.Username, false, 255)
	text(p, "phone", &u.Phone, false, 64)
	text(p, "security_question", &u.SecurityQuestion, false, 255)
	u.Name = strings.TrimSpace(u.Name)
	if u.Name == "" {
		u.Name = strings.TrimSpace(u.FirstName + " " + u.LastName)
	}
	text(p, "name", &u.Name, true, 255)
	if err := reference[store.App](w, p, "default_app_id", "app", u.DefaultAppID); err != nil {
		return err
	}
	if old != nil {
		changedPassword := u.Password != old.Password
		deactivated := old.IsActive && !u.IsActive
		if !strings.EqualFold(u.Email, old.Email) {
			// Tokens name the e-mail (their sub): drop the cached ones.
			w.revokeAfter(u.ID)
		}
		if changedPassword || deactivated {
			// Sessions issued before now stop working, on every instance.
			t := w.now
			u.TokensValidAfter = &t
			w.revokeAfter(u.ID)
		}
		if admin && deactivated {
			n, err := w.tx.NewSelect().Model((*store.User)(nil)).
				Where("is_sys_admin = ? AND is_active = ? AND id <> ?", true, true, u.ID).Count(w.ctx)
			if err != nil {
				return dbError(err)
			}
			if n == 0 {
				p.add("is_active", "the last active administrator cannot be deactivated")
			}
		}
	}
	if !p.empty() || old != nil && strings.EqualFold(u.Email, old.Email) {
		return nil
	}
	taken, err := exists[store.User](w, "LOWER(email) = LOWER(?) AND id <> ?", u.Email, u.ID)
	if err != nil {
		return err
	}
	if taken {
		return conflict("A user with the e-mail address '%s' already exists.", u.Email)
	}
	return nil
}

// revokeAfter ends the user's sessions once the transaction commits (the
// rows cascade with a deleted user, but verified tokens are cached).
func (w *writer) revokeAfter(userID int64) {
	b := w.b
	w.after = append(w.after, func(ctx context.Context) {
		if err := b.identity.RevokeUser(ctx, userID); err != nil {
			b.log.Warn("revoking a user's sessions failed", "user_id", userID, "error", err)
		}
	})
}

// beforeDeleteAdmin keeps at least one active administrator.
func (b *Backend) beforeDeleteAdmin(w *writer, u *store.User) error {
	n, err := w.tx.NewSelect().Model((*store.User)(nil)).
		Where("is_sys_admin = ? AND is_active = ? AND id <> ?", true, true, u.ID).Count(w.ctx)
	if err != nil {
		return dbError(err)
	}
	if n == 0 {
		return apierr.BadRequest("The last active administrator cannot be deleted.")
	}
	return nil
}
