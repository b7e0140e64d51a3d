/*
 * testrt.h: the internal data structures of the delego test NNAPI runtime,
 * shared by runtime.c (the API, its call-order rules, configuration and
 * logging), ops.c (per-operation validation and shapes) and kernels.c (the
 * reference arithmetic).
 */
#ifndef DELEGO_TESTRT_H
#define DELEGO_TESTRT_H

#include "nnapi_abi.h"

#define TR_MAX_RANK 6

/* Helpers that only functions of newer API levels call. */
#define TR_MAYBE_UNUSED __attribute__((unused))

/* Where an operand's value comes from. */
enum {
    TR_TEMP = 0,   /* written by an operation */
    TR_INPUT,      /* a model input, set per execution */
    TR_OUTPUT,     /* a model output, set per execution */
    TR_CONST,      /* setOperandValue or setOperandValueFromMemory */
    TR_NO_VALUE,   /* an omitted optional operand (setOperandValue(NULL, 0)) */
};

struct ANeuralNetworksMemory {
    int id;
    uint8_t *data;     /* first byte of the mapped region (after offset) */
    size_t size;
    void *map_base;    /* what mmap returned, for munmap */
    size_t map_len;
    int refs;          /* the handle plus each model/execution using it */
};

/* One operand of a model, as addOperand declared it. */
typedef struct {
    int32_t type;
    uint32_t rank;
    uint32_t dims[TR_MAX_RANK]; /* 0: unknown */
    float scale;
    int32_t zero_point;
    /* TENSOR_QUANT8_SYMM_PER_CHANNEL parameters. */
    bool has_channel_quant;
    uint32_t channel_dim;
    uint32_t scale_count;
    float *scales;
    int lifetime;
    bool value_set;
    const void *value;          /* constant bytes (owned copy, caller's buffer or memory) */
    size_t length;
    void *owned;                /* our copy of a small value */
    ANeuralNetworksMemory *mem; /* referenced memory, if any */
} tr_operand;

/* One operation of a model. */
typedef struct {
    int32_t type;
    uint32_t nin, nout;
    uint32_t *in, *out;
    int64_t need_level; /* the lowest feature level that has this operation with these operands */
    bool computable;    /* whether the test runtime has kernels for it */
    char why_not[160];  /* when not computable: why */
} tr_operation;

struct ANeuralNetworksModel {
    int id;
    int refs;
    bool finished;
    bool relaxed;
    bool io_set;
    tr_operand *opd;
    uint32_t nopd, capopd;
    tr_operation *ops;
    uint32_t nops, capops;
    uint32_t *inputs, nin;
    uint32_t *outputs, nout;
    uint32_t *order; /* operations in run order, set by finish */
};

/* A tensor during one compile-time check or execution. */
typedef struct {
    int32_t type;
    uint32_t rank;
    uint32_t dims[TR_MAX_RANK];
    float scale;
    int32_t zero_point;
    const float *scales; /* per-channel */
    uint32_t scale_count, channel_dim;
    void *data;          /* NULL when the values are not known (compile-time check) */
    size_t bytes;        /* the bytes available at data */
    bool omitted;
} tr_tensor;

/* The state of one run over a model: one tensor per operand. */
typedef struct {
    const ANeuralNetworksModel *model;
    tr_tensor *t;
    bool compile_only; /* shapes and parameters only, no arithmetic */
} tr_run;

/* The window of CONV_2D, DEPTHWISE_CONV_2D and the 2-D pools, from either
 * padding form. */
typedef struct {
    int pad_l, pad_r, pad_t, pad_b;
    int stride_w, stride_h;
    int dil_w, dil_h;
    int filter_w, filter_h; /* pools only */
    int mult;               /* depth multiplier (depthwise only) */
    int fuse;
} tr_window;

/* ops.c */
int tr_op_check(const ANeuralNetworksModel *m, tr_operation *op, bool final, int64_t runtime_level);
int tr_op_prepare(tr_run *r, const tr_operation *op);
int tr_op_eval(tr_run *r, const tr_operation *op);
const char *tr_op_name(int32_t type);
int64_t tr_op_level(int32_t type);

/* runtime.c: errors and helpers shared by every file. */
int tr_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *tr_type_name(int32_t type);
const char *tr_code_name(int code);
size_t tr_type_size(int32_t type);
bool tr_is_tensor_type(int32_t type);
size_t tr_elems(const uint32_t *dims, uint32_t rank);
int64_t tr_level_of_type(int32_t type);

/* kernels.c: the arithmetic of each computed operation. */
void tr_k_quantize_multiplier(double real, int32_t *mult, int *shift);
int32_t tr_k_mbqm(int32_t x, int32_t mult, int shift);
int tr_k_conv(tr_run *r, const tr_operation *op, bool depthwise, const tr_window *w);
int tr_k_fully_connected(tr_run *r, const tr_operation *op, int32_t fuse);
int tr_k_pool(tr_run *r, const tr_operation *op, bool is_max, const tr_window *w);
int tr_k_binary(tr_run *r, const tr_operation *op, int32_t fuse);
int tr_k_softmax(tr_run *r, const tr_operation *op, float beta);
int tr_k_unary(tr_run *r, const tr_operation *op);
int tr_k_concat(tr_run *r, const tr_operation *op, int axis);
int tr_k_split(tr_run *r, const tr_operation *op, int axis);
int tr_k_pad(tr_run *r, const tr_operation *op, const int32_t *pads);
int tr_k_mean(tr_run *r, const tr_operation *op, const bool *reduced, bool special4d);
int tr_k_copy(tr_run *r, const tr_operation *op);

#endif
