/*
 * runtime.c: the delego test NNAPI runtime, a libneuralnetworks.so with the
 * NDK ABI for testing delego's nnapi plugin off Android (see README.md).
 *
 * It checks every call as the NNAPI specification constrains it (call
 * order, operand types and quantization, operand counts, types and ranks per
 * operation, feature levels), records why it rejected a call
 * (DelegoNnapiTest_lastError) and computes real results for the operations
 * listed in README.md (kernels.c).
 *
 * Configuration, read from the environment at the first call (and again by
 * DelegoNnapiTest_reload):
 *   DELEGO_NNAPI_TEST_FEATURE_LEVEL  runtime feature level: 27..30 (API
 *       levels = feature levels 1..4), 31 (FL5), 1000006 (FL6), 1000007
 *       (FL7), 1000008 (FL8); default 30. Capped at the build's API level.
 *   DELEGO_NNAPI_TEST_DEVICES  comma-separated name:type[:feature level
 *       [:version]], type one of accelerator, gpu, cpu, other, unknown (or
 *       its DeviceTypeCode number); default
 *       "delego-test-npu:accelerator,nnapi-reference:cpu", both at the
 *       runtime feature level, version "delego-test-1".
 *   DELEGO_NNAPI_TEST_FAIL  comma-separated FunctionName[:CODE]: that NDK
 *       function fails with CODE (a ResultCode name with or without the
 *       ANEURALNETWORKS_ prefix, or its number; default OP_FAILED) before
 *       doing anything.
 *   DELEGO_NNAPI_TEST_LOG  file to which one line per API call is appended:
 *       "FunctionName key=value ... -> RESULT".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "testrt.h"

#define TRY(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)
#define MAX_DEVICES 8
#define MAX_FAILS 16

struct ANeuralNetworksDevice {
    char name[64];
    int32_t type;
    int64_t level;
    char version[64];
};

struct ANeuralNetworksCompilation {
    int id;
    int refs;
    ANeuralNetworksModel *model;
    const ANeuralNetworksDevice *devices[MAX_DEVICES];
    uint32_t ndevices;
    bool for_devices; /* createForDevices */
    bool finished;
    int32_t preference, priority;
    uint64_t timeout;
    bool caching;
    char cache_dir[512];
    uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN];
};

/* The buffer an execution binds to one model input or output. */
typedef struct {
    bool set, omitted;
    uint8_t *data;
    size_t length;
    ANeuralNetworksMemory *mem;
    uint32_t rank;
    uint32_t dims[TR_MAX_RANK];
} binding;

struct ANeuralNetworksExecution {
    int id;
    ANeuralNetworksCompilation *comp;
    binding *in, *out;
    bool started, done;
    bool measure;
    uint64_t timeout, duration_ns;
    uint32_t (*out_dims)[TR_MAX_RANK + 1]; /* rank, then dims, after compute */
};

struct ANeuralNetworksEvent {
    int id;
    int result;
};

struct ANeuralNetworksBurst {
    int id;
    ANeuralNetworksCompilation *comp;
};

/* ---- global state: configuration, last error, log ------------------------------------------ */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool configured;
static int64_t runtime_level;
static ANeuralNetworksDevice devices[MAX_DEVICES];
static uint32_t ndevices;
static struct { char name[96]; int code; } fails[MAX_FAILS];
static int nfails;
static char log_path[1024];
static char last_error[1024];
static int next_id;

static const char *const code_names[] = {
    "NO_ERROR", "OUT_OF_MEMORY", "INCOMPLETE", "UNEXPECTED_NULL", "BAD_DATA", "OP_FAILED", "BAD_STATE",
    "UNMAPPABLE", "OUTPUT_INSUFFICIENT_SIZE", "UNAVAILABLE_DEVICE", "MISSED_DEADLINE_TRANSIENT",
    "MISSED_DEADLINE_PERSISTENT", "RESOURCE_EXHAUSTED_TRANSIENT", "RESOURCE_EXHAUSTED_PERSISTENT", "DEAD_OBJECT",
};

const char *tr_code_name(int code) {
    if (code < 0 || (size_t)code >= sizeof code_names / sizeof code_names[0]) return "UNKNOWN_CODE";
    return code_names[code];
}

static const char *const type_names[] = {
    "FLOAT32", "INT32", "UINT32", "TENSOR_FLOAT32", "TENSOR_INT32", "TENSOR_QUANT8_ASYMM", "BOOL",
    "TENSOR_QUANT16_SYMM", "TENSOR_FLOAT16", "TENSOR_BOOL8", "FLOAT16", "TENSOR_QUANT8_SYMM_PER_CHANNEL",
    "TENSOR_QUANT16_ASYMM", "TENSOR_QUANT8_SYMM", "TENSOR_QUANT8_ASYMM_SIGNED", "MODEL",
};

const char *tr_type_name(int32_t type) {
    if (type < 0 || (size_t)type >= sizeof type_names / sizeof type_names[0]) return "UNKNOWN_TYPE";
    return type_names[type];
}

size_t tr_type_size(int32_t type) {
    switch (type) {
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM:
    case ANEURALNETWORKS_BOOL:
    case ANEURALNETWORKS_TENSOR_BOOL8:
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM:
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED: return 1;
    case ANEURALNETWORKS_TENSOR_QUANT16_SYMM:
    case ANEURALNETWORKS_TENSOR_FLOAT16:
    case ANEURALNETWORKS_FLOAT16:
    case ANEURALNETWORKS_TENSOR_QUANT16_ASYMM: return 2;
    case ANEURALNETWORKS_MODEL: return sizeof(void *);
    }
    return 4;
}

bool tr_is_tensor_type(int32_t t) {
    return !(t == ANEURALNETWORKS_FLOAT32 || t == ANEURALNETWORKS_INT32 || t == ANEURALNETWORKS_UINT32 ||
             t == ANEURALNETWORKS_BOOL || t == ANEURALNETWORKS_FLOAT16 || t == ANEURALNETWORKS_MODEL);
}

size_t tr_elems(const uint32_t *dims, uint32_t rank) {
    size_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= dims[i];
    return n;
}

/* The feature level that introduced each operand type. */
int64_t tr_level_of_type(int32_t t) {
    if (t >= 0 && t <= 5) return ANEURALNETWORKS_FEATURE_LEVEL_1;
    if (t >= 6 && t <= 13) return ANEURALNETWORKS_FEATURE_LEVEL_3;
    if (t == 14 || t == 15) return ANEURALNETWORKS_FEATURE_LEVEL_4;
    return -1;
}

int tr_fail(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

static int parse_code(const char *s) {
    if (strncmp(s, "ANEURALNETWORKS_", 16) == 0) s += 16;
    for (size_t i = 0; i < sizeof code_names / sizeof code_names[0]; i++)
        if (strcmp(s, code_names[i]) == 0) return (int)i;
    char *end;
    long v = strtol(s, &end, 10);
    return (*s && !*end) ? (int)v : -1;
}

static bool valid_level(int64_t l) {
    return (l >= 27 && l <= 31) || (l >= ANEURALNETWORKS_FEATURE_LEVEL_6 && l <= ANEURALNETWORKS_FEATURE_LEVEL_8);
}

static void config_warn(const char *what, const char *value) {
    fprintf(stderr, "delego test NNAPI runtime: ignoring %s=%s\n", what, value);
}

static int32_t parse_device_type(const char *s) {
    static const char *const names[] = {"unknown", "other", "cpu", "gpu", "accelerator"};
    for (int i = 0; i < 5; i++)
        if (strcasecmp(s, names[i]) == 0) return i;
    char *end;
    long v = strtol(s, &end, 10);
    return (*s && !*end && v >= 0 && v <= 4) ? (int32_t)v : -1;
}

static void add_device(const char *name, int32_t type, int64_t level, const char *version) {
    if (ndevices == MAX_DEVICES) return;
    ANeuralNetworksDevice *d = &devices[ndevices++];
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->version, sizeof d->version, "%s", version);
    d->type = type;
    d->level = level;
}

/* parse_devices reads DELEGO_NNAPI_TEST_DEVICES (see the top of this file). */
static void parse_devices(const char *spec) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *f[4] = {item, NULL, NULL, NULL};
        for (int i = 1; i < 4; i++) {
            char *c = strchr(f[i - 1], ':');
            if (!c) break;
            *c = 0;
            f[i] = c + 1;
        }
        int32_t type = f[1] ? parse_device_type(f[1]) : ANEURALNETWORKS_DEVICE_ACCELERATOR;
        int64_t level = f[2] && *f[2] ? strtoll(f[2], NULL, 10) : runtime_level;
        if (!*f[0] || type < 0 || !valid_level(level)) {
            config_warn("a device in DELEGO_NNAPI_TEST_DEVICES", item);
            continue;
        }
        add_device(f[0], type, level, f[3] && *f[3] ? f[3] : "delego-test-1");
    }
}

