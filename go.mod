module github.com/delego/delego

go 1.26

require github.com/google/flatbuffers v2.0.8+incompatible
