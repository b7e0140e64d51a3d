// Package delegate will hold the delegate contract (Delegate, Executable,
// Support) and the single place where fallback to the CPU is decided. (Empty
// until the delegates issue.) The settings, generated from configuration.proto,
// are in delegate/config.
package delegate