static void parse_fails(const char *spec) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item && nfails < MAX_FAILS; item = strtok_r(NULL, ",", &save)) {
        char *c = strchr(item, ':');
        int code = ANEURALNETWORKS_OP_FAILED;
        if (c) {
            *c = 0;
            code = parse_code(c + 1);
        }
        if (code <= 0) {
            config_warn("DELEGO_NNAPI_TEST_FAIL", spec);
            continue;
        }
        snprintf(fails[nfails].name, sizeof fails[nfails].name, "%s", item);
        fails[nfails++].code = code;
    }
}

/* load_config reads the environment (lock held). */
static void load_config(void) {
    const char *v = getenv("DELEGO_NNAPI_TEST_FEATURE_LEVEL");
    runtime_level = ANEURALNETWORKS_FEATURE_LEVEL_4;
    if (v && *v) {
        char *end;
        long long l = strtoll(v, &end, 10);
        if (*end || !valid_level(l))
            config_warn("DELEGO_NNAPI_TEST_FEATURE_LEVEL", v);
        else
            runtime_level = l;
    }
    if (runtime_level > DELEGO_NNAPI_TEST_API) runtime_level = DELEGO_NNAPI_TEST_API;
    ndevices = 0;
    v = getenv("DELEGO_NNAPI_TEST_DEVICES");
    if (v && *v) parse_devices(v);
    if (ndevices == 0) {
        add_device("delego-test-npu", ANEURALNETWORKS_DEVICE_ACCELERATOR, runtime_level, "delego-test-1");
        add_device("nnapi-reference", ANEURALNETWORKS_DEVICE_CPU, runtime_level, "delego-test-1");
    }
    nfails = 0;
    v = getenv("DELEGO_NNAPI_TEST_FAIL");
    if (v && *v) parse_fails(v);
    v = getenv("DELEGO_NNAPI_TEST_LOG");
    snprintf(log_path, sizeof log_path, "%s", v ? v : "");
    configured = true;
}

/* enter takes the lock every API call runs under and reads the
 * configuration on first use. */
static void enter(void) {
    pthread_mutex_lock(&lock);
    if (!configured) load_config();
}

/* injected returns the code DELEGO_NNAPI_TEST_FAIL gives fn, or 0. */
static int injected(const char *fn) {
    for (int i = 0; i < nfails; i++)
        if (strcmp(fails[i].name, fn) == 0)
            return tr_fail(fails[i].code, "%s failed with ANEURALNETWORKS_%s because DELEGO_NNAPI_TEST_FAIL says so",
                           fn, tr_code_name(fails[i].code));
    return 0;
}

/* leave appends the call's log line and releases the lock. */
static void leave(const char *fn, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void leave(const char *fn, int rc, const char *fmt, ...) {
    if (log_path[0]) {
        FILE *f = fopen(log_path, "a");
        if (f) {
            va_list ap;
            va_start(ap, fmt);
            fprintf(f, "%s", fn);
            if (fmt[0]) {
                fputc(' ', f);
                vfprintf(f, fmt, ap);
            }
            va_end(ap);
            if (rc >= 0) fprintf(f, " -> %s", tr_code_name(rc));
            fputc('\n', f);
            fclose(f);
        }
    }
    pthread_mutex_unlock(&lock);
}

/* fmt_dims prints dims as [a,b,c] into buf. */
static const char *fmt_dims(char *buf, size_t n, const uint32_t *dims, uint32_t rank) {
    size_t at = (size_t)snprintf(buf, n, "[");
    for (uint32_t i = 0; i < rank && at < n; i++) at += (size_t)snprintf(buf + at, n - at, i ? ",%u" : "%u", dims[i]);
    if (at < n) snprintf(buf + at, n - at, "]");
    return buf;
}

/* ---- test-only functions -------------------------------------------------------------------- */

const char *DelegoNnapiTest_lastError(void) { return last_error; }

int DelegoNnapiTest_reload(void) {
    pthread_mutex_lock(&lock);
    load_config();
    pthread_mutex_unlock(&lock);
    return ANEURALNETWORKS_NO_ERROR;
}

/* The Android API level the runtime pretends to be. */
int32_t DelegoNnapiTest_apiLevel(void) {
    enter();
    int64_t l = runtime_level;
    pthread_mutex_unlock(&lock);
    if (l <= 31) return (int32_t)l;
    return (int32_t)(l - ANEURALNETWORKS_FEATURE_LEVEL_6 + 33); /* FL6: Android 13 (33), FL7: 34, FL8: 35 */
}

/* ---- memory ----------------------------------------------------------------------------------- */

static void memory_release(ANeuralNetworksMemory *m) {
    if (m && --m->refs == 0) {
        munmap(m->map_base, m->map_len);
        free(m);
    }
}

static int memory_create(size_t size, int protect, int fd, size_t offset, ANeuralNetworksMemory **memory) {
    if (!memory) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "memory is NULL");
    *memory = NULL;
    if (size == 0) return tr_fail(ANEURALNETWORKS_BAD_DATA, "createFromFd: size 0");
    if (fd < 0) return tr_fail(ANEURALNETWORKS_BAD_DATA, "createFromFd: bad file descriptor %d", fd);
    size_t page = (size_t)sysconf(_SC_PAGESIZE), skip = offset % page;
    void *p = mmap(NULL, size + skip, protect, MAP_SHARED, fd, (off_t)(offset - skip));
    if (p == MAP_FAILED)
        return tr_fail(ANEURALNETWORKS_UNMAPPABLE, "createFromFd: mmap of %zu bytes at %zu failed: %s", size, offset,
                       strerror(errno));
    ANeuralNetworksMemory *m = calloc(1, sizeof *m);
    if (!m) {
        munmap(p, size + skip);
        return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    }
    m->id = ++next_id;
    m->map_base = p;
    m->map_len = size + skip;
    m->data = (uint8_t *)p + skip;
    m->size = size;
    m->refs = 1;
    *memory = m;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksMemory_createFromFd(size_t size, int protect, int fd, size_t offset,
                                       ANeuralNetworksMemory **memory) {
    enter();
    int rc = injected(__func__);
    if (rc && memory) *memory = NULL;
    if (!rc) rc = memory_create(size, protect, fd, offset, memory);
    leave(__func__, rc, "memory=%d size=%zu protect=%d offset=%zu", rc ? 0 : (*memory)->id, size, protect, offset);
    return rc;
}

void ANeuralNetworksMemory_free(ANeuralNetworksMemory *memory) {
    enter();
    int id = memory ? memory->id : 0;
    memory_release(memory);
    leave(__func__, -1, "memory=%d", id);
}

/* ---- model ---------------------------------------------------------------------------------- */

static void model_release(ANeuralNetworksModel *m) {
    if (!m || --m->refs > 0) return;
    for (uint32_t i = 0; i < m->nopd; i++) {
        free(m->opd[i].owned);
        free(m->opd[i].scales);
        memory_release(m->opd[i].mem);
    }
    for (uint32_t i = 0; i < m->nops; i++) free(m->ops[i].in), free(m->ops[i].out);
    free(m->opd), free(m->ops), free(m->inputs), free(m->outputs), free(m->order), free(m);
}

static int model_usable(const ANeuralNetworksModel *m, const char *what) {
    if (!m) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: model is NULL", what);
    if (m->finished) return tr_fail(ANEURALNETWORKS_BAD_STATE, "%s: the model is already finished", what);
    return ANEURALNETWORKS_NO_ERROR;
}

static int operand_index(const ANeuralNetworksModel *m, int32_t index, const char *what) {
    if (index < 0 || (uint32_t)index >= m->nopd)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: operand index %d out of range (model has %u operands)", what,
                       index, m->nopd);
    return ANEURALNETWORKS_NO_ERROR;
}

/* check_quant checks the scale and zero point each operand type allows. */
static int check_quant(const ANeuralNetworksOperandType *t) {
    float s = t->scale;
    int32_t z = t->zeroPoint;
    const char *name = tr_type_name(t->type);
    switch (t->type) {
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM:
        if (!(s > 0) || z < 0 || z > 255)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s needs scale > 0 and zero point in 0..255, got %g and %d", name,
                           s, z);
        return 0;
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED:
        if (!(s > 0) || z < -128 || z > 127)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s needs scale > 0 and zero point in -128..127, got %g and %d",
                           name, s, z);
        return 0;
    case ANEURALNETWORKS_TENSOR_QUANT16_ASYMM:
        if (!(s > 0) || z < 0 || z > 65535)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s needs scale > 0 and zero point in 0..65535, got %g and %d",
                           name, s, z);
        return 0;
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM:
    case ANEURALNETWORKS_TENSOR_QUANT16_SYMM:
        if (!(s > 0) || z != 0)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s needs scale > 0 and zero point 0, got %g and %d", name, s, z);
        return 0;
    case ANEURALNETWORKS_TENSOR_INT32:
        /* A bias carries a scale; its zero point is checked per operation. */
        if (!(s >= 0)) return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s needs scale >= 0, got %g", name, s);
        return 0;
    }
    /* Per-channel tensors take their scales from
     * setOperandSymmPerChannelQuantParams; other types have none. */
    if (s != 0 || z != 0)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s needs scale 0 and zero point 0, got %g and %d", name, s, z);
    return 0;
}

