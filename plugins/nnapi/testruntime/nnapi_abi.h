/*
 * nnapi_abi.h: the part of the Android NDK's NeuralNetworks.h ABI that the
 * delego test NNAPI runtime implements, declared from the NDK documentation
 * (names, argument types, enum values and struct layouts are fixed by the
 * NDK; nothing here is copied from its header).
 *
 * DELEGO_NNAPI_TEST_API selects the Android API level whose functions the
 * library exports (default 31: everything below). A function added after
 * that level is not compiled at all, so dlsym cannot find it, as on an
 * older phone.
 */
#ifndef DELEGO_NNAPI_ABI_H
#define DELEGO_NNAPI_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef DELEGO_NNAPI_TEST_API
#define DELEGO_NNAPI_TEST_API 31
#endif

/* Operand types (OperandCode). */
enum {
    ANEURALNETWORKS_FLOAT32 = 0,
    ANEURALNETWORKS_INT32 = 1,
    ANEURALNETWORKS_UINT32 = 2,
    ANEURALNETWORKS_TENSOR_FLOAT32 = 3,
    ANEURALNETWORKS_TENSOR_INT32 = 4,
    ANEURALNETWORKS_TENSOR_QUANT8_ASYMM = 5,
    ANEURALNETWORKS_BOOL = 6,
    ANEURALNETWORKS_TENSOR_QUANT16_SYMM = 7,
    ANEURALNETWORKS_TENSOR_FLOAT16 = 8,
    ANEURALNETWORKS_TENSOR_BOOL8 = 9,
    ANEURALNETWORKS_FLOAT16 = 10,
    ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL = 11,
    ANEURALNETWORKS_TENSOR_QUANT16_ASYMM = 12,
    ANEURALNETWORKS_TENSOR_QUANT8_SYMM = 13,
    ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED = 14,
    ANEURALNETWORKS_MODEL = 15,
};

/* Operation types (OperationCode): the ones this runtime names. The full
 * range 0..105 is known to the feature-level table in ops.c. */
enum {
    ANEURALNETWORKS_ADD = 0,
    ANEURALNETWORKS_AVERAGE_POOL_2D = 1,
    ANEURALNETWORKS_CONCATENATION = 2,
    ANEURALNETWORKS_CONV_2D = 3,
    ANEURALNETWORKS_DEPTHWISE_CONV_2D = 4,
    ANEURALNETWORKS_DEQUANTIZE = 6,
    ANEURALNETWORKS_FULLY_CONNECTED = 9,
    ANEURALNETWORKS_LOGISTIC = 14,
    ANEURALNETWORKS_MAX_POOL_2D = 17,
    ANEURALNETWORKS_MUL = 18,
    ANEURALNETWORKS_RELU = 19,
    ANEURALNETWORKS_RELU1 = 20,
    ANEURALNETWORKS_RELU6 = 21,
    ANEURALNETWORKS_RESHAPE = 22,
    ANEURALNETWORKS_SOFTMAX = 25,
    ANEURALNETWORKS_TANH = 28,
    ANEURALNETWORKS_MEAN = 31,
    ANEURALNETWORKS_PAD = 32,
    ANEURALNETWORKS_SQUEEZE = 34,
    ANEURALNETWORKS_SUB = 36,
    ANEURALNETWORKS_QUANTIZE = 72,
    ANEURALNETWORKS_SPLIT = 87,
    ANEURALNETWORKS_UNIDIRECTIONAL_SEQUENCE_LSTM = 92,
};

/* Fused activations (FuseCode). */
enum {
    ANEURALNETWORKS_FUSED_NONE = 0,
    ANEURALNETWORKS_FUSED_RELU = 1,
    ANEURALNETWORKS_FUSED_RELU1 = 2,
    ANEURALNETWORKS_FUSED_RELU6 = 3,
};

/* Implicit padding schemes (PaddingCode). */
enum {
    ANEURALNETWORKS_PADDING_SAME = 1,
    ANEURALNETWORKS_PADDING_VALID = 2,
};

/* Execution preferences (PreferenceCode). */
enum {
    ANEURALNETWORKS_PREFER_LOW_POWER = 0,
    ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER = 1,
    ANEURALNETWORKS_PREFER_SUSTAINED_SPEED = 2,
};

