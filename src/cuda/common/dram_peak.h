/*
 * dram_peak.h - a GPU's peak DRAM bandwidth from what the runtime reports.
 * Plain C: the handle computes it once (backend.cu, dram_gbps, which auto's
 * decode rule reads) and cuops-bench records the same figure for each board
 * (tools/bench), so the two cannot disagree.
 */
#ifndef CUOPS_DRAM_PEAK_H
#define CUOPS_DRAM_PEAK_H

#include <stdint.h>

/* GB/s from the memory clock (kHz, cudaDevAttrMemoryClockRate) and the bus
 * width (bits, cudaDevAttrGlobalMemoryBusWidth), two transfers per clock on
 * every line, truncated: an H200 reporting 3201 MHz x 6144 bits gives 4916,
 * one reporting 6016 bits 4814, an H100 SXM 2619 MHz x 5120 bits 3352.
 * 0 where either is unknown (0 or negative). */
static inline int64_t cuops_dram_peak_gbps(int64_t mem_khz, int64_t bus_bits)
{
    if (mem_khz <= 0 || bus_bits <= 0) return 0;
    return mem_khz * bus_bits * 2 / 8 / 1000000;
}

#endif /* CUOPS_DRAM_PEAK_H */