static int model_add_operand(ANeuralNetworksModel *m, const ANeuralNetworksOperandType *t) {
    TRY(model_usable(m, "addOperand"));
    if (!t) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "addOperand: type is NULL");
    int64_t level = tr_level_of_type(t->type);
    if (level < 0) return tr_fail(ANEURALNETWORKS_BAD_DATA, "addOperand: unknown operand type %d", t->type);
    if (level > runtime_level)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "addOperand: operand type %s needs NNAPI feature level %lld; the "
                       "runtime has %lld", tr_type_name(t->type), (long long)level, (long long)runtime_level);
    if (t->type == ANEURALNETWORKS_MODEL)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "addOperand: the test runtime has no control flow (MODEL operands)");
    if (!tr_is_tensor_type(t->type) && (t->dimensionCount != 0 || t->dimensions))
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "addOperand: scalar %s with %u dimensions", tr_type_name(t->type),
                       t->dimensionCount);
    if (t->dimensionCount > TR_MAX_RANK)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "addOperand: rank %u above the test runtime's %d", t->dimensionCount,
                       TR_MAX_RANK);
    if (t->dimensionCount && !t->dimensions)
        return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "addOperand: %u dimensions but dimensions is NULL",
                       t->dimensionCount);
    bool unknown = tr_is_tensor_type(t->type) && t->dimensionCount == 0;
    for (uint32_t i = 0; i < t->dimensionCount; i++) unknown = unknown || t->dimensions[i] == 0;
    if (unknown && runtime_level < ANEURALNETWORKS_FEATURE_LEVEL_3)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "addOperand: a tensor of unknown rank or dimension needs NNAPI "
                       "feature level 29; the runtime has %lld", (long long)runtime_level);
    TRY(check_quant(t));
    if (m->nopd == m->capopd) {
        uint32_t cap = m->capopd ? 2 * m->capopd : 16;
        tr_operand *p = realloc(m->opd, cap * sizeof *p);
        if (!p) return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
        m->opd = p, m->capopd = cap;
    }
    tr_operand *o = &m->opd[m->nopd++];
    memset(o, 0, sizeof *o);
    o->type = t->type;
    o->rank = t->dimensionCount;
    if (o->rank) memcpy(o->dims, t->dimensions, o->rank * sizeof o->dims[0]);
    o->scale = t->scale;
    o->zero_point = t->zeroPoint;
    o->lifetime = TR_TEMP;
    return ANEURALNETWORKS_NO_ERROR;
}

/* operand_bytes is the byte size of a fully specified operand, or 0. */
static size_t operand_bytes(const tr_operand *o) {
    if (tr_is_tensor_type(o->type) && o->rank == 0) return 0;
    return tr_elems(o->dims, o->rank) * tr_type_size(o->type);
}

static void clear_value(tr_operand *o) {
    free(o->owned);
    o->owned = NULL;
    memory_release(o->mem);
    o->mem = NULL;
    o->value = NULL;
    o->length = 0;
    o->value_set = false;
    if (o->lifetime == TR_CONST || o->lifetime == TR_NO_VALUE) o->lifetime = TR_TEMP;
}

static int settable(ANeuralNetworksModel *m, int32_t index, size_t length, const char *what) {
    TRY(model_usable(m, what));
    TRY(operand_index(m, index, what));
    tr_operand *o = &m->opd[index];
    if (o->lifetime == TR_INPUT || o->lifetime == TR_OUTPUT)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: operand %d is a model input or output", what, index);
    size_t want = operand_bytes(o);
    if (length != want)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: operand %d (%s) needs %zu bytes, got %zu", what, index,
                       tr_type_name(o->type), want, length);
    return ANEURALNETWORKS_NO_ERROR;
}

static int model_set_value(ANeuralNetworksModel *m, int32_t index, const void *buffer, size_t length) {
    if (!buffer && length) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setOperandValue: buffer is NULL");
    if (!buffer) { /* an omitted optional operand */
        TRY(model_usable(m, "setOperandValue"));
        TRY(operand_index(m, index, "setOperandValue"));
        clear_value(&m->opd[index]);
        m->opd[index].lifetime = TR_NO_VALUE;
        m->opd[index].value_set = true;
        return ANEURALNETWORKS_NO_ERROR;
    }
    TRY(settable(m, index, length, "setOperandValue"));
    tr_operand *o = &m->opd[index];
    clear_value(o);
    if (length <= ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES) {
        o->owned = malloc(length);
        if (!o->owned) return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
        memcpy(o->owned, buffer, length);
        o->value = o->owned;
    } else {
        /* As NNAPI specifies: a larger value is referenced, not copied; the
         * caller keeps it unchanged while the model is in use. */
        o->value = buffer;
    }
    o->length = length;
    o->lifetime = TR_CONST;
    o->value_set = true;
    return ANEURALNETWORKS_NO_ERROR;
}

static int model_set_value_memory(ANeuralNetworksModel *m, int32_t index, const ANeuralNetworksMemory *mem,
                                  size_t offset, size_t length) {
    if (!mem) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setOperandValueFromMemory: memory is NULL");
    TRY(settable(m, index, length, "setOperandValueFromMemory"));
    if (offset > mem->size || length > mem->size - offset)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "setOperandValueFromMemory: %zu bytes at offset %zu exceed the "
                       "memory's %zu bytes", length, offset, mem->size);
    tr_operand *o = &m->opd[index];
    clear_value(o);
    o->mem = (ANeuralNetworksMemory *)mem;
    o->mem->refs++;
    o->value = mem->data + offset;
    o->length = length;
    o->lifetime = TR_CONST;
    o->value_set = true;
    return ANEURALNETWORKS_NO_ERROR;
}

TR_MAYBE_UNUSED static int model_set_channel_quant(ANeuralNetworksModel *m, int32_t index,
                                   const ANeuralNetworksSymmPerChannelQuantParams *q) {
    const char *what = "setOperandSymmPerChannelQuantParams";
    TRY(model_usable(m, what));
    if (!q) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: channelQuant is NULL", what);
    TRY(operand_index(m, index, what));
    tr_operand *o = &m->opd[index];
    if (o->type != ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: operand %d has type %s, not TENSOR_QUANT8_SYMM_PER_CHANNEL", what,
                       index, tr_type_name(o->type));
    if (q->channelDim >= o->rank)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: channelDim %u but operand %d has rank %u", what, q->channelDim,
                       index, o->rank);
    if (q->scaleCount != o->dims[q->channelDim])
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %u scales for dimension %u of size %u", what, q->scaleCount,
                       q->channelDim, o->dims[q->channelDim]);
    if (!q->scales) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: scales is NULL", what);
    for (uint32_t i = 0; i < q->scaleCount; i++)
        if (!(q->scales[i] > 0))
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: scale %u is %g, want > 0", what, i, q->scales[i]);
    float *s = malloc(q->scaleCount * sizeof *s);
    if (!s) return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    memcpy(s, q->scales, q->scaleCount * sizeof *s);
    free(o->scales);
    o->scales = s;
    o->scale_count = q->scaleCount;
    o->channel_dim = q->channelDim;
    o->has_channel_quant = true;
    return ANEURALNETWORKS_NO_ERROR;
}

static int check_indices(const ANeuralNetworksModel *m, uint32_t n, const uint32_t *idx, const char *what) {
    if (n && !idx) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: index list is NULL", what);
    for (uint32_t i = 0; i < n; i++)
        if (idx[i] >= m->nopd)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: operand index %u out of range (model has %u operands)", what,
                           idx[i], m->nopd);
    return ANEURALNETWORKS_NO_ERROR;
}

static uint32_t *dup_indices(uint32_t n, const uint32_t *idx) {
    uint32_t *p = malloc((n ? n : 1) * sizeof *p);
    if (p && n) memcpy(p, idx, n * sizeof *p);
    return p;
}