/* Result codes (ResultCode). */
enum {
    ANEURALNETWORKS_NO_ERROR = 0,
    ANEURALNETWORKS_OUT_OF_MEMORY = 1,
    ANEURALNETWORKS_INCOMPLETE = 2,
    ANEURALNETWORKS_UNEXPECTED_NULL = 3,
    ANEURALNETWORKS_BAD_DATA = 4,
    ANEURALNETWORKS_OP_FAILED = 5,
    ANEURALNETWORKS_BAD_STATE = 6,
    ANEURALNETWORKS_UNMAPPABLE = 7,
    ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE = 8,
    ANEURALNETWORKS_UNAVAILABLE_DEVICE = 9,
    ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT = 10,
    ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT = 11,
    ANEURALNETWORKS_RESOURCE_EXHAUSTED_TRANSIENT = 12,
    ANEURALNETWORKS_RESOURCE_EXHAUSTED_PERSISTENT = 13,
    ANEURALNETWORKS_DEAD_OBJECT = 14,
};

/* Values at most this large are copied by setOperandValue; larger ones are
 * referenced and must stay valid while the model is in use. */
enum { ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES = 128 };
enum { ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN = 32 };

/* Device types (DeviceTypeCode). */
enum {
    ANEURALNETWORKS_DEVICE_UNKNOWN = 0,
    ANEURALNETWORKS_DEVICE_OTHER = 1,
    ANEURALNETWORKS_DEVICE_CPU = 2,
    ANEURALNETWORKS_DEVICE_GPU = 3,
    ANEURALNETWORKS_DEVICE_ACCELERATOR = 4,
};

/* Feature levels (FeatureLevelCode). */
enum {
    ANEURALNETWORKS_FEATURE_LEVEL_1 = 27,
    ANEURALNETWORKS_FEATURE_LEVEL_2 = 28,
    ANEURALNETWORKS_FEATURE_LEVEL_3 = 29,
    ANEURALNETWORKS_FEATURE_LEVEL_4 = 30,
    ANEURALNETWORKS_FEATURE_LEVEL_5 = 31,
    ANEURALNETWORKS_FEATURE_LEVEL_6 = 1000006,
    ANEURALNETWORKS_FEATURE_LEVEL_7 = 1000007,
    ANEURALNETWORKS_FEATURE_LEVEL_8 = 1000008,
};

/* Priorities (PriorityCode). */
enum {
    ANEURALNETWORKS_PRIORITY_LOW = 90,
    ANEURALNETWORKS_PRIORITY_MEDIUM = 100,
    ANEURALNETWORKS_PRIORITY_HIGH = 110,
    ANEURALNETWORKS_PRIORITY_DEFAULT = ANEURALNETWORKS_PRIORITY_MEDIUM,
};

/* ANeuralNetworksOperandType: 16 + sizeof(void*) bytes, pointer aligned. */
typedef struct ANeuralNetworksOperandType {
    int32_t type;
    uint32_t dimensionCount;
    const uint32_t *dimensions;
    float scale;
    int32_t zeroPoint;
} ANeuralNetworksOperandType;

/* ANeuralNetworksSymmPerChannelQuantParams: 8 + sizeof(void*) bytes. */
typedef struct ANeuralNetworksSymmPerChannelQuantParams {
    uint32_t channelDim;
    uint32_t scaleCount;
    const float *scales;
} ANeuralNetworksSymmPerChannelQuantParams;

typedef int32_t ANeuralNetworksOperationType;

/* Opaque handles; their structs are defined by the runtime. */
typedef struct ANeuralNetworksMemory ANeuralNetworksMemory;
typedef struct ANeuralNetworksModel ANeuralNetworksModel;
typedef struct ANeuralNetworksCompilation ANeuralNetworksCompilation;
typedef struct ANeuralNetworksExecution ANeuralNetworksExecution;
typedef struct ANeuralNetworksEvent ANeuralNetworksEvent;
typedef struct ANeuralNetworksDevice ANeuralNetworksDevice;
typedef struct ANeuralNetworksBurst ANeuralNetworksBurst;

