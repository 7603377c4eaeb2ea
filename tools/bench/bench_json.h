/*
 * bench_json.h - writes a cuops-bench run (`--json FILE`) as one JSON object,
 * the schema every file in bench/results follows:
 *
 *   gpu, sm, git_sha, date (UTC), cuda      the machine and the build
 *   clocks {sm_mhz, mem_mhz}                the GPU's peak clocks
 *   power_limit_w                           the board's enforced power limit (NVML)
 *   board {uuid, mem_bus_bits, dram_peak_gbps, max_clusters {2, 4, 8}}
 *                                           which board, the memory bus the runtime
 *                                           reports and the peak it gives (the
 *                                           library's decode rule reads that peak),
 *                                           and how many clusters of 2 / 4 / 8 CTAs
 *                                           fit at once at one CTA per SM
 *   baseline_timing                         "sequential" or "interleaved" (--interleave)
 *   ceilings {copy_gbps, vendor_gemm_tflops, mma_sync_tflops, wgmma_tflops}
 *                                           measured in the same run (the last two
 *                                           from cuops-probe via CUOPS_PROBE_JSON)
 *   rows [ {op, variant, kernel, dtype, shape {m, n, k, group}, trans, lda, ldb,
 *           us (median of events), tflops, gbps, pct_of_ceiling,
 *           baseline (cuBLAS, CUB, ...), baseline_us, baseline_timing, speedup,
 *           valid, max_rel_err, triton_seed_us / triton_hoisted_us (dequant),
 *           sm_mhz, power_w, power_limited, energy_w (and baseline_ ones; with
 *           NVML: means over the timed series; power_w is the driver's reading,
 *           which lags by its ~1 s window, energy_w the energy counter's
 *           difference over the series' wall time, idle gaps included),
 *           copy_same_us (a copy of the row's own bytes), note} ]
 *
 * Keys that do not apply to a row are left out (trans, lda, ldb, the Triton and
 * power keys, copy_same_us, note). A small C writer: strings go through
 * bv_json_escape, a number that was not measured (NAN) is written as null,
 * never as a made-up 0. Included by bench_main.cu only.
 */
#ifndef CUOPS_BENCH_JSON_H
#define CUOPS_BENCH_JSON_H

#include <math.h>
#include <stdio.h>

#include "bench.h"