static int model_add_operation(ANeuralNetworksModel *m, int32_t type, uint32_t nin, const uint32_t *in, uint32_t nout,
                               const uint32_t *out) {
    TRY(model_usable(m, "addOperation"));
    TRY(check_indices(m, nin, in, "addOperation inputs"));
    TRY(check_indices(m, nout, out, "addOperation outputs"));
    for (uint32_t i = 0; i < nout; i++) {
        const tr_operand *o = &m->opd[out[i]];
        if (o->lifetime == TR_CONST || o->lifetime == TR_NO_VALUE || o->lifetime == TR_INPUT)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "addOperation %s: output operand %u has a value or is a model "
                           "input", tr_op_name(type), out[i]);
    }
    tr_operation op = {.type = type, .nin = nin, .nout = nout, .in = (uint32_t *)in, .out = (uint32_t *)out};
    TRY(tr_op_check(m, &op, false, runtime_level));
    if (m->nops == m->capops) {
        uint32_t cap = m->capops ? 2 * m->capops : 16;
        tr_operation *p = realloc(m->ops, cap * sizeof *p);
        if (!p) return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
        m->ops = p, m->capops = cap;
    }
    op.in = dup_indices(nin, in);
    op.out = dup_indices(nout, out);
    if (!op.in || !op.out) {
        free(op.in), free(op.out);
        return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    }
    m->ops[m->nops++] = op;
    return ANEURALNETWORKS_NO_ERROR;
}

static int model_identify(ANeuralNetworksModel *m, uint32_t nin, const uint32_t *in, uint32_t nout,
                          const uint32_t *out) {
    TRY(model_usable(m, "identifyInputsAndOutputs"));
    TRY(check_indices(m, nin, in, "identifyInputsAndOutputs inputs"));
    TRY(check_indices(m, nout, out, "identifyInputsAndOutputs outputs"));
    for (uint32_t i = 0; i < nin + nout; i++) {
        uint32_t k = i < nin ? in[i] : out[i - nin];
        int lt = m->opd[k].lifetime;
        if (lt == TR_CONST || lt == TR_NO_VALUE)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "identifyInputsAndOutputs: operand %u has a constant value", k);
    }
    for (uint32_t i = 0; i < m->nopd; i++)
        if (m->opd[i].lifetime == TR_INPUT || m->opd[i].lifetime == TR_OUTPUT) m->opd[i].lifetime = TR_TEMP;
    for (uint32_t i = 0; i < nin; i++) m->opd[in[i]].lifetime = TR_INPUT;
    for (uint32_t i = 0; i < nout; i++) {
        if (m->opd[out[i]].lifetime == TR_INPUT)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "identifyInputsAndOutputs: operand %u is both an input and an "
                           "output", out[i]);
        m->opd[out[i]].lifetime = TR_OUTPUT;
    }
    free(m->inputs), free(m->outputs);
    m->inputs = dup_indices(nin, in);
    m->outputs = dup_indices(nout, out);
    m->nin = nin, m->nout = nout;
    m->io_set = true;
    return ANEURALNETWORKS_NO_ERROR;
}

/* model_sort orders the operations so that each runs after the producers of
 * its inputs, and checks that every operand read has a value or a producer. */
static int model_sort(ANeuralNetworksModel *m) {
    int32_t *producer = malloc((m->nopd ? m->nopd : 1) * sizeof *producer);
    uint32_t *order = malloc((m->nops ? m->nops : 1) * sizeof *order);
    bool *done = calloc(m->nops ? m->nops : 1, sizeof *done);
    bool *ready = calloc(m->nopd ? m->nopd : 1, sizeof *ready);
    int rc = ANEURALNETWORKS_NO_ERROR;
    if (!producer || !order || !done || !ready) {
        rc = tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < m->nopd; i++) {
        producer[i] = -1;
        ready[i] = m->opd[i].lifetime == TR_INPUT || m->opd[i].lifetime == TR_CONST ||
                   m->opd[i].lifetime == TR_NO_VALUE;
    }
    for (uint32_t k = 0; k < m->nops; k++)
        for (uint32_t j = 0; j < m->ops[k].nout; j++) {
            uint32_t o = m->ops[k].out[j];
            if (producer[o] >= 0 || ready[o]) {
                rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "finish: operand %u is written by operation %u (%s) and also "
                             "by another operation, or is an input or constant", o, k, tr_op_name(m->ops[k].type));
                goto out;
            }
            producer[o] = (int32_t)k;
        }
    for (uint32_t i = 0; i < m->nout; i++)
        if (producer[m->outputs[i]] < 0) {
            rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "finish: model output %u (operand %u) is written by no operation",
                         i, m->outputs[i]);
            goto out;
        }
    for (uint32_t k = 0; k < m->nops; k++)
        for (uint32_t j = 0; j < m->ops[k].nin; j++) {
            uint32_t o = m->ops[k].in[j];
            if (!ready[o] && producer[o] < 0) {
                rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "finish: operation %u (%s) reads operand %u, which has no "
                             "value, is no model input and is written by no operation", k, tr_op_name(m->ops[k].type), o);
                goto out;
            }
        }
    for (uint32_t n = 0; n < m->nops;) {
        bool progress = false;
        for (uint32_t k = 0; k < m->nops; k++) {
            if (done[k]) continue;
            bool can = true;
            for (uint32_t j = 0; j < m->ops[k].nin && can; j++) can = ready[m->ops[k].in[j]];
            if (!can) continue;
            done[k] = progress = true;
            order[n++] = k;
            for (uint32_t j = 0; j < m->ops[k].nout; j++) ready[m->ops[k].out[j]] = true;
        }
        if (!progress) {
            rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "finish: the operations form a cycle");
            goto out;
        }
    }
    free(m->order);
    m->order = order;
    order = NULL;
out:
    free(producer), free(order), free(done), free(ready);
    return rc;
}

static int model_finish(ANeuralNetworksModel *m) {
    TRY(model_usable(m, "finish"));
    if (!m->io_set) return tr_fail(ANEURALNETWORKS_BAD_DATA, "finish: identifyInputsAndOutputs was not called");
    for (uint32_t i = 0; i < m->nopd; i++)
        if (m->opd[i].type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL && !m->opd[i].has_channel_quant)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "finish: per-channel operand %u has no "
                           "setOperandSymmPerChannelQuantParams", i);
    for (uint32_t k = 0; k < m->nops; k++) {
        int rc = tr_op_check(m, &m->ops[k], true, runtime_level);
        if (rc) {
            char why[sizeof last_error];
            snprintf(why, sizeof why, "%s", last_error);
            return tr_fail(rc, "finish: operation %u: %s", k, why);
        }
    }
    TRY(model_sort(m));
    m->finished = true;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_create(ANeuralNetworksModel **model) {
    enter();
    int rc = injected(__func__);
    if (!model) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Model_create: model is NULL");
    if (rc && model) *model = NULL;
    if (!rc) {
        *model = calloc(1, sizeof **model);
        if (!*model)
            rc = tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
        else
            (*model)->id = ++next_id, (*model)->refs = 1;
    }
    leave(__func__, rc, "model=%d", rc ? 0 : (*model)->id);
    return rc;
}

void ANeuralNetworksModel_free(ANeuralNetworksModel *model) {
    enter();
    int id = model ? model->id : 0;
    model_release(model);
    leave(__func__, -1, "model=%d", id);
}

int ANeuralNetworksModel_addOperand(ANeuralNetworksModel *model, const ANeuralNetworksOperandType *type) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = model_add_operand(model, type);
    char dims[128] = "[]";
    if (type && type->dimensions) fmt_dims(dims, sizeof dims, type->dimensions, type->dimensionCount);
    leave(__func__, rc, "model=%d index=%d type=%s dims=%s scale=%g zeroPoint=%d", model ? model->id : 0,
          model && !rc ? (int)model->nopd - 1 : -1, type ? tr_type_name(type->type) : "NULL", dims,
          type ? type->scale : 0, type ? type->zeroPoint : 0);
    return rc;
}

int ANeuralNetworksModel_setOperandValue(ANeuralNetworksModel *model, int32_t index, const void *buffer,
                                         size_t length) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = model_set_value(model, index, buffer, length);
    leave(__func__, rc, "model=%d index=%d length=%zu%s", model ? model->id : 0, index, length,
          !buffer ? " omitted" : length > ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES ? " referenced" : "");
    return rc;
}

int ANeuralNetworksModel_setOperandValueFromMemory(ANeuralNetworksModel *model, int32_t index,
                                                   const ANeuralNetworksMemory *memory, size_t offset, size_t length) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = model_set_value_memory(model, index, memory, offset, length);
    leave(__func__, rc, "model=%d index=%d memory=%d offset=%zu length=%zu", model ? model->id : 0, index,
          memory ? memory->id : 0, offset, length);
    return rc;
}

