package rnn

import (
	"testing"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/rnn/rnn_tflite29.json.gz holds one-operator replay cases of
// the family, each Invoked several times in a row so that the state's
// persistence is compared too (see kerneltest/replay.go). It is made by
// testdata/gen/rnn/rnn_tflite29_gen.py.

func TestRNNAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "rnn/rnn_tflite29.json.gz",
		Ops:         Ops(),
		MinCases:    220,
		ThreadCycle: 2,
	})
}

func TestRegistrations(t *testing.T) {
	kerneltest.CheckRegistrations(t, Ops(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorRNN:                         {Min: 1, Max: 3},
		schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_RNN: {Min: 1, Max: 3},
		schema.BuiltinOperatorSVDF:                        {Min: 1, Max: 4},
		schema.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_RNN:  {Min: 1, Max: 3},
	})
}
