/*
 * kernels.c: reference arithmetic for the operations the test runtime
 * computes, TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM and
 * TENSOR_QUANT8_ASYMM_SIGNED (with TENSOR_QUANT8_SYMM_PER_CHANNEL filters).
 *
 * The quantized arithmetic is TensorFlow Lite 2.9's as it runs on x86-64
 * (the kernels its builtin resolver picks), so that a model delegated here
 * gives the same bytes as TFLite on the CPU; it follows delego's own Go
 * kernels (core/kernels), which hold that arithmetic bit-exact:
 *   - multipliers: QuantizeMultiplier (frexp, Q31, round half away);
 *   - CONV_2D and FULLY_CONNECTED requantize as ruy does on x86
 *     ((x*m + 2^30) >> 31, then a rounding right shift with ties upward);
 *     DEPTHWISE_CONV_2D with MultiplyByQuantizedMultiplier (ties away);
 *   - uint8 conv and every FULLY_CONNECTED use the legacy multiplier
 *     (input*filter scale in float32), int8 conv/depthwise the per-channel
 *     double one;
 *   - 8-bit SOFTMAX, LOGISTIC and TANH are TFLite's float lookup tables built
 *     with glibc's expf/tanhf;
 *   - quantized AVERAGE_POOL_2D rounds half away from zero; MEAN has TFLite's
 *     three paths (4-D keep_dims spatial mean, equal quantization, float).
 * Float results follow the same formulas; their summation order may differ
 * from TFLite's by float rounding.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testrt.h"

#define TRY(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)

static tr_tensor *IN(tr_run *r, const tr_operation *op, uint32_t k) { return &r->t[op->in[k]]; }
static tr_tensor *OUT(tr_run *r, const tr_operation *op, uint32_t k) { return &r->t[op->out[k]]; }

static size_t count(const tr_tensor *t) { return tr_elems(t->dims, t->rank); }

/* ---- TFLite's fixed-point helpers -------------------------------------------------------- */

void tr_k_quantize_multiplier(double real, int32_t *mult, int *shift) {
    if (real == 0) {
        *mult = 0, *shift = 0;
        return;
    }
    int exp;
    double q = frexp(real, &exp);
    int64_t q_fixed = (int64_t)round(q * 2147483648.0);
    if (q_fixed == (int64_t)1 << 31) {
        q_fixed /= 2;
        exp++;
    }
    if (exp < -31) {
        *mult = 0, *shift = 0;
        return;
    }
    *mult = (int32_t)q_fixed;
    *shift = exp;
}

/* srdhm is SaturatingRoundingDoublingHighMul: the high half of 2*a*b rounded
 * to nearest, saturating MIN*MIN. */
static int32_t srdhm(int32_t a, int32_t b) {
    if (a == b && a == INT32_MIN) return INT32_MAX;
    int64_t ab = (int64_t)a * b;
    int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* rdbpot is RoundingDivideByPOT: x / 2^e rounded half away from zero. */
static int32_t rdbpot(int32_t x, int e) {
    if (e == 0) return x;
    int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    int32_t rem = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (rem > threshold ? 1 : 0);
}

static int32_t shl_wrap(int32_t x, int s) { return (int32_t)((uint32_t)x << s); }

/* tr_k_mbqm is MultiplyByQuantizedMultiplier: x * m * 2^(shift-31). */
int32_t tr_k_mbqm(int32_t x, int32_t m, int shift) {
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return rdbpot(srdhm(shl_wrap(x, left), m), right);
}

static int32_t clamp32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }
static float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* requant_ruy applies a multiplier the way ruy's x86 kernels do. */
static int32_t requant_ruy(int32_t acc, int32_t m, int shift) {
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t x = shl_wrap(acc, left);
    int64_t r = (x * m + (1 << 30)) >> 31;
    if (right > 0) r = (r + ((int64_t)1 << (right - 1))) >> right;
    return (int32_t)r;
}

/* ---- element access ----------------------------------------------------------------------- */

static bool is_q8(int32_t t) {
    return t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED ||
           t == ANEURALNETWORKS_TENSOR_QUANT8_SYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL;
}

static void qrange(int32_t type, int32_t *lo, int32_t *hi) {
    if (type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM) *lo = 0, *hi = 255;
    else *lo = -128, *hi = 127;
}

static int32_t qget(const tr_tensor *t, size_t i) {
    if (t->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM) return ((const uint8_t *)t->data)[i];
    if (t->type == ANEURALNETWORKS_TENSOR_INT32) return ((const int32_t *)t->data)[i];
    return ((const int8_t *)t->data)[i];
}

