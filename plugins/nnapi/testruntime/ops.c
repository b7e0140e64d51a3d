/*
 * ops.c: what the NNAPI specification says about each operation the test
 * runtime knows: how many operands it takes in each of its forms, their
 * types and ranks, the quantization relations between them, and the
 * feature level that introduced the operation and each of its type
 * variants (tr_op_check, run by addOperation and again by Model_finish);
 * then the output shapes and parameter values (tr_op_prepare, run when a
 * compilation finishes and before each execution) and the dispatch to the
 * kernels (tr_op_eval).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testrt.h"

enum {
    F32 = ANEURALNETWORKS_TENSOR_FLOAT32,
    I32 = ANEURALNETWORKS_TENSOR_INT32,
    Q8 = ANEURALNETWORKS_TENSOR_QUANT8_ASYMM,
    QS8 = ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED,
    F16 = ANEURALNETWORKS_TENSOR_FLOAT16,
    PERCH = ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL,
};

#define FL1 27
#define FL2 28
#define FL3 29
#define FL4 30

/* The NDK names of operation codes 0..105. */
static const char *const op_names[] = {
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE",
    "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D",
    "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU1",
    "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH",
    "BATCH_TO_SPACE_ND", "DIV", "MEAN", "PAD", "SPACE_TO_BATCH_ND", "SQUEEZE", "STRIDED_SLICE", "SUB",
    "TRANSPOSE", "ABS", "ARGMAX", "ARGMIN", "AXIS_ALIGNED_BBOX_TRANSFORM", "BIDIRECTIONAL_SEQUENCE_LSTM",
    "BIDIRECTIONAL_SEQUENCE_RNN", "BOX_WITH_NMS_LIMIT", "CAST", "CHANNEL_SHUFFLE", "DETECTION_POSTPROCESSING",
    "EQUAL", "EXP", "EXPAND_DIMS", "GATHER", "GENERATE_PROPOSALS", "GREATER", "GREATER_EQUAL", "GROUPED_CONV_2D",
    "HEATMAP_MAX_KEYPOINT", "INSTANCE_NORMALIZATION", "LESS", "LESS_EQUAL", "LOG", "LOGICAL_AND", "LOGICAL_NOT",
    "LOGICAL_OR", "LOG_SOFTMAX", "MAXIMUM", "MINIMUM", "NEG", "NOT_EQUAL", "PAD_V2", "POW", "PRELU", "QUANTIZE",
    "QUANTIZED_16BIT_LSTM", "RANDOM_MULTINOMIAL", "REDUCE_ALL", "REDUCE_ANY", "REDUCE_MAX", "REDUCE_MIN",
    "REDUCE_PROD", "REDUCE_SUM", "ROI_ALIGN", "ROI_POOLING", "RSQRT", "SELECT", "SIN", "SLICE", "SPLIT", "SQRT",
    "TILE", "TOPK_V2", "TRANSPOSE_CONV_2D", "UNIDIRECTIONAL_SEQUENCE_LSTM", "UNIDIRECTIONAL_SEQUENCE_RNN",
    "RESIZE_NEAREST_NEIGHBOR", "QUANTIZED_LSTM", "IF", "WHILE", "ELU", "HARD_SWISH", "FILL", "RANK",
    "BATCH_MATMUL", "PACK", "MIRROR_PAD", "REVERSE",
};

const char *tr_op_name(int32_t type) {
    if (type < 0 || (size_t)type >= sizeof op_names / sizeof op_names[0]) return "UNKNOWN_OPERATION";
    return op_names[type];
}

/* The feature level that introduced an operation code; -1 if unknown. */
int64_t tr_op_level(int32_t t) {
    if (t < 0) return -1;
    if (t <= 28) return FL1;
    if (t <= 37) return FL2;
    if (t <= 94) return FL3;
    if (t <= 101) return FL4;
    if (t == 102) return ANEURALNETWORKS_FEATURE_LEVEL_6;
    if (t <= 105) return ANEURALNETWORKS_FEATURE_LEVEL_7;
    return -1;
}

/* ---- validation ---------------------------------------------------------------------------- */

/* The state of one operation's check. */
typedef struct {
    const ANeuralNetworksModel *m;
    tr_operation *op;
    bool final; /* Model_finish: per-channel parameters must be there now */
    int64_t runtime_level;
    const char *name;
} ck;

static const tr_operand *in_opd(const ck *c, uint32_t k) { return &c->m->opd[c->op->in[k]]; }
static const tr_operand *out_opd(const ck *c, uint32_t k) { return &c->m->opd[c->op->out[k]]; }

/* need records that the operation, in the form being checked, exists only
 * from feature level `level`, and rejects it if the runtime is older. */
static int need(const ck *c, int64_t level, const char *what) {
    if (level > c->op->need_level) c->op->need_level = level;
    if (level > c->runtime_level)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s %s needs NNAPI feature level %lld; the runtime has %lld",
                       c->name, what, (long long)level, (long long)c->runtime_level);
    return ANEURALNETWORKS_NO_ERROR;
}

static int fail_count(const ck *c, const char *want) {
    return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: got %u inputs and %u outputs, want %s", c->name, c->op->nin,
                   c->op->nout, want);
}

static int fail_type(const ck *c, const char *role, const tr_operand *o) {
    return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %s has unsupported type %s", c->name, role, tr_type_name(o->type));
}

/* want_scalar checks that input k is a scalar of the given type. */
static int want_scalar(const ck *c, uint32_t k, int32_t type, const char *role) {
    const tr_operand *o = in_opd(c, k);
    if (o->type != type)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: input %u (%s) has type %s, want %s", c->name, k, role,
                       tr_type_name(o->type), tr_type_name(type));
    return ANEURALNETWORKS_NO_ERROR;
}

/* want_rank checks a tensor's rank when it is known (rank 0 means unknown
 * from feature level 3 on). */
static int want_rank(const ck *c, const tr_operand *o, const char *role, uint32_t lo, uint32_t hi) {
    if (o->rank == 0) return ANEURALNETWORKS_NO_ERROR;
    if (o->rank < lo || o->rank > hi) {
        if (lo == hi)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %s has rank %u, want %u", c->name, role, o->rank, lo);
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %s has rank %u, want %u to %u", c->name, role, o->rank, lo,
                       hi);
    }
    return ANEURALNETWORKS_NO_ERROR;
}

