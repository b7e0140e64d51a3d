package core

import (
	"context"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// TestStoryOfAPause: the one-line story and the per-event lines tell of a
// partition whose restarts paused, and of its recovery.
func TestStoryOfAPause(t *testing.T) {
	fb := func(outcome, err string) PlanFallback {
		return PlanFallback{Delegate: "cpu", Partition: 0, Nodes: []int{0, 1}, Stage: "execute", Error: err, Outcome: outcome}
	}
	const pause = "2 restarts in a row failed, so restarts pause for 30s (circuit breaker open); the next is tried at 12:00:00.000; last failure: lost"
	fbs := []PlanFallback{fb(OutcomeCPUOnce, "lost"), fb(OutcomeRestarted, "lost"), fb(OutcomeRestartsPaused, pause), fb(OutcomeRestarted, "lost"), fb(OutcomeRecovered, pause)}
	want := "partition 0 on cpu failed to run (lost); the CPU stood in, its plugin was restarted twice, its restarts paused once after failing in a row, then it recovered"
	if got := WhatFailed(fbs); got != want {
		t.Errorf("story %q, want %q", got, want)
	}
	if got, want := describeFallback(fbs[2], nil), "partition 0 (cpu, 2 nodes): "+pause; got != want {
		t.Errorf("pause %q, want %q", got, want)
	}
	if got, want := describeFallback(fbs[4], nil), "partition 0 (cpu, 2 nodes): back on its restarted plugin after: "+pause; got != want {
		t.Errorf("recovery %q, want %q", got, want)
	}
}

// TestReportOfTwinRun: the report of an interpreter that runs the CPU twin
// names the twin and tells what led to it.
func TestReportOfTwinRun(t *testing.T) {
	dir := t.TempDir()
	path := writeModel(t, dir, "m_edgetpu.tflite", compiledModel("out"))
	twinPath := writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "out"))
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	it, err := NewInterpreter(m, twinOptions(true, twinPath))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	r := it.Report()
	if r.Twin == nil || r.Twin.Path != twinPath || len(r.Twin.Fallbacks) != 1 || r.Twin.Fallbacks[0].Outcome != OutcomeCPU {
		t.Fatalf("twin %+v", r.Twin)
	}
	want := "delego: partition 0 on accel failed to compile (no usable device: no accelerator plugged in): the result came from the CPU twin " + twinPath + "\n"
	for _, verbose := range []bool{false, true} {
		if got := r.Narrative(verbose); got != want {
			t.Errorf("Narrative(%v) = %q, want %q", verbose, got, want)
		}
	}
	if got, want := r.Outline(), "plan: delegates accel: 1 node: 0 on delegates in 0 partitions, 1 on the CPU\n"; got != want {
		t.Errorf("Outline() = %q, want %q", got, want)
	}
}

// TestReportOfCompileFallback: after partitions fell back at compile time,
// the report says so in one line, or per fallback with verbose, and the
// outline marks them.
func TestReportOfCompileFallback(t *testing.T) {
	m, err := model.Load(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	it, err := NewInterpreterContext(context.Background(), m, &Options{Delegates: []delegate.Delegate{convAbsent{}}, Settings: allowCompileFallback()})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	r := it.Report()
	const oom = "no usable device: out of device memory"
	for _, c := range []struct {
		got, want string
	}{
		{r.Narrative(false), "delego: partition 0 on conv failed to compile (" + oom + "); partition 1 on conv failed to compile (" + oom +
			"): the result came from the CPU fallback\n"},
		{r.Narrative(true), "fallback: partition 0 (conv, 27 nodes): compile error: " + oom + "; it runs on the CPU\n" +
			"fallback: partition 1 (conv, 1 node): compile error: " + oom + "; it runs on the CPU\n"},
		{r.Outline(), "plan: delegates conv: 31 nodes: 0 on delegates in 0 partitions, 31 on the CPU (28 of them after a fallback)\n" +
			"plan: partition 0 on conv (fell back to the CPU): 27 nodes [0 1 2 3 4 5 6 7 8 9 10 ... 26]\n" +
			"plan: partition 1 on conv (fell back to the CPU): 1 node [28]\n"},
		{r.SummaryLine(), "31 nodes: 0 on delegates in 0 partitions, 31 on the CPU (28 of them after a fallback)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q\nwant %q", c.got, c.want)
		}
	}
	if r.Model != "" || strings.Join(r.Delegates, ",") != "conv" {
		t.Errorf("model %q, delegates %q", r.Model, r.Delegates)
	}
}