static void qset(tr_tensor *t, size_t i, int32_t v) {
    if (t->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM) ((uint8_t *)t->data)[i] = (uint8_t)v;
    else ((int8_t *)t->data)[i] = (int8_t)v;
}

static float *F(const tr_tensor *t) { return (float *)t->data; }

/* widen returns the values of a quantized tensor minus `offset`, as int32. */
static int32_t *widen(const tr_tensor *t, int32_t offset) {
    size_t n = count(t);
    int32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < n; i++) v[i] = qget(t, i) - offset;
    return v;
}

/* fuse_range_q is the clamp range of a fused activation on a quantized
 * output (TFLite's CalculateActivationRangeQuantized). */
static void fuse_range_q(int32_t fuse, const tr_tensor *out, int32_t *lo, int32_t *hi) {
    qrange(out->type, lo, hi);
    float s = out->scale;
    int32_t zp = out->zero_point;
#define QV(f) (zp + (int32_t)roundf((f) / s))
    if (fuse == ANEURALNETWORKS_FUSED_RELU) {
        if (QV(0.0f) > *lo) *lo = QV(0.0f);
    } else if (fuse == ANEURALNETWORKS_FUSED_RELU6) {
        if (QV(0.0f) > *lo) *lo = QV(0.0f);
        if (QV(6.0f) < *hi) *hi = QV(6.0f);
    } else if (fuse == ANEURALNETWORKS_FUSED_RELU1) {
        if (QV(-1.0f) > *lo) *lo = QV(-1.0f);
        if (QV(1.0f) < *hi) *hi = QV(1.0f);
    }
#undef QV
}

static void fuse_range_f(int32_t fuse, float *lo, float *hi) {
    *lo = -FLT_MAX, *hi = FLT_MAX;
    if (fuse == ANEURALNETWORKS_FUSED_RELU) *lo = 0;
    if (fuse == ANEURALNETWORKS_FUSED_RELU6) *lo = 0, *hi = 6;
    if (fuse == ANEURALNETWORKS_FUSED_RELU1) *lo = -1, *hi = 1;
}

static int oom(void) { return tr_fail(ANEURALNETWORKS_OUT_OF_MEMORY, "out of memory in a kernel"); }

/* ---- CONV_2D and DEPTHWISE_CONV_2D ------------------------------------------------------ */

/* The sizes shared by the float and quantized convolutions. A depthwise
 * output channel oc reads input channel oc / multiplier. */
typedef struct {
    int n, h, w, c;      /* input */
    int oh, ow, oc;      /* output */
    int kh, kw;          /* filter */
    bool dw;
    const tr_window *win;
} conv_geom;

static void conv_float(const conv_geom *g, const float *x, const float *wt, const float *bias, float *y, float lo,
                       float hi) {
    const tr_window *w = g->win;
    for (int b = 0; b < g->n; b++)
        for (int oy = 0; oy < g->oh; oy++)
            for (int ox = 0; ox < g->ow; ox++)
                for (int oc = 0; oc < g->oc; oc++) {
                    float acc = bias ? bias[oc] : 0;
                    int ic0 = g->dw ? oc / w->mult : 0, ic1 = g->dw ? ic0 + 1 : g->c;
                    for (int ky = 0; ky < g->kh; ky++) {
                        int iy = oy * w->stride_h - w->pad_t + ky * w->dil_h;
                        if (iy < 0 || iy >= g->h) continue;
                        for (int kx = 0; kx < g->kw; kx++) {
                            int ix = ox * w->stride_w - w->pad_l + kx * w->dil_w;
                            if (ix < 0 || ix >= g->w) continue;
                            const float *xp = x + (((size_t)b * g->h + iy) * g->w + ix) * g->c;
                            if (g->dw) {
                                acc += xp[ic0] * wt[((size_t)ky * g->kw + kx) * g->oc + oc];
                                continue;
                            }
                            const float *wp = wt + (((size_t)oc * g->kh + ky) * g->kw + kx) * g->c;
                            for (int ic = ic0; ic < ic1; ic++) acc += xp[ic] * wp[ic];
                        }
                    }
                    y[(((size_t)b * g->oh + oy) * g->ow + ox) * g->oc + oc] = clampf(acc, lo, hi);
                }
}

