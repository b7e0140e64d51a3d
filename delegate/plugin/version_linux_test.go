package plugin_test

import (
	"os"
	"strconv"
	"testing"
)

// TestServesOlderHost: a plugin of this change answers a host that offers
// only protocol 1 (a host of the previous version) in protocol 1, without
// the protocol 2 fields in its description, and a host that offers both in
// protocol 2, with them.
func TestServesOlderHost(t *testing.T) {
	for _, tc := range []struct {
		offer    string
		want     int
		declares bool
	}{
		{"1", 1, false},
		{"2,1", 2, true},
		{"1,2", 2, true},
	} {
		t.Run(tc.offer, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "delego-plugin-version-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			sock, version := servePlugin(t, pluginPath("fault-configurable"), dir, tc.offer)
			if version != strconv.Itoa(tc.want) {
				t.Fatalf("offered %s, the plugin chose protocol %s; want %d", tc.offer, version, tc.want)
			}
			resp, err := describeAs(t, sock, os.Getuid())
			if err != nil {
				t.Fatal(err)
			}
			if int(resp.ProtocolVersion) != tc.want {
				t.Errorf("Describe says protocol %d, the handshake %d", resp.ProtocolVersion, tc.want)
			}
			if resp.Configurable != tc.declares || (len(resp.Honours) > 0) != tc.declares || (len(resp.Options) > 0) != tc.declares {
				t.Errorf("protocol %d: configurable %v, honours %q, options %v", tc.want, resp.Configurable, resp.Honours, resp.Options)
			}
		})
	}
}
