#!/usr/bin/env python3
"""Generate single-op UNIDIRECTIONAL_SEQUENCE_LSTM test models as flatbuffer JSON.

gen.py NAME SPEC_JSON OUTDIR
SPEC keys: kind ('float'|'int'), batch, time, n_input, n_cell, n_output,
cifg, peephole, projection, proj_bias, layer_norm, time_major, act, cell_clip,
proj_clip, seed, version, plus quantization knobs.
"""
import json, random, struct, sys, os, math

def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]

def fs(x):  # float string exact for float32
    return float(repr(f32(x)))

name, spec, outdir = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
rng = random.Random(spec.get('seed', 1))
B, T, NI, NC = spec['batch'], spec['time'], spec['n_input'], spec['n_cell']
proj = spec.get('projection', False)
NO = spec['n_output'] if proj else NC
cifg = spec.get('cifg', False)
peep = spec.get('peephole', False)
ln = spec.get('layer_norm', False)
tm = spec.get('time_major', False)
kind = spec['kind']
hybrid = kind == 'hybrid'

tensors, buffers = [], [{}]
def add_tensor(name, shape, typ, data=None, quant=None, variable=False):
    t = {'name': name, 'shape': shape, 'type': typ, 'buffer': 0}
    if data is not None:
        buffers.append({'data': list(data)})
        t['buffer'] = len(buffers) - 1
    if quant is not None:
        t['quantization'] = {'scale': [fs(s) for s in quant[0]], 'zero_point': quant[1]}
    if variable:
        t['is_variable'] = True
    tensors.append(t)
    return len(tensors) - 1

def fbytes(vals):
    return b''.join(struct.pack('<f', v) for v in vals)
def i8bytes(vals):
    return struct.pack('<%db' % len(vals), *vals)
def i16bytes(vals):
    return struct.pack('<%dh' % len(vals), *vals)
def i32bytes(vals):
    return struct.pack('<%di' % len(vals), *vals)

inputs = [-1] * 24
in_shape = [T, B, NI] if tm else [B, T, NI]
if kind == 'float' or hybrid:
    inputs[0] = add_tensor('input', in_shape, 'FLOAT32')
    def W(nm, rows, cols, scale=0.5):
        if hybrid:
            ws = spec.get('wscale', 0.01)
            return add_tensor(nm, [rows, cols], 'INT8', i8bytes([rng.randint(-127, 127) for _ in range(rows*cols)]), ([ws], [0]))
        return add_tensor(nm, [rows, cols], 'FLOAT32', fbytes([rng.uniform(-scale, scale) for _ in range(rows*cols)]))
    def V(nm, n, scale=0.5, off=0.0, typ=None):
        if hybrid and typ == 'w':
            ws = spec.get('wscale', 0.01)
            return add_tensor(nm, [n], 'INT8', i8bytes([rng.randint(-127, 127) for _ in range(n)]), ([ws], [0]))
        return add_tensor(nm, [n], 'FLOAT32', fbytes([off + rng.uniform(-scale, scale) for _ in range(n)]))
    gates = ['input', 'forget', 'cell', 'output']
    for g in range(4):
        if g == 0 and cifg: continue
        inputs[1+g] = W('i2' + gates[g], NC, NI)
        inputs[5+g] = W('r2' + gates[g], NC, NO)
    if peep:
        for g in [0, 1, 3]:
            if g == 0 and cifg: continue
            inputs[9 + [0, 1, 3].index(g)] = V('c2' + gates[g], NC, typ='w')
    for g in range(4):
        if g == 0 and cifg: continue
        inputs[12+g] = V('bias_' + gates[g], NC, 0.3, 1.0 if g == 1 else 0.0)
    if proj:
        inputs[16] = W('proj', NO, NC)
        if spec.get('proj_bias', True):
            inputs[17] = V('proj_bias', NO, 0.2)
    inputs[18] = add_tensor('output_state', [B, NO], 'FLOAT32', variable=True)
    inputs[19] = add_tensor('cell_state', [B, NC], 'FLOAT32', variable=True)
    if ln:
        for g in range(4):
            if g == 0 and cifg: continue
            inputs[20+g] = V('ln_' + gates[g], NC, 0.3, 1.0)
    out = add_tensor('output', [T, B, NO] if tm else [B, T, NO], 'FLOAT32')
    intermediates = []