static void conv_quant(const conv_geom *g, const int32_t *x, const int32_t *wt, const int32_t *bias,
                       const int32_t *mult, const int *shift, tr_tensor *out, int32_t lo, int32_t hi) {
    const tr_window *w = g->win;
    int32_t zp = out->zero_point;
    for (int b = 0; b < g->n; b++)
        for (int oy = 0; oy < g->oh; oy++)
            for (int ox = 0; ox < g->ow; ox++)
                for (int oc = 0; oc < g->oc; oc++) {
                    int32_t acc = bias ? bias[oc] : 0;
                    int ic0 = g->dw ? oc / w->mult : 0, ic1 = g->dw ? ic0 + 1 : g->c;
                    for (int ky = 0; ky < g->kh; ky++) {
                        int iy = oy * w->stride_h - w->pad_t + ky * w->dil_h;
                        if (iy < 0 || iy >= g->h) continue;
                        for (int kx = 0; kx < g->kw; kx++) {
                            int ix = ox * w->stride_w - w->pad_l + kx * w->dil_w;
                            if (ix < 0 || ix >= g->w) continue;
                            const int32_t *xp = x + (((size_t)b * g->h + iy) * g->w + ix) * g->c;
                            if (g->dw) {
                                acc += xp[ic0] * wt[((size_t)ky * g->kw + kx) * g->oc + oc];
                                continue;
                            }
                            const int32_t *wp = wt + (((size_t)oc * g->kh + ky) * g->kw + kx) * g->c;
                            for (int ic = ic0; ic < ic1; ic++) acc += xp[ic] * wp[ic];
                        }
                    }
                    /* TFLite 2.9 on x86: ruy rounding for CONV_2D, its own
                     * MultiplyByQuantizedMultiplier for DEPTHWISE_CONV_2D. */
                    int32_t v = g->dw ? tr_k_mbqm(acc, mult[oc], shift[oc]) : requant_ruy(acc, mult[oc], shift[oc]);
                    qset(out, (((size_t)b * g->oh + oy) * g->ow + ox) * g->oc + oc, clamp32(v + zp, lo, hi));
                }
}

/* conv_multipliers computes one requantization multiplier per output
 * channel as TFLite's PopulateConvolutionQuantizationParams does: the
 * legacy float32 product for uint8 inputs with a per-tensor filter, else
 * double(input) * double(filter[c]) / double(output). */
static void conv_multipliers(const tr_tensor *in, const tr_tensor *f, const tr_tensor *out, int oc, int32_t *mult,
                             int *shift) {
    for (int c = 0; c < oc; c++) {
        double real;
        if (f->scales)
            real = (double)in->scale * (double)f->scales[c] / (double)out->scale;
        else if (in->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM)
            real = (double)(in->scale * f->scale) / (double)out->scale;
        else
            real = (double)in->scale * (double)f->scale / (double)out->scale;
        tr_k_quantize_multiplier(real, &mult[c], &shift[c]);
    }
}

int tr_k_conv(tr_run *r, const tr_operation *op, bool depthwise, const tr_window *w) {
    tr_tensor *in = IN(r, op, 0), *f = IN(r, op, 1), *b = IN(r, op, 2), *out = OUT(r, op, 0);
    conv_geom g = {(int)in->dims[0], (int)in->dims[1], (int)in->dims[2], (int)in->dims[3], (int)out->dims[1],
                   (int)out->dims[2], (int)out->dims[3], (int)f->dims[1], (int)f->dims[2], depthwise, w};
    if (in->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
        float lo, hi;
        fuse_range_f(w->fuse, &lo, &hi);
        conv_float(&g, F(in), F(f), b->omitted ? NULL : F(b), F(out), lo, hi);
        return ANEURALNETWORKS_NO_ERROR;
    }
    int32_t lo, hi;
    fuse_range_q(w->fuse, out, &lo, &hi);
    int32_t *x = widen(in, in->zero_point), *wt = widen(f, f->scales ? 0 : f->zero_point);
    int32_t *mult = malloc((size_t)g.oc * sizeof *mult);
    int *shift = malloc((size_t)g.oc * sizeof *shift);
    int rc = ANEURALNETWORKS_NO_ERROR;
    if (!x || !wt || !mult || !shift) {
        rc = oom();
    } else {
        conv_multipliers(in, f, out, g.oc, mult, shift);
        conv_quant(&g, x, wt, b->omitted ? NULL : (const int32_t *)b->data, mult, shift, out, lo, hi);
    }
    free(x), free(wt), free(mult), free(shift);
    return rc;
}

/* ---- FULLY_CONNECTED ---------------------------------------------------------------------- */

