/*
 * selftest.c: checks the test NNAPI runtime through its own API, the way
 * the nnapi plugin drives it: a float and a uint8 CONV_2D with known
 * results, the validation rejections the specification asks for, the
 * feature-level gate, DELEGO_NNAPI_TEST_FAIL and DELEGO_NNAPI_TEST_LOG, and
 * that the API-27 build lacks the newer functions.
 *
 *   nnapi-selftest LIB API27_LIB    (run by build-nnapi-testlib.sh --selftest)
 *
 * Exits non-zero, naming each failed check, when anything is wrong.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnapi_abi.h"

static int failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            fprintf(stderr, "selftest: %s:%d: ", __FILE__, __LINE__);                                                  \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, " (last error: %s)\n", f_lastError());                                                     \
        }                                                                                                              \
    } while (0)

/* The library's functions, resolved with dlsym as the plugin does. */
#define FN(name) static __typeof__(&name) f_##name##_p;
#define F(name) (*f_##name##_p)
static __typeof__(&DelegoNnapiTest_lastError) f_lastError_p;
static __typeof__(&DelegoNnapiTest_reload) f_reload_p;
#define f_lastError() (f_lastError_p ? f_lastError_p() : "?")
FN(ANeuralNetworksModel_create)
FN(ANeuralNetworksModel_free)
FN(ANeuralNetworksModel_addOperand)
FN(ANeuralNetworksModel_setOperandValue)
FN(ANeuralNetworksModel_addOperation)
FN(ANeuralNetworksModel_identifyInputsAndOutputs)
FN(ANeuralNetworksModel_finish)
FN(ANeuralNetworksModel_getSupportedOperationsForDevices)
FN(ANeuralNetworksCompilation_create)
FN(ANeuralNetworksCompilation_createForDevices)
FN(ANeuralNetworksCompilation_finish)
FN(ANeuralNetworksCompilation_free)
FN(ANeuralNetworksExecution_create)
FN(ANeuralNetworksExecution_setInput)
FN(ANeuralNetworksExecution_setOutput)
FN(ANeuralNetworksExecution_compute)
FN(ANeuralNetworksExecution_free)
FN(ANeuralNetworks_getDeviceCount)
FN(ANeuralNetworks_getDevice)
FN(ANeuralNetworksDevice_getName)
FN(ANeuralNetworks_getRuntimeFeatureLevel)

static void *must(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "selftest: %s not exported\n", name);
        exit(1);
    }
    return p;
}

#define LOAD(lib, name) f_##name##_p = (__typeof__(f_##name##_p))must(lib, #name)

static void load(void *lib) {
    f_lastError_p = (__typeof__(f_lastError_p))must(lib, "DelegoNnapiTest_lastError");
    f_reload_p = (__typeof__(f_reload_p))must(lib, "DelegoNnapiTest_reload");
    LOAD(lib, ANeuralNetworksModel_create);
    LOAD(lib, ANeuralNetworksModel_free);
    LOAD(lib, ANeuralNetworksModel_addOperand);
    LOAD(lib, ANeuralNetworksModel_setOperandValue);
    LOAD(lib, ANeuralNetworksModel_addOperation);
    LOAD(lib, ANeuralNetworksModel_identifyInputsAndOutputs);
    LOAD(lib, ANeuralNetworksModel_finish);
    LOAD(lib, ANeuralNetworksModel_getSupportedOperationsForDevices);
    LOAD(lib, ANeuralNetworksCompilation_create);
    LOAD(lib, ANeuralNetworksCompilation_createForDevices);
    LOAD(lib, ANeuralNetworksCompilation_finish);
    LOAD(lib, ANeuralNetworksCompilation_free);
    LOAD(lib, ANeuralNetworksExecution_create);
    LOAD(lib, ANeuralNetworksExecution_setInput);
    LOAD(lib, ANeuralNetworksExecution_setOutput);
    LOAD(lib, ANeuralNetworksExecution_compute);
    LOAD(lib, ANeuralNetworksExecution_free);
    LOAD(lib, ANeuralNetworks_getDeviceCount);
    LOAD(lib, ANeuralNetworks_getDevice);
    LOAD(lib, ANeuralNetworksDevice_getName);
    LOAD(lib, ANeuralNetworks_getRuntimeFeatureLevel);
}

/* reconfigure sets one environment variable (NULL: unset) and reloads. */
static void reconfigure(const char *name, const char *value) {
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    f_reload_p();
}

/* ---- model building helpers ---------------------------------------------------------------- */