else:
    in_scale, in_zp = spec.get('in_scale', 1/64), spec.get('in_zp', 3)
    out_scale, out_zp = spec.get('out_scale', 1/128), spec.get('out_zp', -1)
    cell_scale = 2.0 ** spec.get('cell_log2', -11)
    inputs[0] = add_tensor('input', in_shape, 'INT8', quant=([in_scale], [in_zp]))
    wscale = spec.get('wscale', 0.004)
    def W(nm, rows, cols, ws=None):
        ws = ws or wscale * rng.uniform(0.7, 1.3)
        return add_tensor(nm, [rows, cols], 'INT8', i8bytes([rng.randint(-127, 127) for _ in range(rows*cols)]), ([ws], [0]))
    gate_scale = 2.0 ** -12
    gates = ['input', 'forget', 'cell', 'output']
    inter_scale = [spec.get('inter_scale', 2.0 ** -10) * rng.uniform(0.8, 1.2) for _ in range(4)]
    for g in range(4):
        if g == 0 and cifg: continue
        inputs[1+g] = W('i2' + gates[g], NC, NI)
        inputs[5+g] = W('r2' + gates[g], NC, NO)
    if peep:
        pscale = spec.get('peep_scale', 2.0 ** -14)
        for k, g in enumerate([0, 1, 3]):
            if g == 0 and cifg: continue
            inputs[9+k] = add_tensor('c2' + gates[g], [NC], 'INT16', i16bytes([rng.randint(-20000, 20000) for _ in range(NC)]), ([pscale * rng.uniform(0.8, 1.2)], [0]))
    bmax = spec.get('bias_max', 3000)
    for g in range(4):
        if g == 0 and cifg: continue
        off = bmax if g == 1 else 0
        inputs[12+g] = add_tensor('bias_' + gates[g], [NC], 'INT32', i32bytes([off + rng.randint(-bmax, bmax) for _ in range(NC)]), ([in_scale * wscale], [0]))
    hidden_scale, hidden_zp = spec.get('hidden_scale', 1/128), spec.get('hidden_zp', 2)
    if proj:
        inputs[16] = W('proj', NO, NC, spec.get('proj_wscale', 0.01))
        if spec.get('proj_bias', True):
            inputs[17] = add_tensor('proj_bias', [NO], 'INT32', i32bytes([rng.randint(-500, 500) for _ in range(NO)]), ([0.0001], [0]))
    inputs[18] = add_tensor('output_state', [B, NO], 'INT8', quant=([out_scale], [out_zp]), variable=True)
    inputs[19] = add_tensor('cell_state', [B, NC], 'INT16', quant=([cell_scale], [spec.get('cell_zp', 0)]), variable=True)
    if ln:
        lnscale = spec.get('ln_scale', 2.0 ** -13)
        for g in range(4):
            if g == 0 and cifg: continue
            inputs[20+g] = add_tensor('ln_' + gates[g], [NC], 'INT16', i16bytes([rng.randint(4000, 12000) for _ in range(NC)]), ([lnscale * rng.uniform(0.8, 1.2)], [0]))
    out = add_tensor('output', [T, B, NO] if tm else [B, T, NO], 'INT8', quant=([out_scale], [out_zp]))
    intermediates = []
    for g in range(4):
        if ln:
            intermediates.append(add_tensor('inter' + str(g), [0], 'INT16', quant=([inter_scale[g]], [0])))
        else:
            intermediates.append(add_tensor('inter' + str(g), [0], 'FLOAT32'))
    if proj:
        intermediates.append(add_tensor('hidden', [0], 'INT8', quant=([hidden_scale], [hidden_zp])))
    else:
        intermediates.append(add_tensor('hidden', [0], 'INT8', quant=([out_scale], [out_zp])))

ninputs = spec.get('ninputs', 24)
op = {'opcode_index': 0, 'inputs': inputs[:ninputs], 'outputs': [out],
      'builtin_options_type': 'UnidirectionalSequenceLSTMOptions',
      'builtin_options': {'fused_activation_function': spec.get('act', 'TANH'),
                          'cell_clip': fs(spec.get('cell_clip', 0.0)),
                          'proj_clip': fs(spec.get('proj_clip', 0.0)),
                          'time_major': tm,
                          'asymmetric_quantize_inputs': spec.get('asym', False)}}
if intermediates:
    op['intermediates'] = intermediates
model = {'version': 3,
         'operator_codes': [{'deprecated_builtin_code': 44, 'builtin_code': 'UNIDIRECTIONAL_SEQUENCE_LSTM', 'version': spec.get('version', 1)}],
         'subgraphs': [{'tensors': tensors, 'inputs': [inputs[0]], 'outputs': [out], 'operators': [op], 'name': 'main'}],
         'buffers': buffers, 'description': 'delego lstm test ' + name}
json.dump(model, open(os.path.join(outdir, name + '.json'), 'w'))
# input
n = B * T * NI
if kind == 'float' or hybrid:
    data = fbytes([rng.uniform(-1.5, 1.5) for _ in range(n)])
else:
    data = i8bytes([rng.randint(-128, 127) for _ in range(n)])
open(os.path.join(outdir, name + '.input.raw'), 'wb').write(data)
