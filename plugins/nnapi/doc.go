// Package nnapi will be the nnapi delegate plugin: Android's NNAPI (reachable only on Android; mocked at that seam elsewhere).
// Its binary will be plugins/nnapi/cmd/delego-nnapi. (Empty until its issue.)
package nnapi