#define DELEGO_EXPORT __attribute__((visibility("default")))

/* API 27 (NNAPI 1.0). */
DELEGO_EXPORT int ANeuralNetworksMemory_createFromFd(size_t size, int protect, int fd, size_t offset,
                                                     ANeuralNetworksMemory **memory);
DELEGO_EXPORT void ANeuralNetworksMemory_free(ANeuralNetworksMemory *memory);
DELEGO_EXPORT int ANeuralNetworksModel_create(ANeuralNetworksModel **model);
DELEGO_EXPORT void ANeuralNetworksModel_free(ANeuralNetworksModel *model);
DELEGO_EXPORT int ANeuralNetworksModel_finish(ANeuralNetworksModel *model);
DELEGO_EXPORT int ANeuralNetworksModel_addOperand(ANeuralNetworksModel *model,
                                                  const ANeuralNetworksOperandType *type);
DELEGO_EXPORT int ANeuralNetworksModel_setOperandValue(ANeuralNetworksModel *model, int32_t index,
                                                       const void *buffer, size_t length);
DELEGO_EXPORT int ANeuralNetworksModel_setOperandValueFromMemory(ANeuralNetworksModel *model, int32_t index,
                                                                 const ANeuralNetworksMemory *memory,
                                                                 size_t offset, size_t length);
DELEGO_EXPORT int ANeuralNetworksModel_addOperation(ANeuralNetworksModel *model,
                                                    ANeuralNetworksOperationType type, uint32_t inputCount,
                                                    const uint32_t *inputs, uint32_t outputCount,
                                                    const uint32_t *outputs);
DELEGO_EXPORT int ANeuralNetworksModel_identifyInputsAndOutputs(ANeuralNetworksModel *model, uint32_t inputCount,
                                                                const uint32_t *inputs, uint32_t outputCount,
                                                                const uint32_t *outputs);
DELEGO_EXPORT int ANeuralNetworksCompilation_create(ANeuralNetworksModel *model,
                                                    ANeuralNetworksCompilation **compilation);
DELEGO_EXPORT void ANeuralNetworksCompilation_free(ANeuralNetworksCompilation *compilation);
DELEGO_EXPORT int ANeuralNetworksCompilation_setPreference(ANeuralNetworksCompilation *compilation,
                                                           int32_t preference);
DELEGO_EXPORT int ANeuralNetworksCompilation_finish(ANeuralNetworksCompilation *compilation);
DELEGO_EXPORT int ANeuralNetworksExecution_create(ANeuralNetworksCompilation *compilation,
                                                  ANeuralNetworksExecution **execution);
DELEGO_EXPORT void ANeuralNetworksExecution_free(ANeuralNetworksExecution *execution);
DELEGO_EXPORT int ANeuralNetworksExecution_setInput(ANeuralNetworksExecution *execution, int32_t index,
                                                    const ANeuralNetworksOperandType *type, const void *buffer,
                                                    size_t length);
DELEGO_EXPORT int ANeuralNetworksExecution_setInputFromMemory(ANeuralNetworksExecution *execution, int32_t index,
                                                              const ANeuralNetworksOperandType *type,
                                                              const ANeuralNetworksMemory *memory, size_t offset,
                                                              size_t length);
DELEGO_EXPORT int ANeuralNetworksExecution_setOutput(ANeuralNetworksExecution *execution, int32_t index,
                                                     const ANeuralNetworksOperandType *type, void *buffer,
                                                     size_t length);
DELEGO_EXPORT int ANeuralNetworksExecution_setOutputFromMemory(ANeuralNetworksExecution *execution, int32_t index,
                                                               const ANeuralNetworksOperandType *type,
                                                               const ANeuralNetworksMemory *memory, size_t offset,
                                                               size_t length);
DELEGO_EXPORT int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution *execution,
                                                        ANeuralNetworksEvent **event);
DELEGO_EXPORT int ANeuralNetworksEvent_wait(ANeuralNetworksEvent *event);
DELEGO_EXPORT void ANeuralNetworksEvent_free(ANeuralNetworksEvent *event);

#if DELEGO_NNAPI_TEST_API >= 28
DELEGO_EXPORT int ANeuralNetworksModel_relaxComputationFloat32toFloat16(ANeuralNetworksModel *model, bool allow);
#endif

