package caller

import "testing"

func TestPercentDecodeLenient(t *testing.T) {
	tests := []struct{ in, form, raw string }{
		{"%41%2", "A%2", "A%2"},
		{"100%", "100%", "100%"},
		{"a+b%zz", "a b%zz", "a+b%zz"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := percentDecode(tt.in, true); got != tt.form {
				t.Errorf("urldecode = %q, want %q", got, tt.form)
			}
			if got := percentDecode(tt.in, false); got != tt.raw {
				t.Errorf("rawurldecode = %q, want %q", got, tt.raw)
			}
		})
	}
}
