package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// tfliteRoot is the name TFLiteSettings has in a path: its field name in
// ComputeSettings, so a setting has one path whichever message a file held.
const tfliteRoot = "tflite_settings"

// Capabilities declares which settings are honoured: the host's own
// (HostCapabilities) and those each running delegate declares
// (delegate.Configurable.Honours), joined with With.
type Capabilities struct {
	// Honoured lists field paths relative to TFLiteSettings: proto field
	// names joined by dots, no list indexes ("cpu_settings.num_threads").
	// A path that names a message field honours everything beneath it.
	Honoured []string
	// Undeclared names the running delegates that do not say what they
	// honour (a plugin built before delegate.Configurable): any of them
	// may read a setting nothing declares, so Check reports such a setting
	// as a warning that says so, never as an error.
	Undeclared []string
	// Unavailable names the delegates that were to run but cannot be had:
	// what they would read is read by nothing, and does not matter while
	// they run nothing, so Check reports such a setting as a warning that
	// says so, never as an error.
	Unavailable []string
}

// HostCapabilities returns what delego's host honours whichever delegate
// runs: the delegate choice (delegate, stable_delegate_loader_settings
// and the options it passes on, delegate_options), the CPU kernels'
// threads, the partition limit and fallback. What a delegate reads of its
// own it declares itself. Each call returns a new slice.
func HostCapabilities() Capabilities {
	return Capabilities{Honoured: []string{
		"delegate",
		"stable_delegate_loader_settings",
		"delegate_options",
		"cpu_settings.num_threads",
		"max_delegated_partitions",
		"fallback_settings.allow_automatic_fallback_on_compilation_error",
		"fallback_settings.allow_automatic_fallback_on_execution_error",
	}}
}

// With returns a copy of c that honours paths as well.
func (c Capabilities) With(paths ...string) Capabilities {
	c.Honoured = append(slices.Clip(c.Honoured), paths...)
	return c
}

// WithUndeclared returns a copy of c with the delegate called name among
// those that do not declare what they honour.
func (c Capabilities) WithUndeclared(name string) Capabilities {
	c.Undeclared = append(slices.Clip(c.Undeclared), name)
	return c
}

// WithUnavailable returns a copy of c with the delegate called name among
// those that cannot be had.
func (c Capabilities) WithUnavailable(name string) Capabilities {
	c.Unavailable = append(slices.Clip(c.Unavailable), name)
	return c
}

// Validate reports the honoured paths that name no field of TFLiteSettings,
// so that a misspelt allow-list cannot hide an issue.
func (c Capabilities) Validate() error {
	var errs []error
	root := (&TFLiteSettings{}).ProtoReflect().Descriptor()
	for _, p := range c.Honoured {
		md := root
		segs := strings.Split(p, ".")
		for i, seg := range segs {
			if md == nil {
				errs = append(errs, fmt.Errorf("config: honoured path %q: %s is not a message", p, strings.Join(segs[:i], ".")))
				break
			}
			fd := md.Fields().ByName(protoreflect.Name(seg))
			if fd == nil {
				errs = append(errs, fmt.Errorf("config: honoured path %q: %s has no field %q", p, md.FullName(), seg))
				break
			}
			md = fd.Message()
		}
	}
	return errors.Join(errs...)
}

// Severity says how much an Issue matters.
type Severity int

const (
	// Warning: ignoring the setting changes speed, power, the accelerator
	// instance, caching or diagnostics, not the results.
	Warning Severity = iota + 1
	// Error: ignoring the setting would silently change results.
	Error
)

func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// Issue is one setting delego does not honour.
type Issue struct {
	// Path is the field's full path from ComputeSettings, proto names joined
	// by dots, list elements indexed: "tflite_settings.gpu_settings.is_precision_loss_allowed".
	// A field number configuration.proto lacks appears as #N.
	Path     string
	Severity Severity
	// Reason says why the issue has its severity; empty for a plain warning.
	Reason string
}

func (i Issue) String() string {
	s := fmt.Sprintf("%s: delego ignores %s", i.Severity, i.Path)
	if i.Reason != "" {
		s += " (" + i.Reason + ")"
	}
	return s
}

// ErrNotHonoured is matched (errors.Is) by the error Err returns.
var ErrNotHonoured = errors.New("setting not honoured")

// Err returns nil when no issue is an Error, else an error that lists those
// that are.
func Err(issues []Issue) error {
	var errs []error
	for _, i := range issues {
		if i.Severity == Error {
			errs = append(errs, fmt.Errorf("config: %w: %s (%s)", ErrNotHonoured, i.Path, i.Reason))
		}
	}
	return errors.Join(errs...)
}

