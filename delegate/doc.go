// Package delegate will hold the delegate contract (Delegate, Executable,
// Support), the settings generated from configuration.proto, and the single
// place where fallback to the CPU is decided. (Empty until the delegates issue.)
package delegate