/* main_type checks the type of the operation's main tensor against the
 * feature level that introduced each variant (0: not allowed) and records
 * whether the test runtime computes it. */
static int main_type(const ck *c, const tr_operand *o, const char *role, int64_t f32, int64_t q8, int64_t f16,
                     int64_t qs8, int64_t i32) {
    int64_t level = 0;
    switch (o->type) {
    case F32: level = f32; break;
    case Q8: level = q8; break;
    case F16: level = f16; break;
    case QS8: level = qs8; break;
    case I32: level = i32; break;
    }
    if (level == 0) return fail_type(c, role, o);
    char what[64];
    snprintf(what, sizeof what, "with %s", tr_type_name(o->type));
    int rc = need(c, level, what);
    if (rc) return rc;
    if (o->type == F16 || o->type == I32) {
        c->op->computable = false;
        snprintf(c->op->why_not, sizeof c->op->why_not, "the test runtime computes no %s with %s", c->name,
                 tr_type_name(o->type));
    }
    return ANEURALNETWORKS_NO_ERROR;
}

static int same_type(const ck *c, const tr_operand *a, const char *ra, const tr_operand *b, const char *rb) {
    if (a->type != b->type)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %s has type %s but %s has type %s", c->name, rb,
                       tr_type_name(b->type), ra, tr_type_name(a->type));
    return ANEURALNETWORKS_NO_ERROR;
}

static bool is_quant8(int32_t t) { return t == Q8 || t == QS8; }

static int same_quant(const ck *c, const tr_operand *a, const char *ra, const tr_operand *b, const char *rb) {
    if (is_quant8(a->type) && (a->scale != b->scale || a->zero_point != b->zero_point))
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %s (scale %g, zero point %d) must have the scale and zero "
                       "point of %s (scale %g, zero point %d)", c->name, rb, b->scale, b->zero_point, ra, a->scale,
                       a->zero_point);
    return ANEURALNETWORKS_NO_ERROR;
}

/* fixed_quant checks an output whose quantization NNAPI fixes. */
static int fixed_quant(const ck *c, const tr_operand *o, float scale, int32_t zp_u8, int32_t zp_s8) {
    if (!is_quant8(o->type)) return ANEURALNETWORKS_NO_ERROR;
    int32_t zp = o->type == Q8 ? zp_u8 : zp_s8;
    if (o->scale != scale || o->zero_point != zp)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %s output needs scale %g and zero point %d, got %g and %d",
                       c->name, tr_type_name(o->type), scale, zp, o->scale, o->zero_point);
    return ANEURALNETWORKS_NO_ERROR;
}

#define TRY(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)

/* check_bias checks the bias of CONV_2D, DEPTHWISE_CONV_2D and
 * FULLY_CONNECTED against the input and filter quantization. */
static int check_bias(const ck *c, const tr_operand *in, const tr_operand *f, const tr_operand *b) {
    TRY(want_rank(c, b, "bias", 1, 1));
    if (!is_quant8(in->type)) return same_type(c, in, "input", b, "bias");
    if (b->type != I32) return fail_type(c, "bias (want TENSOR_INT32)", b);
    if (b->zero_point != 0)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: bias zero point %d, want 0", c->name, b->zero_point);
    if (f->type == PERCH) {
        if (b->scale != 0)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: bias of a per-channel filter needs scale 0 (each "
                           "channel's scale is input scale * filter scale[channel]), got %g", c->name, b->scale);
        return ANEURALNETWORKS_NO_ERROR;
    }
    double product = (double)(in->scale * f->scale), bs = b->scale;
    if (fabs(product - bs) > 1e-6 * fmin(product, bs))
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: bias scale %.9g must equal input scale * filter scale = "
                       "%.9g", c->name, bs, product);
    return ANEURALNETWORKS_NO_ERROR;
}

/* check_filter checks a CONV_2D or DEPTHWISE_CONV_2D filter's type against
 * the input and, for a per-channel filter, its channel dimension. */
static int check_filter(const ck *c, const tr_operand *in, const tr_operand *f, uint32_t channel_dim) {
    TRY(want_rank(c, f, "filter", 4, 4));
    if (f->type == PERCH) {
        if (!is_quant8(in->type)) return fail_type(c, "filter (per-channel needs a quantized input)", f);
        TRY(need(c, FL3, "with a per-channel quantized filter"));
        if (!f->has_channel_quant) {
            if (c->final)
                return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: per-channel filter has no "
                               "setOperandSymmPerChannelQuantParams", c->name);
        } else if (f->channel_dim != channel_dim) {
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: per-channel filter quantized along dimension %u, want %u",
                           c->name, f->channel_dim, channel_dim);
        }
        return ANEURALNETWORKS_NO_ERROR;
    }
    return same_type(c, in, "input", f, "filter");
}

/* conv_implicit tells the two forms of CONV_2D (first_scalar 7) and
 * DEPTHWISE_CONV_2D (8) apart: the implicit form has a padding scheme, and
 * its optional layout operand is a BOOL where the explicit form has a
 * stride. */
static bool conv_implicit(const ck *c, uint32_t layout_at) {
    if (c->op->nin == layout_at) return true;
    return c->op->nin > layout_at && in_opd(c, layout_at)->type == ANEURALNETWORKS_BOOL;
}