static int add_tensor(ANeuralNetworksModel *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                      int32_t zp) {
    ANeuralNetworksOperandType t = {type, rank, dims, scale, zp};
    return F(ANeuralNetworksModel_addOperand)(m, &t);
}

/* add_i32 adds an INT32 scalar operand (its value is set separately). */
static int add_i32(ANeuralNetworksModel *m) {
    ANeuralNetworksOperandType t = {ANEURALNETWORKS_INT32, 0, NULL, 0, 0};
    return F(ANeuralNetworksModel_addOperand)(m, &t);
}

/* conv_model builds input(0) * filter(1) + bias(2) -> output, a VALID
 * stride-1 CONV_2D in the implicit form (or with `extra` missing scalars to
 * provoke a count error), and returns the addOperation result. */
typedef struct {
    int32_t type, bias_type;
    float in_scale, f_scale, b_scale, out_scale;
    int32_t in_zp, f_zp, out_zp;
    const void *filter, *bias;
    size_t filter_bytes, bias_bytes;
    int drop_scalars; /* leave this many scalars out of addOperation */
} conv_spec;

static int conv_model(ANeuralNetworksModel *m, const conv_spec *s) {
    static const uint32_t in_dims[] = {1, 3, 3, 1}, f_dims[] = {1, 2, 2, 1}, b_dims[] = {1}, out_dims[] = {1, 2, 2, 1};
    int rc = 0;
    rc |= add_tensor(m, s->type, 4, in_dims, s->in_scale, s->in_zp);           /* 0 */
    rc |= add_tensor(m, s->type, 4, f_dims, s->f_scale, s->f_zp);              /* 1 */
    rc |= add_tensor(m, s->bias_type, 1, b_dims, s->b_scale, 0);               /* 2 */
    rc |= add_tensor(m, s->type, 4, out_dims, s->out_scale, s->out_zp);        /* 3 */
    for (int i = 0; i < 4; i++) rc |= add_i32(m);                           /* 4..7 */
    const int32_t scalars[4] = {ANEURALNETWORKS_PADDING_VALID, 1, 1, ANEURALNETWORKS_FUSED_NONE};
    for (int i = 0; i < 4; i++) rc |= F(ANeuralNetworksModel_setOperandValue)(m, 4 + i, &scalars[i], 4);
    rc |= F(ANeuralNetworksModel_setOperandValue)(m, 1, s->filter, s->filter_bytes);
    rc |= F(ANeuralNetworksModel_setOperandValue)(m, 2, s->bias, s->bias_bytes);
    if (rc) return -1;
    const uint32_t ins[] = {0, 1, 2, 4, 5, 6, 7}, outs[] = {3};
    return F(ANeuralNetworksModel_addOperation)(m, ANEURALNETWORKS_CONV_2D, 7 - (uint32_t)s->drop_scalars, ins, 1, outs);
}

/* run builds, compiles and computes a conv model on one input. */
static int run(const conv_spec *s, const void *in, size_t in_bytes, void *out, size_t out_bytes) {
    ANeuralNetworksModel *m = NULL;
    ANeuralNetworksCompilation *c = NULL;
    ANeuralNetworksExecution *e = NULL;
    int rc = F(ANeuralNetworksModel_create)(&m);
    const uint32_t ins[] = {0}, outs[] = {3};
    if (!rc) rc = conv_model(m, s);
    if (!rc) rc = F(ANeuralNetworksModel_identifyInputsAndOutputs)(m, 1, ins, 1, outs);
    if (!rc) rc = F(ANeuralNetworksModel_finish)(m);
    if (!rc) rc = F(ANeuralNetworksCompilation_create)(m, &c);
    if (!rc) rc = F(ANeuralNetworksCompilation_finish)(c);
    if (!rc) rc = F(ANeuralNetworksExecution_create)(c, &e);
    if (!rc) rc = F(ANeuralNetworksExecution_setInput)(e, 0, NULL, in, in_bytes);
    if (!rc) rc = F(ANeuralNetworksExecution_setOutput)(e, 0, NULL, out, out_bytes);
    if (!rc) rc = F(ANeuralNetworksExecution_compute)(e);
    F(ANeuralNetworksExecution_free)(e);
    F(ANeuralNetworksCompilation_free)(c);
    F(ANeuralNetworksModel_free)(m);
    return rc;
}

static const float f_filter[] = {1, 2, 3, 4}, f_bias[] = {0.5f};

static conv_spec float_spec(void) {
    conv_spec s = {ANEURALNETWORKS_TENSOR_FLOAT32, ANEURALNETWORKS_TENSOR_FLOAT32, 0, 0, 0, 0, 0, 0, 0,
                   f_filter, f_bias, sizeof f_filter, sizeof f_bias, 0};
    return s;
}

