package text

import "testing"

// TestFingerprint64Published checks fingerprint64 against published
// values: TensorFlow's fingerprint_test.cc ("Hello", "World", frozen
// forever) and the FarmHash64 table of github.com/tecnickcom/farmhash64,
// whose strings reach every length class (0, 1-3, 4-7, 8-16, 17-32, 33-64
// and the 64-byte block loop, once and many times).
func TestFingerprint64Published(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"Hello", 15404698994557526151},
		{"World", 18308117990299812472},
		{"", 0x9ae16a3b2f90404f},
		{"a", 0xb3454265b6df75e3},
		{"abc", 0x24a5b3a074e7f369},
		{"abcd", 0x1a5502de4a1f8101},
		{"abcdefg", 0x3c40c92b1ccb7355},
		{"abcdefgh", 0xfee9d22990c82909},
		{"0123456789'01234", 0x4283d4ef43627f64},
		{"0123456789=012345", 0x46a7416ed4861e3b},
		{"C is as portable as Stonehedge!!", 0xb944f8a16261e414},
		{"Discard medicine more than two years old.", 0xe8f89ab6df9bdd25},
		{"Free! Free!/A trip/to Mars/for 900/empty jars/Burma Shave", 0x5d14f96c18fe3d5e},
		{"For every action there is an equal and opposite government program.", 0x55182f8859eca4ce},
		{"The fugacity of a constituent in a mixture of gases at a given temperature is proportional to its mole fraction.  Lewis-Randall Rule", 0x098eff6958c5e91a},
		{"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum.", 0xc3f02c4ffd5d71e6},
	} {
		if got := fingerprint64([]byte(c.in)); got != c.want {
			t.Errorf("fingerprint64(%q) (%d bytes) = %#x, want %#x", c.in, len(c.in), got, c.want)
		}
	}
}
