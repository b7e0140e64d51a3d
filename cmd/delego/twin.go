package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
)

// This file reports the model-level fallback of an Edge TPU model: when its
// edgetpu partition fails to compile and the fallback settings let the CPU
// take over, the interpreter runs the model's CPU twin (core.TwinFallback).

// planTwin is the "twin" object of the plan JSON.
type planTwin struct {
	Path      string         `json:"path"`
	Fallbacks []planFallback `json:"fallbacks"`
}

// twinOf describes the twin fallback of it, or nil.
func twinOf(it *core.Interpreter) *planTwin {
	tw := it.Twin()
	if tw == nil {
		return nil
	}
	t := &planTwin{Path: tw.Path, Fallbacks: []planFallback{}}
	for _, e := range tw.Fallbacks {
		t.Fallbacks = append(t.Fallbacks, planFallback{Delegate: e.Delegate, Partition: e.Partition,
			Nodes: append([]int{}, e.Nodes...), Stage: string(e.Stage), Error: e.Err.Error()})
	}
	return t
}

// twinLine says in one line why the twin runs.
func twinLine(t *planTwin) string {
	var what []string
	for _, fb := range t.Fallbacks {
		who := fb.Delegate
		if fb.Partition >= 0 {
			who = fmt.Sprintf("partition %d on %s", fb.Partition, fb.Delegate)
		}
		verb := "failed"
		if fb.Stage == string(delegate.StageCompile) {
			verb = "failed to compile"
		}
		what = append(what, fmt.Sprintf("%s %s (%s)", who, verb, oneLine(fb.Error)))
	}
	return strings.Join(what, "; ")
}

// reportTwin tells the user that the result came from the CPU twin.
func reportTwin(w io.Writer, it *core.Interpreter) {
	if t := twinOf(it); t != nil {
		fmt.Fprintf(w, "delego: %s: the result came from the CPU twin %s\n", twinLine(t), t.Path)
	}
}
