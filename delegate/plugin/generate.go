package plugin

// The protocol's Go code in pluginpb is generated from
// pluginpb/delego_plugin.proto; never edit the *.pb.go files by hand. Change
// the .proto and run go generate, which needs on $PATH:
//
//	protoc 3.21.12            (Debian package protobuf-compiler)
//	protoc-gen-go v1.36.11    go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
//	protoc-gen-go-grpc v1.6.2 go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//
// protoc-gen-go matches the google.golang.org/protobuf runtime in go.mod;
// the .proto imports delegate/config/configuration.proto by the name that
// package registers it under ("configuration.proto"). The build itself needs
// none of these tools.

//go:generate protoc -I pluginpb -I ../config --go_out=pluginpb --go_opt=paths=source_relative --go-grpc_out=pluginpb --go-grpc_opt=paths=source_relative delego_plugin.proto
