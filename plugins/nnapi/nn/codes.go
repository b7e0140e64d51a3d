package nn

import "fmt"

// ResultCode is an NNAPI result code (ANEURALNETWORKS_NO_ERROR and the
// errors after it).
type ResultCode int32

// The result codes of NeuralNetworks.h.
const (
	NoError                     ResultCode = 0
	OutOfMemory                 ResultCode = 1
	Incomplete                  ResultCode = 2
	UnexpectedNull              ResultCode = 3
	BadData                     ResultCode = 4
	OpFailed                    ResultCode = 5
	BadState                    ResultCode = 6
	Unmappable                  ResultCode = 7
	OutputInsufficientSize      ResultCode = 8
	UnavailableDevice           ResultCode = 9
	MissedDeadlineTransient     ResultCode = 10
	MissedDeadlinePersistent    ResultCode = 11
	ResourceExhaustedTransient  ResultCode = 12
	ResourceExhaustedPersistent ResultCode = 13
	DeadObject                  ResultCode = 14
)

var resultNames = [...]string{
	"ANEURALNETWORKS_NO_ERROR", "ANEURALNETWORKS_OUT_OF_MEMORY", "ANEURALNETWORKS_INCOMPLETE",
	"ANEURALNETWORKS_UNEXPECTED_NULL", "ANEURALNETWORKS_BAD_DATA", "ANEURALNETWORKS_OP_FAILED",
	"ANEURALNETWORKS_BAD_STATE", "ANEURALNETWORKS_UNMAPPABLE", "ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE",
	"ANEURALNETWORKS_UNAVAILABLE_DEVICE", "ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT",
	"ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT", "ANEURALNETWORKS_RESOURCE_EXHAUSTED_TRANSIENT",
	"ANEURALNETWORKS_RESOURCE_EXHAUSTED_PERSISTENT", "ANEURALNETWORKS_DEAD_OBJECT",
}

// String is the code's name, e.g. "ANEURALNETWORKS_OP_FAILED"; an unknown
// code reads "NNAPI result code 99".
func (c ResultCode) String() string {
	if c >= 0 && int(c) < len(resultNames) {
		return resultNames[c]
	}
	return fmt.Sprintf("NNAPI result code %d", int32(c))
}

// Error is a failed NNAPI call.
type Error struct {
	Call string     // the NNAPI function, e.g. "ANeuralNetworksModel_finish"
	Code ResultCode // what it returned
	// Detail is what the library said about it, when it says (delego's
	// test runtime exports DelegoNnapiTest_lastError); often empty.
	Detail string
}

