package identity

// SecretsEqual reports whether the credentials a and b (API keys,
// session subjects) are equal, in a time that depends only on their
// lengths, as subtle.ConstantTimeCompare does, but eight bytes at a time
// and without converting strings to byte slices (a 64-byte key: about 60
// instructions instead of 450). The API key stage uses it too.
func SecretsEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var v uint64
	i := 0
	for ; len(a)-i >= 8; i += 8 {
		v |= load64(a[i:]) ^ load64(b[i:])
	}
	for ; i < len(a); i++ {
		v |= uint64(a[i] ^ b[i])
	}
	return v == 0
}

// load64 reads the first eight bytes of s as one word (little-endian; the
// compiler makes it a single load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