static int check_conv(ck *c, bool depthwise) {
    uint32_t n = c->op->nin;
    uint32_t implicit_n = depthwise ? 8 : 7; /* without optional operands */
    bool implicit = conv_implicit(c, implicit_n);
    uint32_t base = implicit ? implicit_n : implicit_n + 3;
    if (c->op->nout != 1 || (n != base && n != base + 1 && n != base + 3))
        return fail_count(c, depthwise ? "8, 9 or 11 (implicit padding) or 11, 12 or 14 (explicit) inputs and 1 "
                                         "output"
                                       : "7, 8 or 10 (implicit padding) or 10, 11 or 13 (explicit) inputs and 1 "
                                         "output");
    const tr_operand *in = in_opd(c, 0), *f = in_opd(c, 1), *b = in_opd(c, 2), *out = out_opd(c, 0);
    TRY(main_type(c, in, "input", FL1, FL1, FL3, FL4, 0));
    TRY(want_rank(c, in, "input", 4, 4));
    TRY(check_filter(c, in, f, depthwise ? 3 : 0));
    TRY(check_bias(c, in, f, b));
    TRY(same_type(c, in, "input", out, "output"));
    TRY(want_rank(c, out, "output", 4, 4));
    for (uint32_t k = 3; k < base; k++) TRY(want_scalar(c, k, ANEURALNETWORKS_INT32, "padding, stride, multiplier or activation"));
    if (n > base) {
        TRY(need(c, FL3, "with a layout operand"));
        TRY(want_scalar(c, base, ANEURALNETWORKS_BOOL, "layout"));
    }
    if (n > base + 1) {
        TRY(need(c, FL3, "with dilation"));
        TRY(want_scalar(c, base + 1, ANEURALNETWORKS_INT32, "dilation width"));
        TRY(want_scalar(c, base + 2, ANEURALNETWORKS_INT32, "dilation height"));
    }
    return ANEURALNETWORKS_NO_ERROR;
}

static int check_fully_connected(ck *c) {
    if (c->op->nin != 4 || c->op->nout != 1) return fail_count(c, "4 inputs and 1 output");
    const tr_operand *in = in_opd(c, 0), *w = in_opd(c, 1), *b = in_opd(c, 2), *out = out_opd(c, 0);
    TRY(main_type(c, in, "input", FL1, FL1, FL3, FL4, 0));
    TRY(want_rank(c, in, "input", 2, 4));
    TRY(same_type(c, in, "input", w, "weights"));
    TRY(want_rank(c, w, "weights", 2, 2));
    TRY(check_bias(c, in, w, b));
    TRY(want_scalar(c, 3, ANEURALNETWORKS_INT32, "activation"));
    TRY(same_type(c, in, "input", out, "output"));
    return want_rank(c, out, "output", 2, 2);
}

static int check_binary(ck *c) {
    if (c->op->nin != 3 || c->op->nout != 1) return fail_count(c, "3 inputs and 1 output");
    const tr_operand *a = in_opd(c, 0), *b = in_opd(c, 1), *out = out_opd(c, 0);
    int32_t t = c->op->type;
    if (t == ANEURALNETWORKS_SUB)
        TRY(main_type(c, a, "input 0", FL2, FL3, FL3, FL4, FL4));
    else
        TRY(main_type(c, a, "input 0", FL1, FL1, FL3, FL4, FL4));
    TRY(want_rank(c, a, "input 0", 1, 4));
    TRY(same_type(c, a, "input 0", b, "input 1"));
    TRY(want_rank(c, b, "input 1", 1, 4));
    TRY(want_scalar(c, 2, ANEURALNETWORKS_INT32, "activation"));
    TRY(same_type(c, a, "input 0", out, "output"));
    return ANEURALNETWORKS_NO_ERROR;
}

static int check_pool(ck *c) {
    uint32_t n = c->op->nin;
    if (c->op->nout != 1 || (n != 7 && n != 8 && n != 10 && n != 11))
        return fail_count(c, "7 or 8 (implicit padding) or 10 or 11 (explicit) inputs and 1 output");
    const tr_operand *in = in_opd(c, 0), *out = out_opd(c, 0);
    TRY(main_type(c, in, "input", FL1, FL1, FL3, FL4, 0));
    TRY(want_rank(c, in, "input", 4, 4));
    uint32_t base = (n == 7 || n == 8) ? 7 : 10;
    for (uint32_t k = 1; k < base; k++) TRY(want_scalar(c, k, ANEURALNETWORKS_INT32, "padding, stride, filter or activation"));
    if (n > base) {
        TRY(need(c, FL3, "with a layout operand"));
        TRY(want_scalar(c, base, ANEURALNETWORKS_BOOL, "layout"));
    }
    TRY(same_type(c, in, "input", out, "output"));
    TRY(same_quant(c, in, "input", out, "output"));
    return want_rank(c, out, "output", 4, 4);
}

static int check_softmax(ck *c) {
    uint32_t n = c->op->nin;
    if (c->op->nout != 1 || (n != 2 && n != 3)) return fail_count(c, "2 or 3 inputs and 1 output");
    const tr_operand *in = in_opd(c, 0), *out = out_opd(c, 0);
    TRY(main_type(c, in, "input", FL1, FL1, FL3, FL4, 0));
    if (in->rank != 2 && in->rank != 4) TRY(need(c, FL3, "with an input of rank other than 2 or 4"));
    TRY(want_rank(c, in, "input", 1, 4));
    TRY(want_scalar(c, 1, in->type == F16 ? ANEURALNETWORKS_FLOAT16 : ANEURALNETWORKS_FLOAT32, "beta"));
    if (n == 3) {
        TRY(need(c, FL3, "with an axis operand"));
        TRY(want_scalar(c, 2, ANEURALNETWORKS_INT32, "axis"));
    }
    TRY(same_type(c, in, "input", out, "output"));
    return fixed_quant(c, out, 1.0f / 256, 0, -128);
}

static int check_unary(ck *c) {
    if (c->op->nin != 1 || c->op->nout != 1) return fail_count(c, "1 input and 1 output");
    const tr_operand *in = in_opd(c, 0), *out = out_opd(c, 0);
    int32_t t = c->op->type;
    if (t == ANEURALNETWORKS_TANH)
        TRY(main_type(c, in, "input", FL1, FL3, FL3, FL4, 0));
    else
        TRY(main_type(c, in, "input", FL1, FL1, FL3, FL4, 0));
    TRY(want_rank(c, in, "input", 1, 4));
    TRY(same_type(c, in, "input", out, "output"));
    if (t == ANEURALNETWORKS_LOGISTIC) return fixed_quant(c, out, 1.0f / 256, 0, -128);
    if (t == ANEURALNETWORKS_TANH) return fixed_quant(c, out, 1.0f / 128, 128, 0);
    return ANEURALNETWORKS_NO_ERROR;
}