static inline void bj_number(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

static inline void bj_key(FILE *f, const char *key)
{
    bv_json_write_string(f, key);
    fputs(": ", f);
}

static inline void bj_row_shape(FILE *f, const bench_row_t *r)
{
    switch (r->shape_kind) {
    case 0:
        fprintf(f, "{\"m\": %lld, \"n\": %lld, \"k\": %lld}", (long long)r->m, (long long)r->n,
                (long long)r->k);
        break;
    case 1:
        fprintf(f, "{\"n\": %lld, \"k\": %lld, \"group\": %lld}", (long long)r->n,
                (long long)r->k, (long long)r->group);
        break;
    case 2: fprintf(f, "{\"n\": %lld}", (long long)r->n); break;
    default:
        fprintf(f, "{\"m\": %lld, \"n\": %lld, \"k\": %lld, \"group\": %lld}", (long long)r->m,
                (long long)r->n, (long long)r->k, (long long)r->group);
        break;
    }
}

static inline void bj_row(FILE *f, const bench_row_t *r)
{
    fputs("{", f);
    bj_key(f, "op"); bv_json_write_string(f, r->op); fputs(", ", f);
    bj_key(f, "variant"); bv_json_write_string(f, r->variant); fputs(", ", f);
    bj_key(f, "kernel"); bv_json_write_string(f, r->kernel[0] ? r->kernel : NULL); fputs(", ", f);
    bj_key(f, "dtype"); bv_json_write_string(f, r->dtype); fputs(", ", f);
    bj_key(f, "shape"); bj_row_shape(f, r); fputs(", ", f);
    if (r->trans[0]) { bj_key(f, "trans"); bv_json_write_string(f, r->trans); fputs(", ", f); }
    if (r->lda > 0) fprintf(f, "\"lda\": %lld, ", (long long)r->lda);
    if (r->ldb > 0) fprintf(f, "\"ldb\": %lld, ", (long long)r->ldb);
    bj_key(f, "us"); bj_number(f, r->us); fputs(", ", f);
    bj_key(f, "tflops"); bj_number(f, r->tflops); fputs(", ", f);
    bj_key(f, "gbps"); bj_number(f, r->gbps); fputs(", ", f);
    bj_key(f, "pct_of_ceiling"); bj_number(f, r->pct_of_ceiling); fputs(", ", f);
    /* the baseline is named only where it ran (a failed or skipped one is null) */
    bj_key(f, "baseline"); bv_json_write_string(f, isfinite(r->baseline_us) ? r->baseline : NULL); fputs(", ", f);
    bj_key(f, "baseline_us"); bj_number(f, r->baseline_us); fputs(", ", f);
    /* the run's baseline_timing holds per row only for the ops that
     * interleave (gemm, w4a16); dequant, scan and reduce time one after the
     * other whatever the flag */
    if (isfinite(r->baseline_us)) {
        bj_key(f, "baseline_timing");
        bv_json_write_string(f, r->baseline_interleaved ? "interleaved" : "sequential");
        fputs(", ", f);
    }
    bj_key(f, "speedup"); bj_number(f, r->speedup); fputs(", ", f);
    /* a row without a time (error, skipped) is no validated measurement */
    bj_key(f, "valid"); fputs(r->valid && r->status == BENCH_ROW_OK ? "true" : "false", f); fputs(", ", f);
    bj_key(f, "max_rel_err"); bj_number(f, r->max_rel_err);
    if (r->op && strcmp(r->op, "dequant") == 0) {
        fputs(", ", f);
        bj_key(f, "triton_seed_us"); bj_number(f, r->triton_seed_us); fputs(", ", f);
        bj_key(f, "triton_hoisted_us"); bj_number(f, r->triton_hoisted_us);
    }
    /* the clock and power the series ran at (bench_power.cu); absent
     * where NVML was not available */
    if (r->power.samples > 0) {
        fputs(", ", f);
        bj_key(f, "sm_mhz"); bj_number(f, r->power.sm_mhz); fputs(", ", f);
        bj_key(f, "power_w"); bj_number(f, r->power.watts); fputs(", ", f);
        bj_key(f, "power_limited"); bj_number(f, r->power.power_limited);
        if (isfinite(r->power.energy_watts)) {
            fputs(", ", f);
            bj_key(f, "energy_w"); bj_number(f, r->power.energy_watts);
        }
    }
    if (r->baseline_power.samples > 0) {
        fputs(", ", f);
        bj_key(f, "baseline_sm_mhz"); bj_number(f, r->baseline_power.sm_mhz); fputs(", ", f);
        bj_key(f, "baseline_power_w"); bj_number(f, r->baseline_power.watts); fputs(", ", f);
        bj_key(f, "baseline_power_limited"); bj_number(f, r->baseline_power.power_limited);
        if (isfinite(r->baseline_power.energy_watts)) {
            fputs(", ", f);
            bj_key(f, "baseline_energy_w"); bj_number(f, r->baseline_power.energy_watts);
        }
    }
    if (isfinite(r->copy_same_us)) {
        fputs(", ", f);
        bj_key(f, "copy_same_us"); bj_number(f, r->copy_same_us);
    }
    if (r->status != BENCH_ROW_OK || r->note[0]) {
        fputs(", ", f);
        bj_key(f, "note"); bv_json_write_string(f, r->note);
    }
    fputs("}", f);
}

/* Write the whole run; returns 0 on success. */
static inline int bench_write_json(const bench_env_t *env, const char *path, const char *git_sha,
                                   const char *date)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("{", f);
    bj_key(f, "gpu");
    bv_json_write_string(f, env->gpu ? env->gpu_name : "none (CPU reference backend)");
    fputs(", ", f);
    bj_key(f, "sm");
    if (env->gpu) fprintf(f, "%d", env->sm);
    else fputs("null", f);
    fputs(", ", f);
    bj_key(f, "git_sha"); bv_json_write_string(f, git_sha); fputs(", ", f);
    bj_key(f, "date"); bv_json_write_string(f, date); fputs(", ", f);
    char cuda[32];
    snprintf(cuda, sizeof(cuda), "%d.%d", env->runtime_version / 1000,
             (env->runtime_version % 1000) / 10);
    bj_key(f, "cuda"); bv_json_write_string(f, env->runtime_version ? cuda : NULL); fputs(", ", f);
    bj_key(f, "clocks");
    fputs("{", f);
    bj_key(f, "sm_mhz"); bj_number(f, env->gpu ? (double)env->sm_clock_mhz : NAN); fputs(", ", f);
    bj_key(f, "mem_mhz"); bj_number(f, env->gpu ? (double)env->mem_clock_mhz : NAN);
    fputs("}, ", f);
    /* the board's enforced power limit: compute-bound rows run against it */
    bj_key(f, "power_limit_w"); bj_number(f, env->gpu ? env->power_limit_w : NAN); fputs(", ", f);
    /* the board: two machines of one name can differ in memory bus and GPC
     * layout, and the library's rules ask about both */
    bj_key(f, "board");
    fputs("{", f);
    bj_key(f, "uuid");
    bv_json_write_string(f, env->gpu && env->board_uuid[0] ? env->board_uuid : NULL);
    fputs(", ", f);
    bj_key(f, "mem_bus_bits");
    bj_number(f, env->gpu && env->mem_bus_bits > 0 ? (double)env->mem_bus_bits : NAN);
    fputs(", ", f);
    bj_key(f, "dram_peak_gbps");
    bj_number(f, env->gpu && env->dram_peak_gbps > 0 ? (double)env->dram_peak_gbps : NAN);
    fputs(", ", f);
    bj_key(f, "max_clusters");
    fputs("{", f);
    for (int i = 0; i < 3; i++) {
        static const char *const names[3] = {"2", "4", "8"};
        bj_key(f, names[i]);
        bj_number(f, env->gpu && env->max_clusters[i] >= 0 ? (double)env->max_clusters[i] : NAN);
        if (i < 2) fputs(", ", f);
    }
    fputs("}}, ", f);
    /* how rows and baselines were timed: one after the other, or
     * alternating repetition by repetition (--interleave; gemm, w4a16 only:
     * each row's own baseline_timing says which) */
    bj_key(f, "baseline_timing");
    bv_json_write_string(f, env->opt.interleave ? "interleaved" : "sequential");
    fputs(", ", f);
    bj_key(f, "ceilings");
    fputs("{", f);
    bj_key(f, "copy_gbps"); bj_number(f, env->copy_gbps); fputs(", ", f);
    bj_key(f, "vendor_gemm_tflops"); bj_number(f, env->vendor_gemm_tflops); fputs(", ", f);
    bj_key(f, "mma_sync_tflops"); bj_number(f, env->mma_sync_tflops); fputs(", ", f);
    bj_key(f, "wgmma_tflops"); bj_number(f, env->wgmma_tflops);
    fputs("},\n ", f);
    bj_key(f, "rows");
    fputs("[", f);
    for (int i = 0; i < env->num_rows; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        bj_row(f, &env->rows[i]);
    }
    fputs("\n]}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    return bad ? -1 : 0;
}

#endif /* CUOPS_BENCH_JSON_H */