/* uint8: input real {1..9} at scale 0.5 zp 128, filter real {.25,.5,.75,1}
 * at scale 0.25 zp 128, bias real -20.75 at scale 0.125, output scale 1 zp
 * 100. */
static const uint8_t q_filter[] = {129, 130, 131, 132};
static const int32_t q_bias[] = {-166};

static conv_spec quant_spec(void) {
    conv_spec s = {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, ANEURALNETWORKS_TENSOR_INT32, 0.5f, 0.25f, 0.125f, 1.0f,
                   128, 128, 100, q_filter, q_bias, sizeof q_filter, sizeof q_bias, 0};
    return s;
}

static void test_float_conv(void) {
    float in[9], out[4] = {0};
    for (int i = 0; i < 9; i++) in[i] = (float)(i + 1);
    conv_spec s = float_spec();
    int rc = run(&s, in, sizeof in, out, sizeof out);
    CHECK(rc == ANEURALNETWORKS_NO_ERROR, "float CONV_2D: rc %d", rc);
    const float want[] = {37.5f, 47.5f, 67.5f, 77.5f};
    for (int i = 0; i < 4; i++) CHECK(fabsf(out[i] - want[i]) < 1e-5f, "float CONV_2D[%d] = %g, want %g", i, out[i], want[i]);
}

static void test_quant_conv(void) {
    uint8_t in[9], out[4] = {0};
    for (int i = 0; i < 9; i++) in[i] = (uint8_t)(128 + 2 * (i + 1));
    conv_spec s = quant_spec();
    int rc = run(&s, in, sizeof in, out, sizeof out);
    CHECK(rc == ANEURALNETWORKS_NO_ERROR, "uint8 CONV_2D: rc %d", rc);
    /* Reals -11.5, -9, -4, -1.5: CONV_2D requantizes as TFLite's ruy does on
     * x86, ties upward (-11.5 -> -11), where MultiplyByQuantizedMultiplier
     * would round them away from zero (-12). */
    const uint8_t want[] = {89, 91, 96, 99};
    for (int i = 0; i < 4; i++) CHECK(out[i] == want[i], "uint8 CONV_2D[%d] = %d, want %d", i, out[i], want[i]);
}

static void test_rejections(void) {
    ANeuralNetworksModel *m = NULL;
    conv_spec s = quant_spec();
    F(ANeuralNetworksModel_create)(&m);
    s.drop_scalars = 1;
    int rc = conv_model(m, &s);
    CHECK(rc == ANEURALNETWORKS_BAD_DATA, "CONV_2D with 6 inputs: rc %d, want BAD_DATA", rc);
    CHECK(strstr(f_lastError(), "CONV_2D") != NULL, "CONV_2D count error names the operation");
    static const uint32_t d[] = {1, 2};
    rc = add_tensor(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, d, 0.5f, 300);
    CHECK(rc == ANEURALNETWORKS_BAD_DATA, "zero point 300: rc %d, want BAD_DATA", rc);
    rc = add_tensor(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, d, 0.0f, 3);
    CHECK(rc == ANEURALNETWORKS_BAD_DATA, "scale 0: rc %d, want BAD_DATA", rc);
    rc = add_tensor(m, ANEURALNETWORKS_TENSOR_FLOAT32, 2, d, 0.5f, 0);
    CHECK(rc == ANEURALNETWORKS_BAD_DATA, "float with a scale: rc %d, want BAD_DATA", rc);
    ANeuralNetworksCompilation *c = NULL;
    rc = F(ANeuralNetworksCompilation_create)(m, &c);
    CHECK(rc == ANEURALNETWORKS_BAD_STATE, "compiling an unfinished model: rc %d, want BAD_STATE", rc);
    F(ANeuralNetworksModel_free)(m);

    /* A wrong bias scale. */
    F(ANeuralNetworksModel_create)(&m);
    s = quant_spec();
    s.b_scale = 0.2f;
    rc = conv_model(m, &s);
    CHECK(rc == ANEURALNETWORKS_BAD_DATA, "bias scale != input*filter scale: rc %d, want BAD_DATA", rc);
    F(ANeuralNetworksModel_free)(m);

    /* Call order: nothing can be added after finish; compute needs inputs. */
    F(ANeuralNetworksModel_create)(&m);
    s = float_spec();
    const uint32_t ins[] = {0}, outs[] = {3};
    rc = conv_model(m, &s);
    rc |= F(ANeuralNetworksModel_identifyInputsAndOutputs)(m, 1, ins, 1, outs);
    rc |= F(ANeuralNetworksModel_finish)(m);
    CHECK(rc == 0, "building the float model: rc %d", rc);
    rc = add_tensor(m, ANEURALNETWORKS_TENSOR_FLOAT32, 2, d, 0, 0);
    CHECK(rc == ANEURALNETWORKS_BAD_STATE, "addOperand after finish: rc %d, want BAD_STATE", rc);
    rc = F(ANeuralNetworksCompilation_create)(m, &c);
    rc |= F(ANeuralNetworksCompilation_finish)(c);
    ANeuralNetworksExecution *e = NULL;
    rc |= F(ANeuralNetworksExecution_create)(c, &e);
    CHECK(rc == 0, "compiling the float model: rc %d", rc);
    rc = F(ANeuralNetworksExecution_compute)(e);
    CHECK(rc == ANEURALNETWORKS_BAD_DATA, "compute without inputs: rc %d, want BAD_DATA", rc);
    F(ANeuralNetworksExecution_free)(e);
    F(ANeuralNetworksCompilation_free)(c);
    F(ANeuralNetworksModel_free)(m);
}