static int check_reshape(ck *c) {
    bool squeeze = c->op->type == ANEURALNETWORKS_SQUEEZE;
    if (c->op->nin != 2 || c->op->nout != 1) return fail_count(c, "2 inputs and 1 output");
    const tr_operand *in = in_opd(c, 0), *shape = in_opd(c, 1), *out = out_opd(c, 0);
    if (squeeze)
        TRY(main_type(c, in, "input", FL2, FL2, FL3, FL4, 0));
    else
        TRY(main_type(c, in, "input", FL1, FL1, FL3, FL4, 0));
    TRY(want_rank(c, in, "input", 1, 4));
    if (shape->type != I32) return fail_type(c, squeeze ? "squeeze dimensions" : "shape", shape);
    TRY(want_rank(c, shape, squeeze ? "squeeze dimensions" : "shape", 1, 1));
    TRY(same_type(c, in, "input", out, "output"));
    return same_quant(c, in, "input", out, "output");
}

static int check_concat(ck *c) {
    uint32_t n = c->op->nin;
    if (n < 2 || c->op->nout != 1) return fail_count(c, "at least 2 inputs (tensors, then the axis) and 1 output");
    const tr_operand *a = in_opd(c, 0), *out = out_opd(c, 0);
    TRY(main_type(c, a, "input 0", FL1, FL1, FL3, FL4, 0));
    TRY(want_scalar(c, n - 1, ANEURALNETWORKS_INT32, "axis"));
    TRY(same_type(c, a, "input 0", out, "output"));
    for (uint32_t k = 0; k + 1 < n; k++) {
        const tr_operand *o = in_opd(c, k);
        char role[32];
        snprintf(role, sizeof role, "input %u", k);
        TRY(same_type(c, a, "input 0", o, role));
        TRY(want_rank(c, o, role, 1, 4));
        if (is_quant8(o->type) && (o->scale != out->scale || o->zero_point != out->zero_point))
            TRY(need(c, FL3, "with inputs quantized unlike the output"));
    }
    return ANEURALNETWORKS_NO_ERROR;
}

static int check_split(ck *c) {
    if (c->op->nin != 3 || c->op->nout < 1) return fail_count(c, "3 inputs and num_splits outputs");
    const tr_operand *in = in_opd(c, 0);
    TRY(main_type(c, in, "input", FL3, FL3, FL3, FL4, FL3));
    TRY(want_rank(c, in, "input", 1, 4));
    TRY(want_scalar(c, 1, ANEURALNETWORKS_INT32, "axis"));
    TRY(want_scalar(c, 2, ANEURALNETWORKS_INT32, "num_splits"));
    for (uint32_t k = 0; k < c->op->nout; k++) {
        TRY(same_type(c, in, "input", out_opd(c, k), "an output"));
        TRY(same_quant(c, in, "input", out_opd(c, k), "an output"));
    }
    return ANEURALNETWORKS_NO_ERROR;
}

static int check_quantize(ck *c) {
    if (c->op->nin != 1 || c->op->nout != 1) return fail_count(c, "1 input and 1 output");
    const tr_operand *in = in_opd(c, 0), *out = out_opd(c, 0);
    TRY(need(c, FL3, ""));
    if (in->type != F32 && in->type != F16) return fail_type(c, "input", in);
    if (in->type == F16) TRY(main_type(c, in, "input", 0, 0, FL3, 0, 0));
    TRY(want_rank(c, in, "input", 1, 4));
    if (out->type == QS8) return need(c, FL4, "with a TENSOR_QUANT8_ASYMM_SIGNED output");
    if (out->type != Q8) return fail_type(c, "output", out);
    return ANEURALNETWORKS_NO_ERROR;
}

static int check_dequantize(ck *c) {
    if (c->op->nin != 1 || c->op->nout != 1) return fail_count(c, "1 input and 1 output");
    const tr_operand *in = in_opd(c, 0), *out = out_opd(c, 0);
    switch (in->type) {
    case Q8: break;
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM:
    case PERCH: TRY(need(c, FL3, "with a symmetric quantized input")); break;
    case QS8: TRY(need(c, FL4, "with a TENSOR_QUANT8_ASYMM_SIGNED input")); break;
    default: return fail_type(c, "input", in);
    }
    TRY(want_rank(c, in, "input", 1, 4));
    if (out->type == F16) return main_type(c, out, "output", 0, 0, FL3, 0, 0);
    if (out->type != F32) return fail_type(c, "output", out);
    return ANEURALNETWORKS_NO_ERROR;
}

static int check_pad(ck *c) {
    if (c->op->nin != 2 || c->op->nout != 1) return fail_count(c, "2 inputs and 1 output");
    const tr_operand *in = in_opd(c, 0), *pads = in_opd(c, 1), *out = out_opd(c, 0);
    TRY(main_type(c, in, "input", FL2, FL3, FL3, FL4, 0));
    TRY(want_rank(c, in, "input", 1, 4));
    if (pads->type != I32) return fail_type(c, "paddings", pads);
    TRY(want_rank(c, pads, "paddings", 2, 2));
    TRY(same_type(c, in, "input", out, "output"));
    return same_quant(c, in, "input", out, "output");
}

static int check_mean(ck *c) {
    if (c->op->nin != 3 || c->op->nout != 1) return fail_count(c, "3 inputs and 1 output");
    const tr_operand *in = in_opd(c, 0), *axes = in_opd(c, 1), *out = out_opd(c, 0);
    TRY(main_type(c, in, "input", FL2, FL2, FL3, FL4, 0));
    TRY(want_rank(c, in, "input", 1, 4));
    if (axes->type != I32) return fail_type(c, "axes", axes);
    TRY(want_rank(c, axes, "axes", 1, 1));
    TRY(want_scalar(c, 2, ANEURALNETWORKS_INT32, "keep_dims"));
    return same_type(c, in, "input", out, "output");
}

