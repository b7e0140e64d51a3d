//go:build !linux

package plugin

import "google.golang.org/grpc/credentials"

// peerCredentials is nil here: without SO_PEERCRED the plugin relies on its
// socket's private directory alone (see peercred_linux.go).
func peerCredentials() credentials.TransportCredentials { return nil }