int ANeuralNetworksModel_addOperation(ANeuralNetworksModel *model, ANeuralNetworksOperationType type,
                                      uint32_t inputCount, const uint32_t *inputs, uint32_t outputCount,
                                      const uint32_t *outputs) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = model_add_operation(model, type, inputCount, inputs, outputCount, outputs);
    char ins[256] = "[]", outs[128] = "[]";
    if (inputs) fmt_dims(ins, sizeof ins, inputs, inputCount);
    if (outputs) fmt_dims(outs, sizeof outs, outputs, outputCount);
    leave(__func__, rc, "model=%d type=%s inputs=%s outputs=%s", model ? model->id : 0, tr_op_name(type), ins, outs);
    return rc;
}

int ANeuralNetworksModel_identifyInputsAndOutputs(ANeuralNetworksModel *model, uint32_t inputCount,
                                                  const uint32_t *inputs, uint32_t outputCount,
                                                  const uint32_t *outputs) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = model_identify(model, inputCount, inputs, outputCount, outputs);
    char ins[256] = "[]", outs[256] = "[]";
    if (inputs) fmt_dims(ins, sizeof ins, inputs, inputCount);
    if (outputs) fmt_dims(outs, sizeof outs, outputs, outputCount);
    leave(__func__, rc, "model=%d inputs=%s outputs=%s", model ? model->id : 0, ins, outs);
    return rc;
}

int ANeuralNetworksModel_finish(ANeuralNetworksModel *model) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = model_finish(model);
    leave(__func__, rc, "model=%d operands=%u operations=%u", model ? model->id : 0, model ? model->nopd : 0,
          model ? model->nops : 0);
    return rc;
}

#if DELEGO_NNAPI_TEST_API >= 28
int ANeuralNetworksModel_relaxComputationFloat32toFloat16(ANeuralNetworksModel *model, bool allow) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = model_usable(model, "relaxComputationFloat32toFloat16");
    if (!rc) model->relaxed = allow; /* computed in float32 anyway, which NNAPI allows */
    leave(__func__, rc, "model=%d allow=%d", model ? model->id : 0, allow);
    return rc;
}
#endif

/* ---- devices -------------------------------------------------------------------------------- */

static int device_index(const ANeuralNetworksDevice *d) {
    for (uint32_t i = 0; i < ndevices; i++)
        if (d == &devices[i]) return (int)i;
    return -1;
}

TR_MAYBE_UNUSED static int check_devices(const ANeuralNetworksDevice *const *devs, uint32_t n, const char *what) {
    if (!devs) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: devices is NULL", what);
    if (n == 0) return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: no devices", what);
    if (n > MAX_DEVICES) return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %u devices", what, n);
    for (uint32_t i = 0; i < n; i++)
        if (device_index(devs[i]) < 0)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: device %u is not one of ANeuralNetworks_getDevice", what, i);
    return ANEURALNETWORKS_NO_ERROR;
}

TR_MAYBE_UNUSED static void fmt_devices(char *buf, size_t n, const ANeuralNetworksDevice *const *devs, uint32_t count) {
    size_t at = (size_t)snprintf(buf, n, "[");
    for (uint32_t i = 0; i < count && at < n && devs; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? "," : "",
                               device_index(devs[i]) >= 0 ? devs[i]->name : "?");
    if (at < n) snprintf(buf + at, n - at, "]");
}

/* op_device_support says whether any of devs can run op; if not, why. */
static bool op_device_support(const tr_operation *op, const ANeuralNetworksDevice *const *devs, uint32_t n,
                              char *why, size_t whylen) {
    if (!op->computable) {
        snprintf(why, whylen, "%s", op->why_not);
        return false;
    }
    int64_t best = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (devs[i]->level >= op->need_level) return true;
        if (devs[i]->level > best) best = devs[i]->level;
    }
    snprintf(why, whylen, "%s needs NNAPI feature level %lld; device \"%s\" has %lld", tr_op_name(op->type),
             (long long)op->need_level, n == 1 ? devs[0]->name : "(best of those given)", (long long)best);
    return false;
}

#if DELEGO_NNAPI_TEST_API >= 29
int ANeuralNetworks_getDeviceCount(uint32_t *numDevices) {
    enter();
    int rc = injected(__func__);
    if (!rc && !numDevices) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "getDeviceCount: numDevices is NULL");
    if (!rc) *numDevices = ndevices;
    leave(__func__, rc, "count=%u", ndevices);
    return rc;
}

int ANeuralNetworks_getDevice(uint32_t devIndex, ANeuralNetworksDevice **device) {
    enter();
    int rc = injected(__func__);
    if (!rc && !device) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "getDevice: device is NULL");
    if (!rc && devIndex >= ndevices)
        rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "getDevice: index %u of %u devices", devIndex, ndevices);
    if (!rc) *device = &devices[devIndex];
    leave(__func__, rc, "index=%u name=%s", devIndex, rc ? "" : devices[devIndex].name);
    return rc;
}

/* device_get runs the body of the four Device_get* functions. */
static int device_check(const ANeuralNetworksDevice *d, const void *out, const char *fn) {
    int rc = injected(fn);
    if (rc) return rc;
    if (!d || !out) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: NULL argument", fn);
    if (device_index(d) < 0) return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: not a device of this runtime", fn);
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getName(const ANeuralNetworksDevice *device, const char **name) {
    enter();
    int rc = device_check(device, name, __func__);
    if (!rc) *name = device->name;
    leave(__func__, rc, "name=%s", rc ? "" : device->name);
    return rc;
}

int ANeuralNetworksDevice_getType(const ANeuralNetworksDevice *device, int32_t *type) {
    enter();
    int rc = device_check(device, type, __func__);
    if (!rc) *type = device->type;
    leave(__func__, rc, "name=%s type=%d", rc ? "" : device->name, rc ? 0 : device->type);
    return rc;
}

int ANeuralNetworksDevice_getVersion(const ANeuralNetworksDevice *device, const char **version) {
    enter();
    int rc = device_check(device, version, __func__);
    if (!rc) *version = device->version;
    leave(__func__, rc, "name=%s version=%s", rc ? "" : device->name, rc ? "" : device->version);
    return rc;
}

int ANeuralNetworksDevice_getFeatureLevel(const ANeuralNetworksDevice *device, int64_t *featureLevel) {
    enter();
    int rc = device_check(device, featureLevel, __func__);
    if (!rc) *featureLevel = device->level;
    leave(__func__, rc, "name=%s level=%lld", rc ? "" : device->name, rc ? 0LL : (long long)device->level);
    return rc;
}

int ANeuralNetworksModel_getSupportedOperationsForDevices(const ANeuralNetworksModel *model,
                                                          const ANeuralNetworksDevice *const *devs,
                                                          uint32_t numDevices, bool *supportedOps) {
    enter();
    const char *fn = __func__;
    int rc = injected(fn);
    if (!rc && (!model || !supportedOps)) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: NULL argument", fn);
    if (!rc) rc = check_devices(devs, numDevices, fn);
    if (!rc && !model->finished) rc = tr_fail(ANEURALNETWORKS_BAD_STATE, "%s: the model is not finished", fn);
    char list[512] = "[", why[160], names[256] = "[]";
    size_t at = 1;
    for (uint32_t k = 0; !rc && k < model->nops; k++) {
        supportedOps[k] = op_device_support(&model->ops[k], devs, numDevices, why, sizeof why);
        if (at < sizeof list) at += (size_t)snprintf(list + at, sizeof list - at, k ? ",%d" : "%d", supportedOps[k]);
    }
    if (at < sizeof list) snprintf(list + at, sizeof list - at, "]");
    fmt_devices(names, sizeof names, rc ? NULL : devs, numDevices);
    leave(fn, rc, "model=%d devices=%s supported=%s", model ? model->id : 0, names, rc ? "[]" : list);
    return rc;
}

int ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(ANeuralNetworksModel *model, int32_t index,
                                                             const ANeuralNetworksSymmPerChannelQuantParams *q) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = model_set_channel_quant(model, index, q);
    leave(__func__, rc, "model=%d index=%d channelDim=%u scaleCount=%u", model ? model->id : 0, index,
          q ? q->channelDim : 0, q ? q->scaleCount : 0);
    return rc;
}
#endif

#if DELEGO_NNAPI_TEST_API >= 30
int ANeuralNetworksDevice_wait(const ANeuralNetworksDevice *device) {
    enter();
    int rc = injected(__func__);
    if (!rc && !device) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Device_wait: device is NULL");
    if (!rc && device_index(device) < 0) rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "Device_wait: not a device");
    leave(__func__, rc, "name=%s", rc ? "" : device->name);
    return rc;
}
#endif

#if DELEGO_NNAPI_TEST_API >= 31
int64_t ANeuralNetworks_getRuntimeFeatureLevel(void) {
    enter();
    int64_t l = runtime_level;
    leave(__func__, -1, "level=%lld", (long long)l);
    return l;
}
#endif

/* ---- running a model ----------------------------------------------------------------------- */

/* run_init gives every operand its tensor: declared shape and quantization,
 * and the bytes of constants. */