#if DELEGO_NNAPI_TEST_API >= 29
DELEGO_EXPORT int ANeuralNetworks_getDeviceCount(uint32_t *numDevices);
DELEGO_EXPORT int ANeuralNetworks_getDevice(uint32_t devIndex, ANeuralNetworksDevice **device);
DELEGO_EXPORT int ANeuralNetworksDevice_getName(const ANeuralNetworksDevice *device, const char **name);
DELEGO_EXPORT int ANeuralNetworksDevice_getType(const ANeuralNetworksDevice *device, int32_t *type);
DELEGO_EXPORT int ANeuralNetworksDevice_getVersion(const ANeuralNetworksDevice *device, const char **version);
DELEGO_EXPORT int ANeuralNetworksDevice_getFeatureLevel(const ANeuralNetworksDevice *device,
                                                        int64_t *featureLevel);
DELEGO_EXPORT int ANeuralNetworksModel_getSupportedOperationsForDevices(const ANeuralNetworksModel *model,
                                                                        const ANeuralNetworksDevice *const *devices,
                                                                        uint32_t numDevices, bool *supportedOps);
DELEGO_EXPORT int ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(
    ANeuralNetworksModel *model, int32_t index, const ANeuralNetworksSymmPerChannelQuantParams *channelQuant);
DELEGO_EXPORT int ANeuralNetworksCompilation_createForDevices(ANeuralNetworksModel *model,
                                                              const ANeuralNetworksDevice *const *devices,
                                                              uint32_t numDevices,
                                                              ANeuralNetworksCompilation **compilation);
DELEGO_EXPORT int ANeuralNetworksCompilation_setCaching(ANeuralNetworksCompilation *compilation,
                                                        const char *cacheDir, const uint8_t *token);
DELEGO_EXPORT int ANeuralNetworksExecution_compute(ANeuralNetworksExecution *execution);
DELEGO_EXPORT int ANeuralNetworksExecution_getOutputOperandRank(ANeuralNetworksExecution *execution, int32_t index,
                                                                uint32_t *rank);
DELEGO_EXPORT int ANeuralNetworksExecution_getOutputOperandDimensions(ANeuralNetworksExecution *execution,
                                                                      int32_t index, uint32_t *dimensions);
DELEGO_EXPORT int ANeuralNetworksBurst_create(ANeuralNetworksCompilation *compilation, ANeuralNetworksBurst **burst);
DELEGO_EXPORT void ANeuralNetworksBurst_free(ANeuralNetworksBurst *burst);
DELEGO_EXPORT int ANeuralNetworksExecution_burstCompute(ANeuralNetworksExecution *execution,
                                                        ANeuralNetworksBurst *burst);
DELEGO_EXPORT int ANeuralNetworksExecution_setMeasureTiming(ANeuralNetworksExecution *execution, bool measure);
DELEGO_EXPORT int ANeuralNetworksExecution_getDuration(const ANeuralNetworksExecution *execution,
                                                       int32_t durationCode, uint64_t *duration);
#endif

#if DELEGO_NNAPI_TEST_API >= 30
DELEGO_EXPORT int ANeuralNetworksDevice_wait(const ANeuralNetworksDevice *device);
DELEGO_EXPORT int ANeuralNetworksCompilation_setPriority(ANeuralNetworksCompilation *compilation, int priority);
DELEGO_EXPORT int ANeuralNetworksCompilation_setTimeout(ANeuralNetworksCompilation *compilation, uint64_t duration);
DELEGO_EXPORT int ANeuralNetworksExecution_setTimeout(ANeuralNetworksExecution *execution, uint64_t duration);
#endif

#if DELEGO_NNAPI_TEST_API >= 31
DELEGO_EXPORT int64_t ANeuralNetworks_getRuntimeFeatureLevel(void);
#endif

/* Test-only functions (not NDK): see README.md. Always exported. */
DELEGO_EXPORT const char *DelegoNnapiTest_lastError(void);
DELEGO_EXPORT int DelegoNnapiTest_reload(void);
DELEGO_EXPORT int32_t DelegoNnapiTest_apiLevel(void);

#endif