int tr_k_fully_connected(tr_run *r, const tr_operation *op, int32_t fuse) {
    tr_tensor *in = IN(r, op, 0), *wt = IN(r, op, 1), *b = IN(r, op, 2), *out = OUT(r, op, 0);
    size_t units = wt->dims[0], depth = wt->dims[1], batches = count(in) / depth;
    if (in->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
        float lo, hi;
        fuse_range_f(fuse, &lo, &hi);
        const float *x = F(in), *w = F(wt), *bias = b->omitted ? NULL : F(b);
        for (size_t i = 0; i < batches; i++)
            for (size_t u = 0; u < units; u++) {
                float acc = 0;
                for (size_t k = 0; k < depth; k++) acc += x[i * depth + k] * w[u * depth + k];
                if (bias) acc += bias[u];
                F(out)[i * units + u] = clampf(acc, lo, hi);
            }
        return ANEURALNETWORKS_NO_ERROR;
    }
    int32_t lo, hi, mult;
    int shift;
    fuse_range_q(fuse, out, &lo, &hi);
    /* TFLite's FULLY_CONNECTED uses the legacy multiplier for uint8 and int8. */
    tr_k_quantize_multiplier((double)(in->scale * wt->scale) / (double)out->scale, &mult, &shift);
    int32_t *x = widen(in, in->zero_point), *w = widen(wt, wt->zero_point);
    if (!x || !w) {
        free(x), free(w);
        return oom();
    }
    const int32_t *bias = b->omitted ? NULL : (const int32_t *)b->data;
    for (size_t i = 0; i < batches; i++)
        for (size_t u = 0; u < units; u++) {
            int32_t acc = bias ? bias[u] : 0;
            for (size_t k = 0; k < depth; k++) acc += x[i * depth + k] * w[u * depth + k];
            qset(out, i * units + u, clamp32(requant_ruy(acc, mult, shift) + out->zero_point, lo, hi));
        }
    free(x), free(w);
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- AVERAGE_POOL_2D and MAX_POOL_2D ---------------------------------------------------- */

int tr_k_pool(tr_run *r, const tr_operation *op, bool is_max, const tr_window *w) {
    tr_tensor *in = IN(r, op, 0), *out = OUT(r, op, 0);
    int n = (int)in->dims[0], h = (int)in->dims[1], wd = (int)in->dims[2], c = (int)in->dims[3];
    int oh = (int)out->dims[1], ow = (int)out->dims[2];
    bool fl = in->type == ANEURALNETWORKS_TENSOR_FLOAT32;
    float flo, fhi;
    int32_t qlo, qhi;
    fuse_range_f(w->fuse, &flo, &fhi);
    if (!fl) fuse_range_q(w->fuse, out, &qlo, &qhi);
    for (int b = 0; b < n; b++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                int y0 = oy * w->stride_h - w->pad_t, x0 = ox * w->stride_w - w->pad_l;
                int fy0 = y0 < 0 ? -y0 : 0, fy1 = w->filter_h < h - y0 ? w->filter_h : h - y0;
                int fx0 = x0 < 0 ? -x0 : 0, fx1 = w->filter_w < wd - x0 ? w->filter_w : wd - x0;
                int cells = (fy1 - fy0) * (fx1 - fx0);
                if (cells <= 0) return tr_fail(ANEURALNETWORKS_OP_FAILED, "%s: empty pooling window", tr_op_name(op->type));
                for (int ch = 0; ch < c; ch++) {
                    float facc = is_max ? -FLT_MAX : 0;
                    int32_t qacc = is_max ? INT32_MIN : 0;
                    for (int fy = fy0; fy < fy1; fy++)
                        for (int fx = fx0; fx < fx1; fx++) {
                            size_t i = (((size_t)b * h + y0 + fy) * wd + x0 + fx) * c + ch;
                            if (fl) {
                                float v = F(in)[i];
                                facc = is_max ? (v > facc ? v : facc) : facc + v;
                            } else {
                                int32_t v = qget(in, i);
                                qacc = is_max ? (v > qacc ? v : qacc) : qacc + v;
                            }
                        }
                    size_t o = (((size_t)b * oh + oy) * ow + ox) * c + ch;
                    if (fl) {
                        F(out)[o] = clampf(is_max ? facc : facc / (float)cells, flo, fhi);
                        continue;
                    }
                    if (!is_max) /* TFLite rounds the average half away from zero */
                        qacc = qacc > 0 ? (qacc + cells / 2) / cells : (qacc - cells / 2) / cells;
                    qset(out, o, clamp32(qacc, qlo, qhi));
                }
            }
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- ADD, SUB, MUL ----------------------------------------------------------------------- */

/* bcast_offset maps output element i to the element of t it reads under
 * broadcasting. */
static size_t bcast_offset(const tr_tensor *out, const tr_tensor *t, size_t i) {
    size_t off = 0, stride = 1;
    for (int d = (int)out->rank - 1; d >= 0; d--) {
        size_t coord = i % out->dims[d];
        i /= out->dims[d];
        int td = d - (int)(out->rank - t->rank);
        if (td < 0) break;
        if (t->dims[td] != 1) off += coord * stride;
        stride *= t->dims[td];
    }
    return off;
}

int tr_k_binary(tr_run *r, const tr_operation *op, int32_t fuse) {
    tr_tensor *a = IN(r, op, 0), *b = IN(r, op, 1), *out = OUT(r, op, 0);
    size_t n = count(out);
    int32_t t = op->type;
    if (a->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
        float lo, hi;
        fuse_range_f(fuse, &lo, &hi);
        for (size_t i = 0; i < n; i++) {
            float x = F(a)[bcast_offset(out, a, i)], y = F(b)[bcast_offset(out, b, i)];
            float v = t == ANEURALNETWORKS_ADD ? x + y : t == ANEURALNETWORKS_SUB ? x - y : x * y;
            F(out)[i] = clampf(v, lo, hi);
        }
        return ANEURALNETWORKS_NO_ERROR;
    }
    int32_t lo, hi;
    fuse_range_q(fuse, out, &lo, &hi);
    if (t == ANEURALNETWORKS_MUL) {
        /* TFLite's mul.cc: one multiplier for s1*s2/so, taken in float. */
        int32_t m;
        int s;
        tr_k_quantize_multiplier((double)(float)((a->scale * b->scale) / out->scale), &m, &s);
        for (size_t i = 0; i < n; i++) {
            int32_t x = qget(a, bcast_offset(out, a, i)) - a->zero_point;
            int32_t y = qget(b, bcast_offset(out, b, i)) - b->zero_point;
            qset(out, i, clamp32(out->zero_point + tr_k_mbqm(x * y, m, s), lo, hi));
        }
        return ANEURALNETWORKS_NO_ERROR;
    }
    /* TFLite's add.cc / sub.cc for 8 bits: both inputs rescaled to twice the
     * larger input scale with a left shift of 20, then to the output. */
    const int left = 20;
    double twice_max = 2 * (double)(a->scale > b->scale ? a->scale : b->scale);
    double real_out = twice_max / (double)((float)(1 << left) * out->scale);
    int32_t m1, m2, mo;
    int s1, s2, so;
    tr_k_quantize_multiplier((double)a->scale / twice_max, &m1, &s1);
    tr_k_quantize_multiplier((double)b->scale / twice_max, &m2, &s2);
    tr_k_quantize_multiplier(real_out, &mo, &so);
    for (size_t i = 0; i < n; i++) {
        int32_t x = shl_wrap(qget(a, bcast_offset(out, a, i)) - a->zero_point, left);
        int32_t y = shl_wrap(qget(b, bcast_offset(out, b, i)) - b->zero_point, left);
        int32_t sx = tr_k_mbqm(x, m1, s1), sy = tr_k_mbqm(y, m2, s2);
        int32_t sum = t == ANEURALNETWORKS_SUB ? sx - sy : sx + sy;
        qset(out, i, clamp32(tr_k_mbqm(sum, mo, so) + out->zero_point, lo, hi));
    }
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- SOFTMAX (last axis) ------------------------------------------------------------------ */

int tr_k_softmax(tr_run *r, const tr_operation *op, float beta) {
    tr_tensor *in = IN(r, op, 0), *out = OUT(r, op, 0);
    size_t depth = in->dims[in->rank - 1], rows = count(in) / depth;
    if (in->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
        for (size_t rw = 0; rw < rows; rw++) {
            const float *x = F(in) + rw * depth;
            float *y = F(out) + rw * depth;
            float m = x[0];
            for (size_t i = 1; i < depth; i++) m = x[i] > m ? x[i] : m;
            double sum = 0;
            for (size_t i = 0; i < depth; i++) {
                double e = exp((double)((x[i] - m) * beta));
                y[i] = (float)e;
                sum += e;
            }
            double inv = 1 / sum;
            for (size_t i = 0; i < depth; i++) y[i] = (float)((double)y[i] * inv);
        }
        return ANEURALNETWORKS_NO_ERROR;
    }
    /* TFLite's 8-bit softmax: table[255-d] = expf(-input_scale*beta*d). */
    float table[256], scale = -in->scale * beta;
    for (int d = 0; d < 256; d++) table[255 - d] = expf(scale * (float)d);
    int32_t lo, hi;
    qrange(out->type, &lo, &hi);
    bool u8 = out->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
    for (size_t rw = 0; rw < rows; rw++) {
        size_t o = rw * depth;
        int32_t m = qget(in, o);
        for (size_t i = 1; i < depth; i++) m = qget(in, o + i) > m ? qget(in, o + i) : m;
        int32_t base = 255 - m;
        float sum = 0;
        for (size_t i = 0; i < depth; i++) sum += table[base + qget(in, o + i)];
        float inv = 1 / (sum * out->scale);
        for (size_t i = 0; i < depth; i++) {
            float p = table[base + qget(in, o + i)] * inv;
            /* uint8 rounds by adding 0.5 and truncating, ignoring the zero
             * point (0); int8 uses roundf plus the zero point. */
            int32_t q = u8 ? (int32_t)(p + 0.5f) : (int32_t)roundf(p) + out->zero_point;
            qset(out, o + i, clamp32(q, lo, hi));
        }
    }
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- element-wise unary operations -------------------------------------------------------- */

/* apply_lut maps every 8-bit value through a 256-entry table, indexed by
 * value - type minimum, as TFLite does for LOGISTIC, TANH and RELU*. */
static void apply_lut(const tr_tensor *in, tr_tensor *out, const int32_t lut[256]) {
    size_t n = count(in);
    int32_t base = in->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 0 : -128;
    for (size_t i = 0; i < n; i++) qset(out, i, lut[qget(in, i) - base]);
}

static void lut_transcendental(const tr_tensor *in, const tr_tensor *out, bool tanh_fn, int32_t lut[256]) {
    int32_t lo, hi, base = in->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 0 : -128;
    qrange(out->type, &lo, &hi);
    float inverse = 1 / out->scale, out_zp = (float)out->zero_point;
    for (int32_t k = 0; k < 256; k++) {
        float x = in->scale * (float)(k + base - in->zero_point);
        float y = tanh_fn ? tanhf(x) : 1 / (1 + expf(-x));
        lut[k] = clamp32((int32_t)(roundf(y * inverse) + out_zp), lo, hi);
    }
}

/* lut_relu is TFLite's quantized RELU/RELU1/RELU6: requantize to the output
 * scale, clamp to the quantized bounds. */
static void lut_relu(const tr_tensor *in, const tr_tensor *out, float blo, float bhi, bool has_hi, int32_t lut[256]) {
    int32_t tmin, tmax, base = in->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 0 : -128;
    qrange(out->type, &tmin, &tmax);
    int32_t m;
    int s;
    tr_k_quantize_multiplier((double)(in->scale / out->scale), &m, &s);
    int32_t qmin = out->zero_point + (int32_t)roundf(blo / out->scale);
    int32_t qmax = has_hi ? out->zero_point + (int32_t)roundf(bhi / out->scale) : tmax;
    if (qmin < tmin) qmin = tmin;
    if (qmax > tmax) qmax = tmax;
    for (int32_t k = 0; k < 256; k++)
        lut[k] = clamp32(out->zero_point + tr_k_mbqm(k + base - in->zero_point, m, s), qmin, qmax);
}

static int unary_float(int32_t t, const tr_tensor *in, tr_tensor *out) {
    size_t n = count(in);
    for (size_t i = 0; i < n; i++) {
        float v = F(in)[i];
        switch (t) {
        case ANEURALNETWORKS_LOGISTIC: v = (float)(1 / (1 + exp(-(double)v))); break;
        case ANEURALNETWORKS_TANH: v = (float)tanh((double)v); break;
        case ANEURALNETWORKS_RELU: v = v > 0 ? v : 0; break;
        case ANEURALNETWORKS_RELU1: v = clampf(v, -1, 1); break;
        case ANEURALNETWORKS_RELU6: v = clampf(v, 0, 6); break;
        }
        F(out)[i] = v;
    }
    return ANEURALNETWORKS_NO_ERROR;
}

int tr_k_unary(tr_run *r, const tr_operation *op) {
    tr_tensor *in = IN(r, op, 0), *out = OUT(r, op, 0);
    int32_t t = op->type, lut[256];
    size_t n = count(in);
    if (t == ANEURALNETWORKS_QUANTIZE) {
        /* TFLite's QUANTIZE: round(x / scale) in double, half away from zero. */
        int32_t lo, hi;
        qrange(out->type, &lo, &hi);
        for (size_t i = 0; i < n; i++) {
            double q = round((double)F(in)[i] / (double)out->scale);
            qset(out, i, clamp32((int32_t)q + out->zero_point, lo, hi));
        }
        return ANEURALNETWORKS_NO_ERROR;
    }
    if (t == ANEURALNETWORKS_DEQUANTIZE) {
        /* scale * (q - zero point) in double rounded to float; per-channel
         * values in float. */
        size_t inner = 1;
        for (uint32_t d = in->channel_dim + 1; in->scales && d < in->rank; d++) inner *= in->dims[d];
        for (size_t i = 0; i < n; i++) {
            int32_t q = qget(in, i);
            if (in->scales)
                F(out)[i] = in->scales[(i / inner) % in->dims[in->channel_dim]] * (float)q;
            else
                F(out)[i] = (float)((double)in->scale * (double)(q - in->zero_point));
        }
        return ANEURALNETWORKS_NO_ERROR;
    }
    if (in->type == ANEURALNETWORKS_TENSOR_FLOAT32) return unary_float(t, in, out);
    switch (t) {
    case ANEURALNETWORKS_LOGISTIC: lut_transcendental(in, out, false, lut); break;
    case ANEURALNETWORKS_TANH: lut_transcendental(in, out, true, lut); break;
    case ANEURALNETWORKS_RELU: lut_relu(in, out, 0, 0, false, lut); break;
    case ANEURALNETWORKS_RELU1: lut_relu(in, out, -1, 1, true, lut); break;
    case ANEURALNETWORKS_RELU6: lut_relu(in, out, 0, 6, true, lut); break;
    default: return tr_fail(ANEURALNETWORKS_OP_FAILED, "%s: no kernel", tr_op_name(t));
    }
    apply_lut(in, out, lut);
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- data movement ------------------------------------------------------------------------ */

int tr_k_copy(tr_run *r, const tr_operation *op) {
    tr_tensor *in = IN(r, op, 0), *out = OUT(r, op, 0);
    memmove(out->data, in->data, count(in) * tr_type_size(in->type));
    return ANEURALNETWORKS_NO_ERROR;
}

/* outer/inner sizes around an axis. */
static void around(const tr_tensor *t, int axis, size_t *outer, size_t *inner) {
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++) *outer *= t->dims[d];
    for (uint32_t d = (uint32_t)axis + 1; d < t->rank; d++) *inner *= t->dims[d];
}

int tr_k_concat(tr_run *r, const tr_operation *op, int axis) {
    tr_tensor *out = OUT(r, op, 0);
    size_t es = tr_type_size(out->type), outer, inner, pos = 0;
    around(out, axis, &outer, &inner);
    size_t out_row = out->dims[axis] * inner;
    for (uint32_t k = 0; k + 1 < op->nin; k++) {
        tr_tensor *in = IN(r, op, k);
        size_t row = in->dims[axis] * inner;
        bool same = !is_q8(in->type) || (in->scale == out->scale && in->zero_point == out->zero_point);
        /* TFLite's ConcatenationWithScaling: q*scale + bias in float32, rounded. */
        float scale = in->scale * (1 / out->scale), bias = (float)(-in->zero_point) * scale;
        int32_t lo, hi;
        qrange(out->type, &lo, &hi);
        for (size_t o = 0; o < outer; o++) {
            if (same) {
                memcpy((uint8_t *)out->data + (o * out_row + pos) * es, (uint8_t *)in->data + o * row * es, row * es);
                continue;
            }
            for (size_t i = 0; i < row; i++) {
                float x = (float)qget(in, o * row + i) * scale + bias;
                qset(out, o * out_row + pos + i, clamp32((int32_t)roundf(x) + out->zero_point, lo, hi));
            }
        }
        pos += row;
    }
    return ANEURALNETWORKS_NO_ERROR;
}

int tr_k_split(tr_run *r, const tr_operation *op, int axis) {
    tr_tensor *in = IN(r, op, 0);
    size_t es = tr_type_size(in->type), outer, inner;
    around(in, axis, &outer, &inner);
    size_t in_row = in->dims[axis] * inner, row = in_row / op->nout;
    for (uint32_t k = 0; k < op->nout; k++)
        for (size_t o = 0; o < outer; o++)
            memcpy((uint8_t *)OUT(r, op, k)->data + o * row * es, (uint8_t *)in->data + (o * in_row + k * row) * es,
                   row * es);
    return ANEURALNETWORKS_NO_ERROR;
}

int tr_k_pad(tr_run *r, const tr_operation *op, const int32_t *pads) {
    tr_tensor *in = IN(r, op, 0), *out = OUT(r, op, 0);
    size_t es = tr_type_size(in->type), n = count(out);
    /* The pad value is 0.0 for floats and the zero point for quantized types. */
    for (size_t i = 0; i < n; i++) {
        size_t rem = i, src = 0, stride = 1;
        bool inside = true;
        for (int d = (int)out->rank - 1; d >= 0; d--) {
            int64_t c = (int64_t)(rem % out->dims[d]) - pads[2 * d];
            rem /= out->dims[d];
            if (c < 0 || c >= (int64_t)in->dims[d]) inside = false;
            src += (size_t)(c < 0 ? 0 : c) * stride;
            stride *= in->dims[d];
        }
        if (inside)
            memcpy((uint8_t *)out->data + i * es, (uint8_t *)in->data + src * es, es);
        else if (is_q8(out->type))
            qset(out, i, out->zero_point);
        else
            memset((uint8_t *)out->data + i * es, 0, es);
    }
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- MEAN ------------------------------------------------------------------------------ */

/* mean_index maps input element i to its output element. */
static size_t mean_index(const tr_tensor *in, const bool *reduced, size_t i) {
    size_t o = 0, stride = 1;
    for (int d = (int)in->rank - 1; d >= 0; d--) {
        size_t c = i % in->dims[d];
        i /= in->dims[d];
        if (reduced[d]) continue;
        o += c * stride;
        stride *= in->dims[d];
    }
    return o;
}

/* mean_4d is TFLite's integer spatial mean (keep_dims, axes {1, 2}). */
static void mean_4d(const tr_tensor *in, tr_tensor *out) {
    size_t b = in->dims[0], hw = (size_t)in->dims[1] * in->dims[2], c = in->dims[3];
    int32_t lo, hi, num = (int32_t)hw;
    qrange(out->type, &lo, &hi);
    bool u8 = in->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
    int32_t mult, bias = 0;
    int shift;
    if (u8) { /* reference_ops::Mean for uint8: bias and scale in float32 */
        float temp = (float)in->zero_point * in->scale / out->scale;
        temp = temp > 0 ? temp + 0.5f : temp - 0.5f;
        bias = out->zero_point - (int32_t)temp;
        tr_k_quantize_multiplier((double)(in->scale / ((float)num * out->scale)), &mult, &shift);
    } else {
        tr_k_quantize_multiplier((double)in->scale / (double)out->scale, &mult, &shift);
    }
    for (size_t bi = 0; bi < b; bi++)
        for (size_t ch = 0; ch < c; ch++) {
            int32_t acc = 0;
            for (size_t p = 0; p < hw; p++) acc += qget(in, (bi * hw + p) * c + ch) - (u8 ? 0 : in->zero_point);
            int32_t a;
            if (u8) {
                a = tr_k_mbqm(acc, mult, shift) + bias;
            } else {
                a = tr_k_mbqm(acc, mult, shift);
                a = a > 0 ? (a + num / 2) / num : (a - num / 2) / num;
                a += out->zero_point;
            }
            qset(out, bi * c + ch, clamp32(a, lo, hi));
        }
}

int tr_k_mean(tr_run *r, const tr_operation *op, const bool *reduced, bool special4d) {
    tr_tensor *in = IN(r, op, 0), *out = OUT(r, op, 0);
    size_t n = count(in), no = count(out), cnt = no ? n / no : 0;
    if (cnt == 0) return tr_fail(ANEURALNETWORKS_OP_FAILED, "MEAN: empty reduction");
    if (in->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
        float *acc = calloc(no, sizeof *acc);
        if (!acc) return oom();
        for (size_t i = 0; i < n; i++) acc[mean_index(in, reduced, i)] += F(in)[i];
        for (size_t o = 0; o < no; o++) F(out)[o] = acc[o] / (float)cnt;
        free(acc);
        return ANEURALNETWORKS_NO_ERROR;
    }
    if (special4d) {
        mean_4d(in, out);
        return ANEURALNETWORKS_NO_ERROR;
    }
    int32_t *acc = calloc(no, sizeof *acc), lo, hi;
    if (!acc) return oom();
    qrange(out->type, &lo, &hi);
    for (size_t i = 0; i < n; i++) acc[mean_index(in, reduced, i)] += qget(in, i);
    if (in->zero_point == out->zero_point && in->scale == out->scale) {
        for (size_t o = 0; o < no; o++) qset(out, o, acc[o] / (int32_t)cnt);
    } else { /* TFLite's QuantizedMeanOrSum: rescaled in float32 */
        float scale = in->scale / out->scale, bias = (float)(-in->zero_point) * scale;
        for (size_t o = 0; o < no; o++) {
            float mean = (float)acc[o] / (float)cnt;
            float v = roundf(mean * scale + bias) + (float)out->zero_point;
            v = v > (float)hi ? (float)hi : v;
            v = v < (float)lo ? (float)lo : v;
            qset(out, o, (int32_t)v);
        }
    }
    free(acc);
    return ANEURALNETWORKS_NO_ERROR;
}