static tr_tensor *run_init(const ANeuralNetworksModel *m) {
    tr_tensor *t = calloc(m->nopd ? m->nopd : 1, sizeof *t);
    if (!t) return NULL;
    for (uint32_t i = 0; i < m->nopd; i++) {
        const tr_operand *o = &m->opd[i];
        t[i].type = o->type;
        t[i].rank = o->rank;
        memcpy(t[i].dims, o->dims, sizeof t[i].dims);
        t[i].scale = o->scale;
        t[i].zero_point = o->zero_point;
        t[i].scales = o->scales;
        t[i].scale_count = o->scale_count;
        t[i].channel_dim = o->channel_dim;
        t[i].omitted = o->lifetime == TR_NO_VALUE;
        if (o->lifetime == TR_CONST) {
            t[i].data = (void *)o->value;
            t[i].bytes = o->length;
        }
    }
    return t;
}

/* run_ops prepares and (unless compile_only) computes every operation in
 * order, allocating temporaries; the caller frees them with run_free. */
static int run_ops(tr_run *r) {
    const ANeuralNetworksModel *m = r->model;
    for (uint32_t n = 0; n < m->nops; n++) {
        const tr_operation *op = &m->ops[m->order[n]];
        int rc = tr_op_prepare(r, op);
        if (rc) {
            char why[sizeof last_error];
            snprintf(why, sizeof why, "%s", last_error);
            return tr_fail(rc, "operation %u: %s", m->order[n], why);
        }
        if (r->compile_only) continue;
        for (uint32_t j = 0; j < op->nout; j++) {
            tr_tensor *t = &r->t[op->out[j]];
            size_t bytes = tr_elems(t->dims, t->rank) * tr_type_size(t->type);
            if (m->opd[op->out[j]].lifetime == TR_OUTPUT) {
                if (t->bytes < bytes)
                    return tr_fail(ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE, "output operand %u needs %zu bytes, the "
                                   "buffer has %zu", op->out[j], bytes, t->bytes);
                continue;
            }
            t->data = calloc(bytes ? bytes : 1, 1);
            if (!t->data) return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
            t->bytes = bytes;
        }
        rc = tr_op_eval(r, op);
        if (rc) {
            char why[sizeof last_error];
            snprintf(why, sizeof why, "%s", last_error);
            return tr_fail(rc, "operation %u: %s", m->order[n], why);
        }
    }
    return ANEURALNETWORKS_NO_ERROR;
}

static void run_free(tr_run *r) {
    for (uint32_t i = 0; i < r->model->nopd; i++)
        if (r->model->opd[i].lifetime == TR_TEMP) free(r->t[i].data);
    free(r->t);
}

/* ---- compilation ------------------------------------------------------------------------------ */

static void compilation_release(ANeuralNetworksCompilation *c) {
    if (!c || --c->refs > 0) return;
    model_release(c->model);
    free(c);
}

static int compilation_new(ANeuralNetworksModel *m, const ANeuralNetworksDevice *const *devs, uint32_t n,
                           ANeuralNetworksCompilation **out) {
    if (!m || !out) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Compilation_create: NULL argument");
    *out = NULL;
    if (!m->finished) return tr_fail(ANEURALNETWORKS_BAD_STATE, "Compilation_create: the model is not finished");
    ANeuralNetworksCompilation *c = calloc(1, sizeof *c);
    if (!c) return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    c->id = ++next_id;
    c->refs = 1;
    c->model = m;
    m->refs++;
    c->preference = ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER;
    c->priority = ANEURALNETWORKS_PRIORITY_DEFAULT;
    if (devs) {
        memcpy(c->devices, devs, n * sizeof devs[0]);
        c->ndevices = n;
        c->for_devices = true;
    } else {
        for (uint32_t i = 0; i < ndevices; i++) c->devices[i] = &devices[i];
        c->ndevices = ndevices;
    }
    *out = c;
    return ANEURALNETWORKS_NO_ERROR;
}

static int compilation_settable(const ANeuralNetworksCompilation *c, const char *what) {
    if (!c) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: compilation is NULL", what);
    if (c->finished) return tr_fail(ANEURALNETWORKS_BAD_STATE, "%s: the compilation is already finished", what);
    return ANEURALNETWORKS_NO_ERROR;
}

/* single_device checks what setTimeout and setMeasureTiming require. */
TR_MAYBE_UNUSED static int single_device(const ANeuralNetworksCompilation *c, const char *what) {
    if (!c->for_devices || c->ndevices != 1)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: allowed only on a compilation made by createForDevices with one "
                       "device", what);
    return ANEURALNETWORKS_NO_ERROR;
}

static void token_hex(char *buf, const uint8_t *token) {
    for (int i = 0; i < ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN; i++) sprintf(buf + 2 * i, "%02x", token[i]);
}

/* write_cache leaves a file in the cache directory, as a driver would, so
 * tests can see that caching reached the runtime; failures are ignored as
 * NNAPI ignores them. */
static void write_cache(const ANeuralNetworksCompilation *c) {
    char hex[2 * ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN + 1], path[1024];
    token_hex(hex, c->token);
    snprintf(path, sizeof path, "%s/delego-nnapi-test-%s.cache", c->cache_dir, hex);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "operations=%u\n", c->model->nops);
    fclose(f);
}

static int compilation_finish(ANeuralNetworksCompilation *c) {
    TRY(compilation_settable(c, "Compilation_finish"));
    const ANeuralNetworksModel *m = c->model;
    char why[160];
    for (uint32_t k = 0; k < m->nops; k++)
        if (!op_device_support(&m->ops[k], c->devices, c->ndevices, why, sizeof why))
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "Compilation_finish: no device of the compilation runs operation "
                           "%u: %s", k, why);
    /* Check shapes and parameters now where the model's inputs have known shapes. */
    bool known = true;
    for (uint32_t i = 0; i < m->nin; i++) {
        const tr_operand *o = &m->opd[m->inputs[i]];
        known = known && o->rank > 0 && tr_elems(o->dims, o->rank) > 0;
    }
    if (known) {
        tr_run r = {m, run_init(m), true};
        if (!r.t) return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
        int rc = run_ops(&r);
        run_free(&r);
        if (rc) {
            char msg[sizeof last_error];
            snprintf(msg, sizeof msg, "%s", last_error);
            return tr_fail(rc, "Compilation_finish: %s", msg);
        }
    }
    if (c->caching) write_cache(c);
    c->finished = true;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_create(ANeuralNetworksModel *model, ANeuralNetworksCompilation **compilation) {
    enter();
    int rc = injected(__func__);
    if (rc && compilation) *compilation = NULL;
    if (!rc) rc = compilation_new(model, NULL, 0, compilation);
    leave(__func__, rc, "model=%d compilation=%d", model ? model->id : 0, rc ? 0 : (*compilation)->id);
    return rc;
}

void ANeuralNetworksCompilation_free(ANeuralNetworksCompilation *compilation) {
    enter();
    int id = compilation ? compilation->id : 0;
    compilation_release(compilation);
    leave(__func__, -1, "compilation=%d", id);
}

int ANeuralNetworksCompilation_setPreference(ANeuralNetworksCompilation *compilation, int32_t preference) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = compilation_settable(compilation, "setPreference");
    if (!rc && (preference < 0 || preference > 2))
        rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "setPreference: %d is not a PreferenceCode", preference);
    if (!rc) compilation->preference = preference;
    leave(__func__, rc, "compilation=%d preference=%d", compilation ? compilation->id : 0, preference);
    return rc;
}

int ANeuralNetworksCompilation_finish(ANeuralNetworksCompilation *compilation) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = compilation_finish(compilation);
    leave(__func__, rc, "compilation=%d", compilation ? compilation->id : 0);
    return rc;
}

#if DELEGO_NNAPI_TEST_API >= 29
int ANeuralNetworksCompilation_createForDevices(ANeuralNetworksModel *model, const ANeuralNetworksDevice *const *devs,
                                                uint32_t numDevices, ANeuralNetworksCompilation **compilation) {
    enter();
    int rc = injected(__func__);
    if (rc && compilation) *compilation = NULL;
    if (!rc) rc = check_devices(devs, numDevices, "createForDevices");
    if (!rc) rc = compilation_new(model, devs, numDevices, compilation);
    char names[256] = "[]";
    fmt_devices(names, sizeof names, devs, numDevices);
    leave(__func__, rc, "model=%d devices=%s compilation=%d", model ? model->id : 0, names,
          rc ? 0 : (*compilation)->id);
    return rc;
}