int tr_op_check(const ANeuralNetworksModel *m, tr_operation *op, bool final, int64_t runtime_level) {
    ck c = {m, op, final, runtime_level, tr_op_name(op->type)};
    int64_t level = tr_op_level(op->type);
    if (level < 0) return tr_fail(ANEURALNETWORKS_BAD_DATA, "unknown operation type %d", op->type);
    op->need_level = 0;
    op->computable = true;
    op->why_not[0] = 0;
    TRY(need(&c, level, "(the operation)"));
    switch (op->type) {
    case ANEURALNETWORKS_CONV_2D: return check_conv(&c, false);
    case ANEURALNETWORKS_DEPTHWISE_CONV_2D: return check_conv(&c, true);
    case ANEURALNETWORKS_FULLY_CONNECTED: return check_fully_connected(&c);
    case ANEURALNETWORKS_ADD:
    case ANEURALNETWORKS_MUL:
    case ANEURALNETWORKS_SUB: return check_binary(&c);
    case ANEURALNETWORKS_AVERAGE_POOL_2D:
    case ANEURALNETWORKS_MAX_POOL_2D: return check_pool(&c);
    case ANEURALNETWORKS_SOFTMAX: return check_softmax(&c);
    case ANEURALNETWORKS_LOGISTIC:
    case ANEURALNETWORKS_TANH:
    case ANEURALNETWORKS_RELU:
    case ANEURALNETWORKS_RELU1:
    case ANEURALNETWORKS_RELU6: return check_unary(&c);
    case ANEURALNETWORKS_RESHAPE:
    case ANEURALNETWORKS_SQUEEZE: return check_reshape(&c);
    case ANEURALNETWORKS_CONCATENATION: return check_concat(&c);
    case ANEURALNETWORKS_SPLIT: return check_split(&c);
    case ANEURALNETWORKS_QUANTIZE: return check_quantize(&c);
    case ANEURALNETWORKS_DEQUANTIZE: return check_dequantize(&c);
    case ANEURALNETWORKS_PAD: return check_pad(&c);
    case ANEURALNETWORKS_MEAN: return check_mean(&c);
    }
    /* Known to NNAPI, unknown to this runtime: accepted as a model (the
     * feature level was checked above), supported by no device. */
    op->computable = false;
    snprintf(op->why_not, sizeof op->why_not, "the test runtime has no kernel for %s", c.name);
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- shapes and parameters ----------------------------------------------------------------- */

static tr_tensor *IN(tr_run *r, const tr_operation *op, uint32_t k) { return &r->t[op->in[k]]; }
static tr_tensor *OUT(tr_run *r, const tr_operation *op, uint32_t k) { return &r->t[op->out[k]]; }

/* value reads a parameter operand, which must be known by now. */
static int value(tr_run *r, const tr_operation *op, uint32_t k, const void **p) {
    tr_tensor *t = IN(r, op, k);
    if (!t->data)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: input %u must be a constant operand (the test runtime reads "
                       "parameters when the compilation finishes)", tr_op_name(op->type), k);
    *p = t->data;
    return ANEURALNETWORKS_NO_ERROR;
}

static int get_i32(tr_run *r, const tr_operation *op, uint32_t k, int32_t *v) {
    const void *p = NULL;
    TRY(value(r, op, k, &p));
    memcpy(v, p, sizeof *v);
    return ANEURALNETWORKS_NO_ERROR;
}

static int get_bool(tr_run *r, const tr_operation *op, uint32_t k, bool *v) {
    const void *p = NULL;
    TRY(value(r, op, k, &p));
    *v = *(const uint8_t *)p != 0;
    return ANEURALNETWORKS_NO_ERROR;
}

static int get_fuse(tr_run *r, const tr_operation *op, uint32_t k, int32_t *v) {
    TRY(get_i32(r, op, k, v));
    if (*v < 0 || *v > 3)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: fused activation %d is not a FuseCode", tr_op_name(op->type), *v);
    return ANEURALNETWORKS_NO_ERROR;
}

/* set_out gives output k its shape, checking it against what the model
 * declared for that operand (where it declared one). */
static int set_out(tr_run *r, const tr_operation *op, uint32_t k, uint32_t rank, const uint32_t *dims) {
    tr_tensor *t = OUT(r, op, k);
    const tr_operand *o = &r->model->opd[op->out[k]];
    if (o->rank != 0 && o->rank != rank)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: output %u declared with rank %u, the operation gives rank %u",
                       tr_op_name(op->type), k, o->rank, rank);
    for (uint32_t i = 0; i < rank && o->rank != 0; i++)
        if (o->dims[i] != 0 && o->dims[i] != dims[i])
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: output %u dimension %u declared %u, the operation gives %u",
                           tr_op_name(op->type), k, i, o->dims[i], dims[i]);
    t->rank = rank;
    memcpy(t->dims, dims, rank * sizeof dims[0]);
    return ANEURALNETWORKS_NO_ERROR;
}

static int need_known(const tr_operation *op, const tr_tensor *t, const char *role) {
    if (t->rank == 0 || tr_elems(t->dims, t->rank) == 0)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %s has an unknown or empty shape", tr_op_name(op->type), role);
    return ANEURALNETWORKS_NO_ERROR;
}

/* window_out computes one spatial output size and its padding. */
static int window_out(const tr_operation *op, int32_t scheme, bool implicit, int in, int filter, int stride, int dil,
                      int *pad_head, int *pad_tail, uint32_t *out) {
    int eff = (filter - 1) * dil + 1;
    if (stride <= 0 || filter <= 0 || dil <= 0)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: stride %d, filter %d and dilation %d must be positive",
                       tr_op_name(op->type), stride, filter, dil);
    int n;
    if (implicit) {
        if (scheme == ANEURALNETWORKS_PADDING_SAME) {
            n = (in + stride - 1) / stride;
            int total = (n - 1) * stride + eff - in;
            if (total < 0) total = 0;
            *pad_head = total / 2;
            *pad_tail = total - total / 2;
        } else if (scheme == ANEURALNETWORKS_PADDING_VALID) {
            n = (in - eff + stride) / stride;
            *pad_head = *pad_tail = 0;
        } else {
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: padding scheme %d is neither SAME (1) nor VALID (2)",
                           tr_op_name(op->type), scheme);
        }
    } else {
        if (*pad_head < 0 || *pad_tail < 0)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: negative padding", tr_op_name(op->type));
        n = (in + *pad_head + *pad_tail - eff) / stride + 1;
    }
    if (n <= 0)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: window %d does not fit input size %d", tr_op_name(op->type), eff, in);
    *out = (uint32_t)n;
    return ANEURALNETWORKS_NO_ERROR;
}

/* read_window reads the padding, strides, filter size, multiplier,
 * activation, layout and dilation operands of a conv or pool. */
