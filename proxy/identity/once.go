package identity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/store"
)

// MsgAlreadyUsed is the refusal of a sign-in artefact seen before.
const MsgAlreadyUsed = "This sign-in answer has already been used; start the sign-in again."

// UseOnce records key (any string naming a one-time artefact: a SAML
// assertion id with its issuer, a request id) as used until until, in
// the system database so that every instance sees it. A key already used
// and not yet expired is refused with an Unauthenticated error
// (MsgAlreadyUsed). Expired marks are purged on the way.
func (s *Engine) UseOnce(ctx context.Context, key string, until time.Time) error {
	sum := sha256.Sum256([]byte(key))
	now := s.now()
	db := s.st.DB
	if _, err := db.NewDelete().Model((*store.UsedOnce)(nil)).Where("expires_at < ?", now).Exec(ctx); err != nil {
		return internal(fmt.Errorf("identity: purge used sign-in marks: %w", err))
	}
	mark := &store.UsedOnce{Key: hex.EncodeToString(sum[:]), ExpiresAt: until.UTC()}
	if _, err := db.NewInsert().Model(mark).Exec(ctx); err != nil {
		if s.isUnique(err) {
			return unauthenticated(MsgAlreadyUsed)
		}
		return internal(fmt.Errorf("identity: record a used sign-in mark: %w", err))
	}
	return nil
}