int ANeuralNetworksCompilation_setCaching(ANeuralNetworksCompilation *compilation, const char *cacheDir,
                                          const uint8_t *token) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = compilation_settable(compilation, "setCaching");
    if (!rc && (!cacheDir || !token)) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setCaching: NULL argument");
    char hex[2 * ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN + 1] = "";
    if (!rc) {
        snprintf(compilation->cache_dir, sizeof compilation->cache_dir, "%s", cacheDir);
        memcpy(compilation->token, token, sizeof compilation->token);
        compilation->caching = true;
        token_hex(hex, token);
    }
    leave(__func__, rc, "compilation=%d dir=%s token=%s", compilation ? compilation->id : 0, cacheDir ? cacheDir : "",
          hex);
    return rc;
}
#endif

#if DELEGO_NNAPI_TEST_API >= 30
int ANeuralNetworksCompilation_setPriority(ANeuralNetworksCompilation *compilation, int priority) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = compilation_settable(compilation, "setPriority");
    if (!rc && priority != ANEURALNETWORKS_PRIORITY_LOW && priority != ANEURALNETWORKS_PRIORITY_MEDIUM &&
        priority != ANEURALNETWORKS_PRIORITY_HIGH)
        rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "setPriority: %d is not a PriorityCode (90, 100, 110)", priority);
    if (!rc) compilation->priority = priority;
    leave(__func__, rc, "compilation=%d priority=%d", compilation ? compilation->id : 0, priority);
    return rc;
}

int ANeuralNetworksCompilation_setTimeout(ANeuralNetworksCompilation *compilation, uint64_t duration) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = compilation_settable(compilation, "Compilation_setTimeout");
    if (!rc) rc = single_device(compilation, "Compilation_setTimeout");
    if (!rc) compilation->timeout = duration;
    leave(__func__, rc, "compilation=%d duration=%llu", compilation ? compilation->id : 0,
          (unsigned long long)duration);
    return rc;
}
#endif

/* ---- execution ---------------------------------------------------------------------------------- */

static void execution_free(ANeuralNetworksExecution *e) {
    if (!e) return;
    const ANeuralNetworksModel *m = e->comp->model;
    for (uint32_t i = 0; i < m->nin; i++) memory_release(e->in[i].mem);
    for (uint32_t i = 0; i < m->nout; i++) memory_release(e->out[i].mem);
    compilation_release(e->comp);
    free(e->in), free(e->out), free(e->out_dims), free(e);
}

static int execution_new(ANeuralNetworksCompilation *c, ANeuralNetworksExecution **out) {
    if (!c || !out) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_create: NULL argument");
    *out = NULL;
    if (!c->finished) return tr_fail(ANEURALNETWORKS_BAD_STATE, "Execution_create: the compilation is not finished");
    const ANeuralNetworksModel *m = c->model;
    ANeuralNetworksExecution *e = calloc(1, sizeof *e);
    if (e) {
        e->in = calloc(m->nin ? m->nin : 1, sizeof *e->in);
        e->out = calloc(m->nout ? m->nout : 1, sizeof *e->out);
        e->out_dims = calloc(m->nout ? m->nout : 1, sizeof *e->out_dims);
    }
    if (!e || !e->in || !e->out || !e->out_dims) {
        if (e) free(e->in), free(e->out), free(e->out_dims), free(e);
        return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    }
    e->id = ++next_id;
    e->comp = c;
    c->refs++;
    *out = e;
    return ANEURALNETWORKS_NO_ERROR;
}

/* bind checks and records the buffer of model input or output `index`. */
static int bind(ANeuralNetworksExecution *e, bool output, int32_t index, const ANeuralNetworksOperandType *type,
                uint8_t *data, ANeuralNetworksMemory *mem, size_t offset, size_t length) {
    const char *what = output ? "setOutput" : "setInput";
    if (!e) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: execution is NULL", what);
    if (e->started) return tr_fail(ANEURALNETWORKS_BAD_STATE, "%s: the execution has started", what);
    const ANeuralNetworksModel *m = e->comp->model;
    uint32_t n = output ? m->nout : m->nin;
    if (index < 0 || (uint32_t)index >= n)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: index %d of %u model %s", what, index, n,
                       output ? "outputs" : "inputs");
    const tr_operand *o = &m->opd[output ? m->outputs[index] : m->inputs[index]];
    binding b = {.set = true, .data = data, .length = length, .rank = o->rank};
    memcpy(b.dims, o->dims, sizeof b.dims);
    if (type) {
        if (type->type != o->type || type->scale != o->scale || type->zeroPoint != o->zero_point)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: type of %s %d differs from the model's", what,
                           output ? "output" : "input", index);
        if (o->rank && type->dimensionCount != o->rank)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: rank %u, the model says %u", what, type->dimensionCount, o->rank);
        if (type->dimensionCount > TR_MAX_RANK || (type->dimensionCount && !type->dimensions))
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: bad dimensions", what);
        for (uint32_t i = 0; i < type->dimensionCount; i++) {
            if (o->rank && o->dims[i] && type->dimensions[i] != o->dims[i])
                return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: dimension %u is %u, the model says %u", what, i,
                               type->dimensions[i], o->dims[i]);
            b.dims[i] = type->dimensions[i];
        }
        b.rank = type->dimensionCount;
    }
    if (!data && !mem) {
        if (length) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: buffer is NULL", what);
        if (output) return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: an output cannot be omitted", what);
        b.omitted = true;
    } else {
        size_t want = tr_elems(b.dims, b.rank) * tr_type_size(o->type);
        bool known = b.rank > 0 && want > 0;
        if (known && length != want)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %s %d needs %zu bytes, got %zu", what,
                           output ? "output" : "input", index, want, length);
    }
    if (mem) {
        if (offset > mem->size || length > mem->size - offset)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %zu bytes at offset %zu exceed the memory's %zu", what,
                           length, offset, mem->size);
        b.mem = mem;
        b.data = mem->data + offset;
        mem->refs++;
    }
    binding *slot = output ? &e->out[index] : &e->in[index];
    memory_release(slot->mem);
    *slot = b;
    return ANEURALNETWORKS_NO_ERROR;
}

/* execute runs the model once with the execution's bindings. */
static int execute(ANeuralNetworksExecution *e) {
    if (e->started) return tr_fail(ANEURALNETWORKS_BAD_STATE, "compute: the execution has already been started");
    const ANeuralNetworksModel *m = e->comp->model;
    for (uint32_t i = 0; i < m->nin; i++)
        if (!e->in[i].set) return tr_fail(ANEURALNETWORKS_BAD_DATA, "compute: input %u is not set", i);
    for (uint32_t i = 0; i < m->nout; i++)
        if (!e->out[i].set) return tr_fail(ANEURALNETWORKS_BAD_DATA, "compute: output %u is not set", i);
    e->started = true;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tr_run r = {m, run_init(m), false};
    if (!r.t) return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; i < m->nin + m->nout; i++) {
        bool out = i >= m->nin;
        binding *b = out ? &e->out[i - m->nin] : &e->in[i];
        tr_tensor *t = &r.t[out ? m->outputs[i - m->nin] : m->inputs[i]];
        t->data = b->omitted ? NULL : b->data;
        t->bytes = b->length;
        t->omitted = b->omitted;
        if (!out) {
            t->rank = b->rank;
            memcpy(t->dims, b->dims, sizeof t->dims);
        }
    }
    int rc = run_ops(&r);
    for (uint32_t i = 0; i < m->nout; i++) {
        const tr_tensor *t = &r.t[m->outputs[i]];
        e->out_dims[i][0] = t->rank;
        memcpy(&e->out_dims[i][1], t->dims, t->rank * sizeof t->dims[0]);
    }
    run_free(&r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    e->duration_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t1.tv_nsec - t0.tv_nsec);
    e->done = rc == ANEURALNETWORKS_NO_ERROR;
    return rc;
}

int ANeuralNetworksExecution_create(ANeuralNetworksCompilation *compilation, ANeuralNetworksExecution **execution) {
    enter();
    int rc = injected(__func__);
    if (rc && execution) *execution = NULL;
    if (!rc) rc = execution_new(compilation, execution);
    leave(__func__, rc, "compilation=%d execution=%d", compilation ? compilation->id : 0, rc ? 0 : (*execution)->id);
    return rc;
}

void ANeuralNetworksExecution_free(ANeuralNetworksExecution *execution) {
    enter();
    int id = execution ? execution->id : 0;
    execution_free(execution);
    leave(__func__, -1, "execution=%d", id);
}

int ANeuralNetworksExecution_setInput(ANeuralNetworksExecution *execution, int32_t index,
                                      const ANeuralNetworksOperandType *type, const void *buffer, size_t length) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = bind(execution, false, index, type, (uint8_t *)buffer, NULL, 0, length);
    leave(__func__, rc, "execution=%d index=%d length=%zu", execution ? execution->id : 0, index, length);
    return rc;
}