static void test_feature_levels(void) {
    reconfigure("DELEGO_NNAPI_TEST_FEATURE_LEVEL", "27");
    CHECK(F(ANeuralNetworks_getRuntimeFeatureLevel)() == 27, "runtime feature level 27");
    ANeuralNetworksModel *m = NULL;
    F(ANeuralNetworksModel_create)(&m);
    static const uint32_t d[] = {1, 2};
    int rc = add_tensor(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, 2, d, 0.5f, 0);
    CHECK(rc == ANEURALNETWORKS_BAD_DATA, "TENSOR_QUANT8_ASYMM_SIGNED at level 27: rc %d, want BAD_DATA", rc);
    /* SPLIT came with feature level 3 (29). */
    rc = add_tensor(m, ANEURALNETWORKS_TENSOR_FLOAT32, 2, d, 0, 0);
    rc |= add_i32(m) | add_i32(m);
    rc |= add_tensor(m, ANEURALNETWORKS_TENSOR_FLOAT32, 2, d, 0, 0);
    CHECK(rc == 0, "operands at level 27");
    const uint32_t ins[] = {0, 1, 2}, outs[] = {3};
    rc = F(ANeuralNetworksModel_addOperation)(m, ANEURALNETWORKS_SPLIT, 3, ins, 1, outs);
    CHECK(rc == ANEURALNETWORKS_BAD_DATA, "SPLIT at level 27: rc %d, want BAD_DATA", rc);
    CHECK(strstr(f_lastError(), "29") != NULL, "the SPLIT refusal names level 29");
    F(ANeuralNetworksModel_free)(m);
    reconfigure("DELEGO_NNAPI_TEST_FEATURE_LEVEL", NULL);

    /* A device older than the operation: supported nowhere but the CPU. */
    reconfigure("DELEGO_NNAPI_TEST_DEVICES", "old-npu:accelerator:28,nnapi-reference:cpu:30");
    uint32_t n = 0;
    ANeuralNetworksDevice *dev[2] = {NULL, NULL};
    F(ANeuralNetworks_getDeviceCount)(&n);
    CHECK(n == 2, "two configured devices, got %u", n);
    F(ANeuralNetworks_getDevice)(0, &dev[0]);
    F(ANeuralNetworks_getDevice)(1, &dev[1]);
    const char *name = "";
    F(ANeuralNetworksDevice_getName)(dev[0], &name);
    CHECK(strcmp(name, "old-npu") == 0, "device 0 is %s", name);
    F(ANeuralNetworksModel_create)(&m);
    rc = add_tensor(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, 2, d, 0.5f, 0);
    rc |= add_i32(m) | add_i32(m);
    rc |= add_tensor(m, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, 2, d, 0.5f, 0);
    int32_t axis = 1, splits = 1;
    rc |= F(ANeuralNetworksModel_setOperandValue)(m, 1, &axis, 4);
    rc |= F(ANeuralNetworksModel_setOperandValue)(m, 2, &splits, 4);
    rc |= F(ANeuralNetworksModel_addOperation)(m, ANEURALNETWORKS_SPLIT, 3, ins, 1, outs);
    rc |= F(ANeuralNetworksModel_identifyInputsAndOutputs)(m, 1, ins, 1, outs);
    rc |= F(ANeuralNetworksModel_finish)(m);
    CHECK(rc == 0, "int8 SPLIT model");
    bool sup[1] = {true};
    const ANeuralNetworksDevice *old[1] = {dev[0]};
    rc = F(ANeuralNetworksModel_getSupportedOperationsForDevices)(m, old, 1, sup);
    CHECK(rc == 0 && !sup[0], "int8 SPLIT on a level-28 device: rc %d supported %d", rc, sup[0]);
    ANeuralNetworksCompilation *c = NULL;
    rc = F(ANeuralNetworksCompilation_createForDevices)(m, old, 1, &c);
    rc = rc ? rc : F(ANeuralNetworksCompilation_finish)(c);
    CHECK(rc == ANEURALNETWORKS_BAD_DATA, "compiling int8 SPLIT for a level-28 device: rc %d, want BAD_DATA", rc);
    F(ANeuralNetworksCompilation_free)(c);
    F(ANeuralNetworksModel_free)(m);
    reconfigure("DELEGO_NNAPI_TEST_DEVICES", NULL);
}