static int read_window(tr_run *r, const tr_operation *op, tr_window *w, bool *implicit, int32_t *scheme) {
    int32_t t = op->type;
    bool conv = t == ANEURALNETWORKS_CONV_2D || t == ANEURALNETWORKS_DEPTHWISE_CONV_2D;
    bool dw = t == ANEURALNETWORKS_DEPTHWISE_CONV_2D;
    uint32_t first = conv ? 3 : 1; /* first scalar operand */
    uint32_t implicit_n = conv ? (dw ? 8 : 7) : 7;
    /* The implicit form's optional layout operand is a BOOL where the
     * explicit form has an INT32 (see conv_implicit). */
    *implicit = op->nin == implicit_n ||
                (op->nin > implicit_n && r->model->opd[op->in[implicit_n]].type == ANEURALNETWORKS_BOOL);
    int32_t v[10];
    uint32_t base = *implicit ? implicit_n : implicit_n + 3;
    for (uint32_t k = first; k < base; k++) TRY(get_i32(r, op, k, &v[k - first]));
    int i = 0;
    memset(w, 0, sizeof *w);
    w->dil_w = w->dil_h = 1;
    w->mult = 1;
    if (*implicit) {
        *scheme = v[i++];
    } else {
        w->pad_l = v[i++], w->pad_r = v[i++], w->pad_t = v[i++], w->pad_b = v[i++];
    }
    w->stride_w = v[i++], w->stride_h = v[i++];
    if (!conv) w->filter_w = v[i++], w->filter_h = v[i++];
    if (dw) w->mult = v[i++];
    w->fuse = v[i++];
    if (w->fuse < 0 || w->fuse > 3)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: fused activation %d is not a FuseCode", tr_op_name(t), w->fuse);
    if (op->nin > base) {
        bool nchw;
        TRY(get_bool(r, op, base, &nchw));
        if (nchw)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: NCHW layout: the test runtime computes NHWC only",
                           tr_op_name(t));
    }
    if (op->nin > base + 1) {
        TRY(get_i32(r, op, base + 1, &w->dil_w));
        TRY(get_i32(r, op, base + 2, &w->dil_h));
    }
    return ANEURALNETWORKS_NO_ERROR;
}

static int prepare_window(tr_run *r, const tr_operation *op, tr_window *w) {
    bool implicit;
    int32_t scheme = 0;
    TRY(read_window(r, op, w, &implicit, &scheme));
    tr_tensor *in = IN(r, op, 0);
    TRY(need_known(op, in, "input"));
    int32_t t = op->type;
    bool conv = t == ANEURALNETWORKS_CONV_2D || t == ANEURALNETWORKS_DEPTHWISE_CONV_2D;
    uint32_t out_c = in->dims[3];
    if (conv) {
        tr_tensor *f = IN(r, op, 1), *b = IN(r, op, 2);
        TRY(need_known(op, f, "filter"));
        w->filter_h = (int)f->dims[1];
        w->filter_w = (int)f->dims[2];
        if (t == ANEURALNETWORKS_CONV_2D) {
            if (f->dims[3] != in->dims[3])
                return tr_fail(ANEURALNETWORKS_BAD_DATA, "CONV_2D: filter depth %u differs from input depth %u",
                               f->dims[3], in->dims[3]);
            out_c = f->dims[0];
        } else {
            if (f->dims[0] != 1 || w->mult <= 0 || f->dims[3] != in->dims[3] * (uint32_t)w->mult)
                return tr_fail(ANEURALNETWORKS_BAD_DATA, "DEPTHWISE_CONV_2D: filter [%u,%u,%u,%u] does not match "
                               "input depth %u with depth multiplier %d", f->dims[0], f->dims[1], f->dims[2],
                               f->dims[3], in->dims[3], w->mult);
            out_c = f->dims[3];
        }
        if (b->rank != 1 || b->dims[0] != out_c)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: bias has %u elements, want %u", tr_op_name(t),
                           b->rank ? b->dims[0] : 0, out_c);
        if (f->scales && f->scale_count != out_c)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: %u per-channel scales for %u output channels",
                           tr_op_name(t), f->scale_count, out_c);
    }
    uint32_t dims[4] = {in->dims[0], 0, 0, out_c};
    TRY(window_out(op, scheme, implicit, (int)in->dims[1], w->filter_h, w->stride_h, w->dil_h, &w->pad_t, &w->pad_b,
                   &dims[1]));
    TRY(window_out(op, scheme, implicit, (int)in->dims[2], w->filter_w, w->stride_w, w->dil_w, &w->pad_l, &w->pad_r,
                   &dims[2]));
    return set_out(r, op, 0, 4, dims);
}

static int prepare_fully_connected(tr_run *r, const tr_operation *op, int32_t *fuse) {
    tr_tensor *in = IN(r, op, 0), *w = IN(r, op, 1), *b = IN(r, op, 2);
    TRY(need_known(op, in, "input"));
    TRY(need_known(op, w, "weights"));
    TRY(get_fuse(r, op, 3, fuse));
    size_t n = tr_elems(in->dims, in->rank), depth = w->dims[1];
    if (n % depth != 0)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "FULLY_CONNECTED: input of %zu elements is not a multiple of the "
                       "weights' input size %zu", n, depth);
    if (b->rank != 1 || b->dims[0] != w->dims[0])
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "FULLY_CONNECTED: bias has %u elements, want %u",
                       b->rank ? b->dims[0] : 0, w->dims[0]);
    uint32_t dims[2] = {(uint32_t)(n / depth), w->dims[0]};
    return set_out(r, op, 0, 2, dims);
}

/* broadcast_shape is NNAPI's (numpy's) broadcast of two shapes. */
static int broadcast_shape(const tr_operation *op, const tr_tensor *a, const tr_tensor *b, uint32_t *rank,
                           uint32_t *dims) {
    uint32_t n = a->rank > b->rank ? a->rank : b->rank;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t da = i < n - a->rank ? 1 : a->dims[i - (n - a->rank)];
        uint32_t db = i < n - b->rank ? 1 : b->dims[i - (n - b->rank)];
        if (da != db && da != 1 && db != 1)
            return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: shapes cannot be broadcast (dimension %u: %u and %u)",
                           tr_op_name(op->type), i, da, db);
        dims[i] = da == 1 ? db : da;
    }
    *rank = n;
    return ANEURALNETWORKS_NO_ERROR;
}