int ANeuralNetworksExecution_setInputFromMemory(ANeuralNetworksExecution *execution, int32_t index,
                                                const ANeuralNetworksOperandType *type,
                                                const ANeuralNetworksMemory *memory, size_t offset, size_t length) {
    enter();
    int rc = injected(__func__);
    if (!rc && !memory) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setInputFromMemory: memory is NULL");
    if (!rc) rc = bind(execution, false, index, type, NULL, (ANeuralNetworksMemory *)memory, offset, length);
    leave(__func__, rc, "execution=%d index=%d memory=%d offset=%zu length=%zu", execution ? execution->id : 0, index,
          memory ? memory->id : 0, offset, length);
    return rc;
}

int ANeuralNetworksExecution_setOutput(ANeuralNetworksExecution *execution, int32_t index,
                                       const ANeuralNetworksOperandType *type, void *buffer, size_t length) {
    enter();
    int rc = injected(__func__);
    if (!rc) rc = bind(execution, true, index, type, buffer, NULL, 0, length);
    leave(__func__, rc, "execution=%d index=%d length=%zu", execution ? execution->id : 0, index, length);
    return rc;
}

int ANeuralNetworksExecution_setOutputFromMemory(ANeuralNetworksExecution *execution, int32_t index,
                                                 const ANeuralNetworksOperandType *type,
                                                 const ANeuralNetworksMemory *memory, size_t offset, size_t length) {
    enter();
    int rc = injected(__func__);
    if (!rc && !memory) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setOutputFromMemory: memory is NULL");
    if (!rc) rc = bind(execution, true, index, type, NULL, (ANeuralNetworksMemory *)memory, offset, length);
    leave(__func__, rc, "execution=%d index=%d memory=%d offset=%zu length=%zu", execution ? execution->id : 0, index,
          memory ? memory->id : 0, offset, length);
    return rc;
}

/* startCompute computes at once; the event carries the result to
 * Event_wait. Errors found before computing are startCompute's own. */
int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution *execution, ANeuralNetworksEvent **event) {
    enter();
    int rc = injected(__func__);
    if (rc && event) *event = NULL;
    if (!rc && (!execution || !event)) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "startCompute: NULL argument");
    if (!rc) {
        *event = calloc(1, sizeof **event);
        if (!*event) rc = tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    }
    if (!rc) {
        (*event)->id = ++next_id;
        int result = execute(execution);
        if (result == ANEURALNETWORKS_BAD_STATE || (result == ANEURALNETWORKS_BAD_DATA && !execution->started)) {
            free(*event);
            *event = NULL;
            rc = result;
        } else {
            (*event)->result = result;
        }
    }
    leave(__func__, rc, "execution=%d event=%d", execution ? execution->id : 0, rc ? 0 : (*event)->id);
    return rc;
}

int ANeuralNetworksEvent_wait(ANeuralNetworksEvent *event) {
    enter();
    int rc = injected(__func__);
    if (!rc && !event) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Event_wait: event is NULL");
    if (!rc) rc = event->result;
    leave(__func__, rc, "event=%d", event ? event->id : 0);
    return rc;
}

void ANeuralNetworksEvent_free(ANeuralNetworksEvent *event) {
    enter();
    int id = event ? event->id : 0;
    free(event);
    leave(__func__, -1, "event=%d", id);
}

#if DELEGO_NNAPI_TEST_API >= 29
int ANeuralNetworksExecution_compute(ANeuralNetworksExecution *execution) {
    enter();
    int rc = injected(__func__);
    if (!rc && !execution) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "compute: execution is NULL");
    if (!rc) rc = execute(execution);
    leave(__func__, rc, "execution=%d", execution ? execution->id : 0);
    return rc;
}

/* output_query checks the arguments of getOutputOperandRank/Dimensions. */
static int output_query(ANeuralNetworksExecution *e, int32_t index, const void *out, const char *fn) {
    int rc = injected(fn);
    if (rc) return rc;
    if (!e || !out) return tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "%s: NULL argument", fn);
    if (!e->done) return tr_fail(ANEURALNETWORKS_BAD_STATE, "%s: the execution has not completed", fn);
    if (index < 0 || (uint32_t)index >= e->comp->model->nout)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: output index %d out of range", fn, index);
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_getOutputOperandRank(ANeuralNetworksExecution *execution, int32_t index, uint32_t *rank) {
    enter();
    int rc = output_query(execution, index, rank, __func__);
    if (!rc) *rank = execution->out_dims[index][0];
    leave(__func__, rc, "execution=%d index=%d", execution ? execution->id : 0, index);
    return rc;
}

int ANeuralNetworksExecution_getOutputOperandDimensions(ANeuralNetworksExecution *execution, int32_t index,
                                                        uint32_t *dimensions) {
    enter();
    int rc = output_query(execution, index, dimensions, __func__);
    if (!rc) memcpy(dimensions, &execution->out_dims[index][1], execution->out_dims[index][0] * sizeof *dimensions);
    leave(__func__, rc, "execution=%d index=%d", execution ? execution->id : 0, index);
    return rc;
}

int ANeuralNetworksBurst_create(ANeuralNetworksCompilation *compilation, ANeuralNetworksBurst **burst) {
    enter();
    int rc = injected(__func__);
    if (rc && burst) *burst = NULL;
    if (!rc && (!compilation || !burst)) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Burst_create: NULL argument");
    if (!rc && !compilation->finished)
        rc = tr_fail(ANEURALNETWORKS_BAD_STATE, "Burst_create: the compilation is not finished");
    if (!rc) {
        *burst = calloc(1, sizeof **burst);
        if (!*burst) rc = tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory");
    }
    if (!rc) {
        (*burst)->id = ++next_id;
        (*burst)->comp = compilation;
        compilation->refs++;
    }
    leave(__func__, rc, "compilation=%d burst=%d", compilation ? compilation->id : 0, rc ? 0 : (*burst)->id);
    return rc;
}

void ANeuralNetworksBurst_free(ANeuralNetworksBurst *burst) {
    enter();
    int id = burst ? burst->id : 0;
    if (burst) compilation_release(burst->comp);
    free(burst);
    leave(__func__, -1, "burst=%d", id);
}

int ANeuralNetworksExecution_burstCompute(ANeuralNetworksExecution *execution, ANeuralNetworksBurst *burst) {
    enter();
    int rc = injected(__func__);
    if (!rc && (!execution || !burst)) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "burstCompute: NULL argument");
    if (!rc && burst->comp != execution->comp)
        rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "burstCompute: the burst belongs to another compilation");
    if (!rc) rc = execute(execution);
    leave(__func__, rc, "execution=%d burst=%d", execution ? execution->id : 0, burst ? burst->id : 0);
    return rc;
}

int ANeuralNetworksExecution_setMeasureTiming(ANeuralNetworksExecution *execution, bool measure) {
    enter();
    int rc = injected(__func__);
    if (!rc && !execution) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setMeasureTiming: execution is NULL");
    if (!rc) rc = single_device(execution->comp, "setMeasureTiming");
    if (!rc && execution->started) rc = tr_fail(ANEURALNETWORKS_BAD_STATE, "setMeasureTiming: execution started");
    if (!rc) execution->measure = measure;
    leave(__func__, rc, "execution=%d measure=%d", execution ? execution->id : 0, measure);
    return rc;
}

int ANeuralNetworksExecution_getDuration(const ANeuralNetworksExecution *execution, int32_t durationCode,
                                         uint64_t *duration) {
    enter();
    int rc = injected(__func__);
    if (!rc && (!execution || !duration)) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "getDuration: NULL argument");
    if (!rc && !execution->done) rc = tr_fail(ANEURALNETWORKS_BAD_STATE, "getDuration: not completed");
    if (!rc && (durationCode < 0 || durationCode > 3))
        rc = tr_fail(ANEURALNETWORKS_BAD_DATA, "getDuration: %d is not a DurationCode", durationCode);
    if (!rc) *duration = execution->measure && durationCode < 2 ? execution->duration_ns : UINT64_MAX;
    leave(__func__, rc, "execution=%d code=%d", execution ? execution->id : 0, durationCode);
    return rc;
}
#endif

#if DELEGO_NNAPI_TEST_API >= 30
int ANeuralNetworksExecution_setTimeout(ANeuralNetworksExecution *execution, uint64_t duration) {
    enter();
    int rc = injected(__func__);
    if (!rc && !execution) rc = tr_fail(ANEURALNETWORKS_UNEXPECTED_NULL, "Execution_setTimeout: execution is NULL");
    if (!rc) rc = single_device(execution->comp, "Execution_setTimeout");
    if (!rc && execution->started) rc = tr_fail(ANEURALNETWORKS_BAD_STATE, "Execution_setTimeout: execution started");
    if (!rc) execution->timeout = duration;
    leave(__func__, rc, "execution=%d duration=%llu", execution ? execution->id : 0, (unsigned long long)duration);
    return rc;
}
#endif
