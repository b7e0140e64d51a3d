//go:build !linux

package plugin

import "time"

// doorbellSupported: no futexes here, so every Invoke is a gRPC call.
const doorbellSupported = false

func futexWait(_ *uint32, _ uint32, d time.Duration) { time.Sleep(d) }

func futexWake(*uint32) {}

func osYield() {}

func currentCPU() uint32 { return 0 }

func leaveCPU(cpu uint32) (uint32, bool) { return cpu, false }
