package identity

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// ErrSealBroken is returned by [Engine.Open] for a sealed value that is
// empty, not base64, forged, altered or sealed for another purpose.
var ErrSealBroken = errors.New("identity: sealed value is missing, forged or for another purpose")

// Seal encrypts plain (AES-GCM with a key every instance shares, derived
// from the token signing secret) bound to purpose, and returns it as
// unpadded base64url: sign-in state that travels through a browser (OAuth
// state, SAML RelayState) and comes back to any instance. Expiry, if
// any, is the caller's to put inside plain and check after Open.
func (s *Engine) Seal(ctx context.Context, purpose string, plain []byte) (string, error) {
	aead, err := s.stateAEAD(ctx)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", internal(fmt.Errorf("identity: seal nonce: %w", err))
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(purpose))), nil
}

// Open reverses [Engine.Seal] for the same purpose. A value that does not
// open is ErrSealBroken; any other error is the engine's (the signing
// secret could not be read).
func (s *Engine) Open(ctx context.Context, purpose, sealed string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || sealed == "" {
		return nil, ErrSealBroken
	}
	aead, err := s.stateAEAD(ctx)
	if err != nil {
		return nil, err
	}
	if len(raw) < aead.NonceSize() {
		return nil, ErrSealBroken
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(purpose))
	if err != nil {
		return nil, ErrSealBroken
	}
	return plain, nil
}

// stateAEAD is the cipher of sealed sign-in state.
func (s *Engine) stateAEAD(ctx context.Context) (cipher.AEAD, error) {
	k, err := s.signingKey(ctx)
	if err != nil {
		return nil, err
	}
	blk, err := aes.NewCipher(deriveKey(k, "portcullis sign-in state"))
	if err != nil {
		return nil, internal(fmt.Errorf("identity: state cipher: %w", err))
	}
	return cipher.NewGCM(blk)
}
