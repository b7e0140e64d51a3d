// Package delegate is the contract between delego's interpreter and the
// delegates that run parts of a graph elsewhere (XNNPACK, a GPU, an Edge
// TPU, a vendor's accelerator, or delego's own kernels in another
// process): what a delegate declares it supports (Support, data rather
// than code), how it is handed a partition (a standalone .tflite
// flatbuffer) and runs it (Executable), and the single place where falling
// back to the CPU is decided (Fallback).
//
// An in-process delegate and a plugin process behind delegate/plugin
// satisfy the same interface; the interpreter cannot tell them apart, and
// the rules below hold for both. docs/writing-a-plugin.md, in delego's
// repository, walks through a whole plugin (examples/plugin).
//
// # The calls
//
// For each interpreter built with it, the host asks the delegate's Support,
// then its Checker (once, with every node that Support let through), then
// Compiles each partition the plan gives it. Every Invoke of the
// interpreter invokes each of its partitions' executables once, in the
// plan's order; Close is called once, when an executable is no longer
// needed. A failed Support, CheckNodes or Compile is a compilation error
// and a failed Invoke an execution error: the fallback settings decide
// whether the CPU takes over (Fallback). A delegate that cannot run here
// (its device is missing) fails with an error wrapping ErrNoDevice. Its
// Support may still return its declaration beside that error: the host of
// a plugin then plans with it, so that the plan shows the partitions the
// delegate would take, and their Compile fails with the error.
//
// # Concurrency
//
// Several interpreters may share one delegate (core.Options.Delegates; a
// plugin process serves every interpreter that shares its plugin.Client),
// so Support, CheckNodes, Compile and Devices may be called concurrently,
// and Invoke may be called concurrently on different executables of one
// delegate. Invoke is never called concurrently on one executable, nor
// Close while an Invoke of it runs: each interpreter compiles executables
// of its own and lets one goroutine at a time into Invoke (a second one
// gets core.ErrBusy), and the plugin transport serialises the calls on one
// compiled partition on both sides of the process boundary. An executable
// needs no lock for its own state; what it shares with the delegate's
// other executables (a device queue, a cache) does.
//
// # Tensors
//
// Invoke's tensors are lent for the call only. Their Data is the
// interpreter's memory, which other nodes reuse as soon as the call
// returns, or, in a plugin, a shared-memory region that the next Invoke
// rewrites and that is unmapped when the partition is released or its
// region replaced. A delegate must not keep a Tensor or its Data after
// Invoke returns (it copies what it needs), must not write to inputs, and
// writes outputs in place, into the Data slices it was given, leaving
// their shapes alone. Partition.Model is the delegate's to keep; the model
// CheckNodes gets is lent for the call (in process, it is the mapped
// model file).
//
// # Shapes and resizing
//
// A partition is compiled for the shapes its boundary tensors had then,
// and its executable only ever sees those shapes. A resize that changes
// them (ResizeInput, then AllocateTensors) fails today: AllocateTensors
// returns an error that names the partition and the tensor ("resizing
// delegated tensors is not supported"), and the delegate is not asked to
// compile again. A resize that leaves every partition's boundary shapes
// as they were runs as before.
//
// # Contexts
//
// Every call takes the caller's context, which the interpreter's watchdog
// bounds. A delegate in process must return once it ends; a plugin that
// does not answer in time is killed, and its partitions fall back or fail
// as the settings say.
//
// # Standard output
//
// A plugin's standard output belongs to the handshake: the host reads the
// first line the process writes as the handshake line. A plugin, or a
// driver library it loads, that prints anything before plugin.Serve makes
// the start fail with "Unrecognized remote plugin message: " and that
// line; what it prints later is thrown away. Write to standard error: the
// host keeps its tail for the errors it reports.
//
// # Optional interfaces
//
// Beyond Delegate and Executable, a delegate may implement:
//   - Checker: a finer support check, with a reason for every node it
//     refuses, which the plan shows;
//   - DeviceLister: the devices it would run on, which `delego plugins`
//     lists;
//   - Configurable: the settings fields and key/value options it reads
//     (Partition.Settings, Partition.Options), which the host checks a
//     user's settings against;
//   - Version() string: its version, which a plugin reports to the host
//     (without it, the plugin binary's module version).
//
// An executable may implement Threaded: how many threads one Invoke keeps
// running.
package delegate
