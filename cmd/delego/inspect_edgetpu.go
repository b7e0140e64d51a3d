package main

// This file is the help of the Edge TPU part of "delego inspect": what
// the compiler put in each edgetpu-custom-op node, read as the edgetpu
// delegate reads it (program.Reports, written by program.WriteReports).

// edgetpuHelp documents the "edgetpu" field of inspect's JSON.
const edgetpuHelp = `  edgetpu[]                    one per edgetpu-custom-op node (absent without):
                               subgraph, operator, custom_options_bytes,
                               data_version, execution_preference, error (the
                               options cannot be read; nothing else then),
                               check ("ok", or why the edgetpu delegate would
                               refuse the node before looking for a device:
                               Coral's runtime checks, the node's tensors, and
                               the USB driver's, such as DMA hints that name
                               a layer the executable does not have),
                               packages[]: {chip_code (null: not named),
                                 bytes, identifier, min_runtime_version,
                                 compiler_version, keypair_version,
                                 signature_bytes, virtual_chip_id,
                                 multi_chip_packages, model_identifier,
                                 executables[]: {type, main (runs the
                                   inference), bytes, version, name, chip,
                                   batch_size, scratch_bytes, parameters_bytes,
                                   caching_token (hex), estimated_cycles,
                                   narrow_memory_bytes_per_tile,
                                   tpu_dram_parameters, serialized_model_bytes,
                                   bitstreams[]: {bytes, field_offsets,
                                     fields_by_target {target: count}},
                                   dma_hints: {count, fully_deterministic
                                     (false: the device's DMA descriptors
                                     tell the driver the rest),
                                     instruction, dma_in, dma_in_bytes, dma_out,
                                     dma_out_bytes, interrupt, fence},
                                   inputs[], outputs[]: {name, data_type, dims
                                     [y,x,z], size_bytes (with padding),
                                     actual_bytes, zero_point, scale,
                                     execution_count, cache_on_dram, shape
                                     ([[start,end]...], null when absent),
                                     tiled_layout, slices}}}
`