func (e *Error) Error() string {
	s := e.Call + ": " + e.Code.String()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// OperandType is an ANEURALNETWORKS_* operand type.
type OperandType int32

// The operand types of NeuralNetworks.h.
const (
	Float32                    OperandType = 0
	Int32                      OperandType = 1
	Uint32                     OperandType = 2
	TensorFloat32              OperandType = 3
	TensorInt32                OperandType = 4
	TensorQuant8Asymm          OperandType = 5
	Bool                       OperandType = 6
	TensorQuant16Symm          OperandType = 7
	TensorFloat16              OperandType = 8
	TensorBool8                OperandType = 9
	Float16                    OperandType = 10
	TensorQuant8SymmPerChannel OperandType = 11
	TensorQuant16Asymm         OperandType = 12
	TensorQuant8Symm           OperandType = 13
	TensorQuant8AsymmSigned    OperandType = 14
)

var operandNames = [...]string{
	"FLOAT32", "INT32", "UINT32", "TENSOR_FLOAT32", "TENSOR_INT32", "TENSOR_QUANT8_ASYMM", "BOOL",
	"TENSOR_QUANT16_SYMM", "TENSOR_FLOAT16", "TENSOR_BOOL8", "FLOAT16", "TENSOR_QUANT8_SYMM_PER_CHANNEL",
	"TENSOR_QUANT16_ASYMM", "TENSOR_QUANT8_SYMM", "TENSOR_QUANT8_ASYMM_SIGNED",
}

func (t OperandType) String() string {
	if t >= 0 && int(t) < len(operandNames) {
		return operandNames[t]
	}
	return fmt.Sprintf("OperandType(%d)", int32(t))
}

// ElementSize is the size in bytes of one element of t.
func (t OperandType) ElementSize() int {
	switch t {
	case TensorQuant8Asymm, TensorQuant8SymmPerChannel, TensorQuant8Symm, TensorQuant8AsymmSigned, Bool, TensorBool8:
		return 1
	case TensorQuant16Symm, TensorQuant16Asymm, TensorFloat16, Float16:
		return 2
	}
	return 4
}

// OperationType is an ANEURALNETWORKS_* operation.
type OperationType int32

// The operations the nnapi delegate emits (NeuralNetworks.h's numbers).
const (
	OpAdd                   OperationType = 0
	OpAveragePool2D         OperationType = 1
	OpConcatenation         OperationType = 2
	OpConv2D                OperationType = 3
	OpDepthwiseConv2D       OperationType = 4
	OpDequantize            OperationType = 6
	OpFullyConnected        OperationType = 9
	OpL2Pool2D              OperationType = 12
	OpLogistic              OperationType = 14
	OpMaxPool2D             OperationType = 17
	OpMul                   OperationType = 18
	OpRelu                  OperationType = 19
	OpRelu1                 OperationType = 20
	OpRelu6                 OperationType = 21
	OpReshape               OperationType = 22
	OpResizeBilinear        OperationType = 23
	OpSoftmax               OperationType = 25
	OpTanh                  OperationType = 28
	OpDiv                   OperationType = 30
	OpMean                  OperationType = 31
	OpPad                   OperationType = 32
	OpSqueeze               OperationType = 34
	OpStridedSlice          OperationType = 35
	OpSub                   OperationType = 36
	OpTranspose             OperationType = 37
	OpArgMax                OperationType = 39
	OpGather                OperationType = 51
	OpPadV2                 OperationType = 69
	OpPrelu                 OperationType = 71
	OpQuantize              OperationType = 72
	OpSplit                 OperationType = 87
	OpUnidirectionalLSTM    OperationType = 92
	OpResizeNearestNeighbor OperationType = 94
	OpHardSwish             OperationType = 99
)

var operationNames = map[OperationType]string{
	OpAdd: "ADD", OpAveragePool2D: "AVERAGE_POOL_2D", OpConcatenation: "CONCATENATION", OpConv2D: "CONV_2D",
	OpDepthwiseConv2D: "DEPTHWISE_CONV_2D", OpDequantize: "DEQUANTIZE", OpFullyConnected: "FULLY_CONNECTED",
	OpL2Pool2D: "L2_POOL_2D", OpLogistic: "LOGISTIC", OpMaxPool2D: "MAX_POOL_2D", OpMul: "MUL", OpRelu: "RELU",
	OpRelu1: "RELU1", OpRelu6: "RELU6", OpReshape: "RESHAPE", OpResizeBilinear: "RESIZE_BILINEAR",
	OpSoftmax: "SOFTMAX", OpTanh: "TANH", OpDiv: "DIV", OpMean: "MEAN", OpPad: "PAD", OpSqueeze: "SQUEEZE",
	OpStridedSlice: "STRIDED_SLICE", OpSub: "SUB", OpTranspose: "TRANSPOSE", OpArgMax: "ARGMAX",
	OpGather: "GATHER", OpPadV2: "PAD_V2", OpPrelu: "PRELU", OpQuantize: "QUANTIZE", OpSplit: "SPLIT",
	OpUnidirectionalLSTM: "UNIDIRECTIONAL_SEQUENCE_LSTM", OpResizeNearestNeighbor: "RESIZE_NEAREST_NEIGHBOR",
	OpHardSwish: "HARD_SWISH",
}

func (o OperationType) String() string {
	if s, ok := operationNames[o]; ok {
		return "ANEURALNETWORKS_" + s
	}
	return fmt.Sprintf("ANEURALNETWORKS operation %d", int32(o))
}

// DeviceType is ANEURALNETWORKS_DEVICE_*.
type DeviceType int32

// The device types.
const (
	DeviceUnknown     DeviceType = 0
	DeviceOther       DeviceType = 1
	DeviceCPU         DeviceType = 2
	DeviceGPU         DeviceType = 3
	DeviceAccelerator DeviceType = 4
)

func (t DeviceType) String() string {
	switch t {
	case DeviceOther:
		return "other"
	case DeviceCPU:
		return "cpu"
	case DeviceGPU:
		return "gpu"
	case DeviceAccelerator:
		return "accelerator"
	}
	return "unknown"
}

// Preference is ANEURALNETWORKS_PREFER_*.
type Preference int32

// The execution preferences.
const (
	PreferLowPower         Preference = 0
	PreferFastSingleAnswer Preference = 1
	PreferSustainedSpeed   Preference = 2
)

// Priority is ANEURALNETWORKS_PRIORITY_*.
type Priority int32

// The priorities (feature level 30).
const (
	PriorityLow    Priority = 90
	PriorityMedium Priority = 100
	PriorityHigh   Priority = 110
)

// Fused activations and paddings, as operation inputs.
const (
	FuseNone  = 0
	FuseRelu  = 1
	FuseRelu1 = 2
	FuseRelu6 = 3

	PaddingSame  = 1
	PaddingValid = 2
)

// Feature levels: the Android API levels of NNAPI 1.0 to 1.3, then the
// feature levels of NNAPI's updatable runtime.
const (
	FeatureLevel1 int64 = 27 // NNAPI 1.0, Android 8.1
	FeatureLevel2 int64 = 28 // NNAPI 1.1, Android 9
	FeatureLevel3 int64 = 29 // NNAPI 1.2, Android 10
	FeatureLevel4 int64 = 30 // NNAPI 1.3, Android 11
	FeatureLevel5 int64 = 31 // Android 12
	FeatureLevel6 int64 = 1000006
	FeatureLevel7 int64 = 1000007
)

// LevelName describes a feature level for people: "30 (NNAPI 1.3)",
// "1000006 (feature level 6)".
func LevelName(l int64) string {
	switch {
	case l >= FeatureLevel1 && l <= FeatureLevel4:
		return fmt.Sprintf("%d (NNAPI 1.%d)", l, l-FeatureLevel1)
	case l == FeatureLevel5:
		return "31 (feature level 5)"
	case l > 1000000 && l < 1000100:
		return fmt.Sprintf("%d (feature level %d)", l, l-1000000)
	}
	return fmt.Sprint(l)
}

// CacheTokenSize is ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN.
const CacheTokenSize = 32

// MaxImmediateSize is ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES:
// setOperandValue copies values up to this size; larger ones it reads
// later from the caller's memory.
const MaxImmediateSize = 128
