// Package config is delego's acceleration configuration: the Go code that
// protoc-gen-go generates from configuration.proto (TensorFlow Lite's
// acceleration configuration, proto2: ComputeSettings, TFLiteSettings and the
// settings of each delegate), plus loading settings files (Load, Parse) and
// checking them against what delego honours (Check).
//
// configuration.proto is the seed's TFLite file with delego's additions
// appended, each marked "delego:" (the go_package option,
// CoralSettings.firmware_path and TFLiteSettings.delegate_options, field
// 1000, far above TFLite's numbers), and StableDelegateLoaderSettings
// (TFLiteSettings.stable_delegate_loader_settings) taken from TensorFlow's
// later configuration.proto with its field numbers. Never edit configuration.pb.go by hand: change
// configuration.proto and run go generate, which needs protoc and
// protoc-gen-go on $PATH. The build itself needs neither.
//
// Generated with protoc 3.21.12 (Debian package protobuf-compiler) and
// protoc-gen-go v1.36.11, matching the google.golang.org/protobuf v1.36.11
// runtime pinned in go.mod:
//
//	apt-get install -y protobuf-compiler
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
package config

//go:generate protoc --go_out=. --go_opt=paths=source_relative configuration.proto