static int prepare_reshape(tr_run *r, const tr_operation *op) {
    tr_tensor *in = IN(r, op, 0), *s = IN(r, op, 1);
    TRY(need_known(op, in, "input"));
    size_t n = tr_elems(in->dims, in->rank);
    uint32_t dims[TR_MAX_RANK], rank = 0;
    if (op->type == ANEURALNETWORKS_SQUEEZE) {
        bool drop[TR_MAX_RANK] = {false};
        if (s->omitted || s->dims[0] == 0) {
            for (uint32_t i = 0; i < in->rank; i++) drop[i] = in->dims[i] == 1;
        } else {
            const void *p = NULL;
            TRY(value(r, op, 1, &p));
            for (uint32_t i = 0; i < s->dims[0]; i++) {
                int32_t d;
                memcpy(&d, (const int32_t *)p + i, sizeof d);
                if (d < 0) d += (int32_t)in->rank;
                if (d < 0 || d >= (int32_t)in->rank || in->dims[d] != 1)
                    return tr_fail(ANEURALNETWORKS_BAD_DATA, "SQUEEZE: dimension %d is not a dimension of size 1", d);
                drop[d] = true;
            }
        }
        for (uint32_t i = 0; i < in->rank; i++)
            if (!drop[i]) dims[rank++] = in->dims[i];
        return set_out(r, op, 0, rank, dims);
    }
    const void *p = NULL;
    TRY(value(r, op, 1, &p));
    rank = s->dims[0];
    if (rank > 4) return tr_fail(ANEURALNETWORKS_BAD_DATA, "RESHAPE: output rank %u above 4", rank);
    int unknown = -1;
    size_t known = 1;
    for (uint32_t i = 0; i < rank; i++) {
        int32_t d;
        memcpy(&d, (const int32_t *)p + i, sizeof d);
        if (d == -1 && unknown < 0) {
            unknown = (int)i;
            continue;
        }
        if (d <= 0) return tr_fail(ANEURALNETWORKS_BAD_DATA, "RESHAPE: shape entry %u is %d", i, d);
        dims[i] = (uint32_t)d;
        known *= (size_t)d;
    }
    if (unknown >= 0) {
        if (known == 0 || n % known) return tr_fail(ANEURALNETWORKS_BAD_DATA, "RESHAPE: cannot infer the -1 dimension");
        dims[unknown] = (uint32_t)(n / known);
        known *= dims[unknown];
    }
    if (known != n)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "RESHAPE: shape has %zu elements, input has %zu", known, n);
    return set_out(r, op, 0, rank, dims);
}

static int norm_axis(const tr_operation *op, int32_t axis, uint32_t rank, int *out) {
    if (axis < 0) axis += (int32_t)rank;
    if (axis < 0 || axis >= (int32_t)rank)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "%s: axis out of range for rank %u", tr_op_name(op->type), rank);
    *out = axis;
    return ANEURALNETWORKS_NO_ERROR;
}

static int prepare_concat(tr_run *r, const tr_operation *op, int *axis) {
    uint32_t n = op->nin - 1;
    int32_t a;
    TRY(get_i32(r, op, n, &a));
    tr_tensor *first = IN(r, op, 0);
    TRY(need_known(op, first, "input 0"));
    TRY(norm_axis(op, a, first->rank, axis));
    uint32_t dims[TR_MAX_RANK];
    memcpy(dims, first->dims, sizeof dims);
    dims[*axis] = 0;
    for (uint32_t k = 0; k < n; k++) {
        tr_tensor *t = IN(r, op, k);
        TRY(need_known(op, t, "an input"));
        for (uint32_t i = 0; i < first->rank; i++)
            if (t->rank != first->rank || ((int)i != *axis && t->dims[i] != first->dims[i]))
                return tr_fail(ANEURALNETWORKS_BAD_DATA, "CONCATENATION: input %u shape differs from input 0 outside "
                               "the axis", k);
        dims[*axis] += t->dims[*axis];
    }
    return set_out(r, op, 0, first->rank, dims);
}

static int prepare_split(tr_run *r, const tr_operation *op, int *axis) {
    tr_tensor *in = IN(r, op, 0);
    int32_t a, num;
    TRY(need_known(op, in, "input"));
    TRY(get_i32(r, op, 1, &a));
    TRY(get_i32(r, op, 2, &num));
    TRY(norm_axis(op, a, in->rank, axis));
    if (num <= 0 || (uint32_t)num != op->nout || in->dims[*axis] % (uint32_t)num)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "SPLIT: %d splits of dimension %u with %u outputs", num,
                       in->dims[*axis], op->nout);
    uint32_t dims[TR_MAX_RANK];
    memcpy(dims, in->dims, sizeof dims);
    dims[*axis] /= (uint32_t)num;
    for (uint32_t k = 0; k < op->nout; k++) TRY(set_out(r, op, k, in->rank, dims));
    return ANEURALNETWORKS_NO_ERROR;
}

static int prepare_pad(tr_run *r, const tr_operation *op, int32_t *pads) {
    tr_tensor *in = IN(r, op, 0), *p = IN(r, op, 1);
    TRY(need_known(op, in, "input"));
    if (p->dims[0] != in->rank || p->dims[1] != 2)
        return tr_fail(ANEURALNETWORKS_BAD_DATA, "PAD: paddings shape [%u,%u], want [%u,2]", p->dims[0], p->dims[1],
                       in->rank);
    const void *v = NULL;
    TRY(value(r, op, 1, &v));
    memcpy(pads, v, in->rank * 2 * sizeof(int32_t));
    uint32_t dims[TR_MAX_RANK];
    for (uint32_t i = 0; i < in->rank; i++) {
        if (pads[2 * i] < 0 || pads[2 * i + 1] < 0) return tr_fail(ANEURALNETWORKS_BAD_DATA, "PAD: negative padding");
        dims[i] = in->dims[i] + (uint32_t)pads[2 * i] + (uint32_t)pads[2 * i + 1];
    }
    return set_out(r, op, 0, in->rank, dims);
}

/* prepare_mean finds the reduced dimensions; special4d is TFLite's
 * keep_dims mean over axes {1, 2} of a 4-D tensor, which has its own
 * integer arithmetic. */