// Check walks every field set in s, and in the messages beneath it, and
// returns an Issue for each one that c does not honour, in the order of the
// fields in configuration.proto. A set message with nothing honoured beneath
// it is reported field by field, or as itself when empty. Paths start with
// "tflite_settings", as if s sat in a ComputeSettings.
//
// The severity follows one rule: an unhonoured setting is an Error when
// ignoring it could silently change the numbers the model produces, that is
// when it sets the arithmetic (gpu_settings.is_precision_loss_allowed and
// enable_quantized_inference, nnapi_settings.allow_fp16_precision_for_fp32)
// or decides whether a node runs on the delegate or on delego's CPU kernels
// (delegate, max_delegated_partitions, the fallback settings, and in a
// ComputeSettings preference = FORCE_CPU). Everything else (threads,
// performance and power levels, which instance of the accelerator, caching,
// diagnostics, telemetry names) changes speed, power or logs, so it is a
// Warning. So are the settings of a delegate other than the selected one,
// which TFLite ignores too. While a delegate that does not declare what it
// honours runs (Capabilities.Undeclared), every TFLiteSettings field that
// nothing declares is a Warning that says so: that delegate may read it; so
// is it while a delegate that cannot be had (Capabilities.Unavailable) was
// to run: what it would read does not matter while it runs nothing. Enum
// values outside their enum and unknown fields (which Load rejects, but Go
// code can set) are Errors, honoured or not:
// nobody can honour what has no meaning.
func Check(s *TFLiteSettings, c Capabilities) []Issue {
	if s == nil {
		return nil
	}
	w := newWalker(c, s.GetDelegate())
	w.message(s.ProtoReflect(), tfliteRoot)
	return w.issues
}

// CheckCompute is Check for a ComputeSettings: its own fields too
// (preference and the telemetry names, none of which delego honours) and
// its tflite_settings.
func CheckCompute(cs *ComputeSettings, c Capabilities) []Issue {
	if cs == nil {
		return nil
	}
	w := newWalker(c, cs.GetTfliteSettings().GetDelegate())
	w.message(cs.ProtoReflect(), "")
	return w.issues
}

// walker carries one Check walk. Paths keep list indexes; keys, which the
// allow-list and the severity rule see, drop them.
type walker struct {
	honoured    map[string]bool // full keys: "tflite_settings.cpu_settings.num_threads"
	undeclared  []string        // Capabilities.Undeclared
	unavailable []string        // Capabilities.Unavailable
	delegate    Delegate        // the selected delegate
	issues      []Issue
}

func newWalker(c Capabilities, d Delegate) *walker {
	w := &walker{honoured: make(map[string]bool, len(c.Honoured)), undeclared: c.Undeclared, unavailable: c.Unavailable, delegate: d}
	for _, p := range c.Honoured {
		w.honoured[joinPath(tfliteRoot, p)] = true
	}
	return w
}

// honours reports whether key or a message above it is honoured.
func (w *walker) honours(key string) bool {
	for k := key; ; {
		if w.honoured[k] {
			return true
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			return false
		}
		k = k[:i]
	}
}

// honoursBelow reports whether some field beneath the message at key is
// honoured.
func (w *walker) honoursBelow(key string) bool {
	prefix := key + "."
	for h := range w.honoured {
		if strings.HasPrefix(h, prefix) {
			return true
		}
	}
	return false
}

func (w *walker) message(m protoreflect.Message, path string) {
	key := stripIndexes(path)
	for _, s := range describeUnknown(m, path) {
		w.add(Issue{Path: s.path, Severity: Error, Reason: s.text})
	}
	var fds []protoreflect.FieldDescriptor
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		fds = append(fds, fd)
		return true
	})
	slices.SortFunc(fds, func(a, b protoreflect.FieldDescriptor) int { return cmp.Compare(a.Number(), b.Number()) })
	for _, fd := range fds {
		v := m.Get(fd)
		p, k := joinPath(path, fieldName(fd)), joinPath(key, fieldName(fd))
		if fd.Enum() != nil && !fd.IsMap() {
			if ss := undefinedEnums(fd, v, p); len(ss) > 0 {
				for _, s := range ss {
					w.add(Issue{Path: s.path, Severity: Error, Reason: s.text})
				}
				continue
			}
		}
		switch {
		case w.honours(k):
		case fd.IsMap() || fd.Message() == nil:
			w.report(p, k, v)
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				w.element(l.Get(i).Message(), fmt.Sprintf("%s[%d]", p, i), k)
			}
		default:
			w.element(v.Message(), p, k)
		}
	}
}

// element walks a set message that is not honoured as a whole.
func (w *walker) element(m protoreflect.Message, path, key string) {
	if isEmpty(m) && !w.honoursBelow(key) {
		w.report(path, key, protoreflect.Value{})
		return
	}
	w.message(m, path)
}

func (w *walker) report(path, key string, v protoreflect.Value) {
	sev, reason := w.classify(key, v)
	w.add(Issue{Path: path, Severity: sev, Reason: reason})
}

func (w *walker) add(i Issue) { w.issues = append(w.issues, i) }