static void test_fail_and_log(const char *dir) {
    char log[512];
    snprintf(log, sizeof log, "%s/nnapi-selftest.log", dir);
    unlink(log);
    reconfigure("DELEGO_NNAPI_TEST_LOG", log);
    reconfigure("DELEGO_NNAPI_TEST_FAIL", "ANeuralNetworksModel_finish:UNMAPPABLE");
    float in[9] = {0}, out[4];
    conv_spec s = float_spec();
    int rc = run(&s, in, sizeof in, out, sizeof out);
    CHECK(rc == ANEURALNETWORKS_UNMAPPABLE, "DELEGO_NNAPI_TEST_FAIL on Model_finish: rc %d, want UNMAPPABLE", rc);
    CHECK(strstr(f_lastError(), "DELEGO_NNAPI_TEST_FAIL") != NULL, "the injected failure says where it comes from");
    reconfigure("DELEGO_NNAPI_TEST_FAIL", "ANeuralNetworksExecution_compute");
    rc = run(&s, in, sizeof in, out, sizeof out);
    CHECK(rc == ANEURALNETWORKS_OP_FAILED, "DELEGO_NNAPI_TEST_FAIL on compute: rc %d, want OP_FAILED", rc);
    reconfigure("DELEGO_NNAPI_TEST_FAIL", NULL);
    reconfigure("DELEGO_NNAPI_TEST_LOG", NULL);
    FILE *f = fopen(log, "r");
    char line[512];
    bool finish = false, compute = false;
    while (f && fgets(line, sizeof line, f)) {
        finish = finish || (strstr(line, "ANeuralNetworksModel_finish model=") && strstr(line, "-> UNMAPPABLE"));
        compute = compute || (strstr(line, "ANeuralNetworksExecution_compute execution=") && strstr(line, "-> OP_FAILED"));
    }
    if (f) fclose(f);
    CHECK(finish && compute, "the log has the failed finish and compute lines");
    unlink(log);
}

static void test_api27(const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL, "dlopen %s: %s", path, dlerror());
    if (!lib) return;
    CHECK(dlsym(lib, "ANeuralNetworksModel_create") != NULL, "API 27 has Model_create");
    static const char *const newer[] = {"ANeuralNetworks_getDeviceCount", "ANeuralNetworks_getRuntimeFeatureLevel",
                                        "ANeuralNetworksCompilation_createForDevices", "ANeuralNetworksBurst_create",
                                        "ANeuralNetworksCompilation_setCaching", "ANeuralNetworksExecution_compute",
                                        "ANeuralNetworksModel_relaxComputationFloat32toFloat16"};
    for (size_t i = 0; i < sizeof newer / sizeof newer[0]; i++)
        CHECK(dlsym(lib, newer[i]) == NULL, "API 27 build exports %s", newer[i]);
    dlclose(lib);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIB API27_LIB\n", argv[0]);
        return 2;
    }
    unsetenv("DELEGO_NNAPI_TEST_FAIL");
    unsetenv("DELEGO_NNAPI_TEST_FEATURE_LEVEL");
    unsetenv("DELEGO_NNAPI_TEST_DEVICES");
    unsetenv("DELEGO_NNAPI_TEST_LOG");
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "selftest: dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    load(lib);
    f_reload_p();
    test_float_conv();
    test_quant_conv();
    test_rejections();
    test_feature_levels();
    const char *tmp = getenv("TMPDIR");
    test_fail_and_log(tmp && *tmp ? tmp : "/tmp");
    test_api27(argv[2]);
    if (failures) fprintf(stderr, "selftest: %d checks failed\n", failures);
    return failures ? 1 : 0;
}
