module github.com/delego/delego

go 1.26.0

require (
	github.com/google/flatbuffers v2.0.8+incompatible
	golang.org/x/image v0.47.0
	google.golang.org/protobuf v1.36.11
)

require github.com/google/gousb v1.1.3