// classify applies Check's severity rule to an unhonoured setting.
func (w *walker) classify(key string, v protoreflect.Value) (Severity, string) {
	if strings.HasPrefix(key, tfliteRoot+".") {
		switch {
		case len(w.undeclared) > 0:
			return Warning, undeclaredReason(w.undeclared)
		case len(w.unavailable) > 0:
			return Warning, "no delegate that runs reads it: " + strings.Join(w.unavailable, ", ") + " cannot be had"
		}
	}
	if owner := delegateOf(key); owner != "" && owner != settingsFieldOf(w.delegate) {
		return Warning, fmt.Sprintf("%s is not the selected delegate's (%s); TFLite ignores it too", joinPath(tfliteRoot, owner), w.delegate)
	}
	const arithmetic = "it sets the delegate's arithmetic; ignoring it would silently change the numbers"
	const placement = "it decides which nodes run on the delegate and which on the CPU; ignoring it would silently change results"
	switch key {
	case "tflite_settings.gpu_settings.is_precision_loss_allowed",
		"tflite_settings.gpu_settings.enable_quantized_inference",
		"tflite_settings.nnapi_settings.allow_fp16_precision_for_fp32":
		return Error, arithmetic
	case "tflite_settings.delegate",
		"tflite_settings.max_delegated_partitions",
		"tflite_settings.fallback_settings",
		"tflite_settings.fallback_settings.allow_automatic_fallback_on_compilation_error",
		"tflite_settings.fallback_settings.allow_automatic_fallback_on_execution_error",
		"tflite_settings.nnapi_settings.fallback_settings",
		"tflite_settings.nnapi_settings.fallback_settings.allow_automatic_fallback_on_compilation_error",
		"tflite_settings.nnapi_settings.fallback_settings.allow_automatic_fallback_on_execution_error":
		return Error, placement
	case "tflite_settings.nnapi_settings.no_of_nnapi_instances_to_cache":
		return Warning, "each compiled partition is one NNAPI compilation for its shapes; after a resize delego compiles again rather than keep other instances"
	case "tflite_settings.nnapi_settings.allow_dynamic_dimensions":
		return Warning, "delego hands NNAPI partitions of fixed shapes and compiles again after a resize"
	case "preference":
		if v.IsValid() && ExecutionPreference(v.Enum()) == ExecutionPreference_FORCE_CPU {
			return Error, "FORCE_CPU forbids acceleration; ignoring it would run nodes on the delegate"
		}
	}
	return Warning, ""
}

// undeclaredReason says why a setting nothing declares is only a warning
// while the delegates called names run.
func undeclaredReason(names []string) string {
	if len(names) == 1 {
		return fmt.Sprintf("the delegate %s does not declare the settings it honours, so delego cannot tell whether it reads this one", names[0])
	}
	return fmt.Sprintf("the delegates %s do not declare the settings they honour, so delego cannot tell whether they read this one", strings.Join(names, ", "))
}

// delegateOf returns the TFLiteSettings field of the delegate settings
// message that key lies in or is ("gpu_settings"), or "" when it lies in
// none.
func delegateOf(key string) string {
	rest, ok := strings.CutPrefix(key, tfliteRoot+".")
	if !ok {
		return ""
	}
	field, _, _ := strings.Cut(rest, ".")
	values := Delegate_NONE.Descriptor().Values()
	for i := 0; i < values.Len(); i++ {
		if s := settingsFieldOf(Delegate(values.Get(i).Number())); s != "" && s == field {
			return s
		}
	}
	return ""
}

// settingsFieldOf returns the TFLiteSettings field that configures d, or ""
// for NONE (the CPU).
func settingsFieldOf(d Delegate) string {
	switch d {
	case Delegate_NNAPI:
		return "nnapi_settings"
	case Delegate_GPU:
		return "gpu_settings"
	case Delegate_HEXAGON:
		return "hexagon_settings"
	case Delegate_XNNPACK:
		return "xnnpack_settings"
	case Delegate_EDGETPU:
		return "edgetpu_settings"
	case Delegate_EDGETPU_CORAL:
		return "coral_settings"
	}
	return ""
}

func isEmpty(m protoreflect.Message) bool {
	empty := len(m.GetUnknown()) == 0
	m.Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool {
		empty = false
		return false
	})
	return empty
}

// fieldName is a field's name in a path: its proto name, or [full.name] for
// an extension, as protojson writes it.
func fieldName(fd protoreflect.FieldDescriptor) string {
	if fd.IsExtension() {
		return "[" + string(fd.FullName()) + "]"
	}
	return string(fd.Name())
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// stripIndexes turns a path into a key: "a[2].b" becomes "a.b". Brackets
// that hold anything but digits (an extension's [full.name]) stay.
func stripIndexes(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] == '[' {
			j := i + 1
			for j < len(path) && path[j] >= '0' && path[j] <= '9' {
				j++
			}
			if j > i+1 && j < len(path) && path[j] == ']' {
				i = j
				continue
			}
		}
		b.WriteByte(path[i])
	}
	return b.String()
}