static int prepare_mean(tr_run *r, const tr_operation *op, bool *reduced, bool *special4d) {
    tr_tensor *in = IN(r, op, 0), *ax = IN(r, op, 1);
    TRY(need_known(op, in, "input"));
    const void *v = NULL;
    int32_t keep;
    TRY(value(r, op, 1, &v));
    TRY(get_i32(r, op, 2, &keep));
    memset(reduced, 0, TR_MAX_RANK * sizeof *reduced);
    int32_t raw[2] = {0, 0};
    for (uint32_t i = 0; i < ax->dims[0]; i++) {
        int32_t a;
        int na = 0;
        memcpy(&a, (const int32_t *)v + i, sizeof a);
        if (i < 2) raw[i] = a;
        TRY(norm_axis(op, a, in->rank, &na));
        reduced[na] = true;
    }
    *special4d = keep && in->rank == 4 && ax->dims[0] == 2 &&
                 ((raw[0] == 1 && raw[1] == 2) || (raw[0] == 2 && raw[1] == 1));
    uint32_t dims[TR_MAX_RANK], rank = 0;
    for (uint32_t i = 0; i < in->rank; i++) {
        if (!reduced[i])
            dims[rank++] = in->dims[i];
        else if (keep)
            dims[rank++] = 1;
    }
    if (rank == 0) dims[rank++] = 1; /* NNAPI outputs a 1-D tensor for a full reduction */
    return set_out(r, op, 0, rank, dims);
}

static int prepare_same_shape(tr_run *r, const tr_operation *op) {
    tr_tensor *in = IN(r, op, 0);
    TRY(need_known(op, in, "input"));
    return set_out(r, op, 0, in->rank, in->dims);
}

/* run_op computes the output shapes of op from its inputs and checks its
 * parameter values, then (eval) runs its kernel: tr_op_prepare and
 * tr_op_eval share the parsing this way. */
static int run_op(tr_run *r, const tr_operation *op, bool eval) {
    int32_t fuse = 0;
    tr_window w;
    int axis = 0;
    int32_t pads[2 * TR_MAX_RANK];
    bool reduced[TR_MAX_RANK], special4d;
    uint32_t rank = 0, dims[TR_MAX_RANK];
    switch (op->type) {
    case ANEURALNETWORKS_CONV_2D:
    case ANEURALNETWORKS_DEPTHWISE_CONV_2D:
        TRY(prepare_window(r, op, &w));
        return eval ? tr_k_conv(r, op, op->type == ANEURALNETWORKS_DEPTHWISE_CONV_2D, &w) : 0;
    case ANEURALNETWORKS_AVERAGE_POOL_2D:
    case ANEURALNETWORKS_MAX_POOL_2D:
        TRY(prepare_window(r, op, &w));
        return eval ? tr_k_pool(r, op, op->type == ANEURALNETWORKS_MAX_POOL_2D, &w) : 0;
    case ANEURALNETWORKS_FULLY_CONNECTED:
        TRY(prepare_fully_connected(r, op, &fuse));
        return eval ? tr_k_fully_connected(r, op, fuse) : 0;
    case ANEURALNETWORKS_ADD:
    case ANEURALNETWORKS_MUL:
    case ANEURALNETWORKS_SUB:
        TRY(need_known(op, IN(r, op, 0), "input 0"));
        TRY(need_known(op, IN(r, op, 1), "input 1"));
        TRY(get_fuse(r, op, 2, &fuse));
        TRY(broadcast_shape(op, IN(r, op, 0), IN(r, op, 1), &rank, dims));
        TRY(set_out(r, op, 0, rank, dims));
        return eval ? tr_k_binary(r, op, fuse) : 0;
    case ANEURALNETWORKS_SOFTMAX: {
        const void *p = NULL;
        float beta;
        TRY(value(r, op, 1, &p));
        memcpy(&beta, p, sizeof beta);
        if (!(beta > 0)) return tr_fail(ANEURALNETWORKS_BAD_DATA, "SOFTMAX: beta %g must be positive", beta);
        if (op->nin == 3) {
            int32_t a;
            TRY(get_i32(r, op, 2, &a));
            TRY(norm_axis(op, a, IN(r, op, 0)->rank, &axis));
            if ((uint32_t)axis != IN(r, op, 0)->rank - 1)
                return tr_fail(ANEURALNETWORKS_BAD_DATA, "SOFTMAX: the test runtime computes the last axis only");
        }
        TRY(prepare_same_shape(r, op));
        return eval ? tr_k_softmax(r, op, beta) : 0;
    }
    case ANEURALNETWORKS_LOGISTIC:
    case ANEURALNETWORKS_TANH:
    case ANEURALNETWORKS_RELU:
    case ANEURALNETWORKS_RELU1:
    case ANEURALNETWORKS_RELU6:
    case ANEURALNETWORKS_QUANTIZE:
    case ANEURALNETWORKS_DEQUANTIZE:
        TRY(prepare_same_shape(r, op));
        return eval ? tr_k_unary(r, op) : 0;
    case ANEURALNETWORKS_RESHAPE:
    case ANEURALNETWORKS_SQUEEZE:
        TRY(prepare_reshape(r, op));
        return eval ? tr_k_copy(r, op) : 0;
    case ANEURALNETWORKS_CONCATENATION:
        TRY(prepare_concat(r, op, &axis));
        return eval ? tr_k_concat(r, op, axis) : 0;
    case ANEURALNETWORKS_SPLIT:
        TRY(prepare_split(r, op, &axis));
        return eval ? tr_k_split(r, op, axis) : 0;
    case ANEURALNETWORKS_PAD:
        TRY(prepare_pad(r, op, pads));
        return eval ? tr_k_pad(r, op, pads) : 0;
    case ANEURALNETWORKS_MEAN:
        TRY(prepare_mean(r, op, reduced, &special4d));
        return eval ? tr_k_mean(r, op, reduced, special4d) : 0;
    }
    return tr_fail(ANEURALNETWORKS_OP_FAILED, "%s: the test runtime has no kernel for it", tr_op_name(op->type));
}

int tr_op_prepare(tr_run *r, const tr_operation *op) { return run_op(r, op, false); }
int tr_op_eval(tr_run *r, const tr_operation *op) { return run_op(r, op, true); }
