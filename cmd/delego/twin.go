package main

import (
	"fmt"
	"io"

	"github.com/delego/delego/core"
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
	return &planTwin{Path: tw.Path, Fallbacks: fallbacksOf(tw.Fallbacks)}
}

// reportTwin tells the user that the result came from the CPU twin.
func reportTwin(w io.Writer, it *core.Interpreter) {
	if t := twinOf(it); t != nil {
		fmt.Fprintf(w, "delego: %s: the result came from the CPU twin %s\n", whatFailed(t.Fallbacks), t.Path)
	}
}
