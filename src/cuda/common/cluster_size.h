/*
 * cluster_size.h - the largest thread-block cluster that every sm_90 part
 * launches without opting in to a non-portable size. Plain C: the split-K
 * kernels (cluster_splitk.cuh) and the plain-C plans that the CPU tests check
 * (w4a16_decode_wgmma_form.h, w4a16_decode_phase_ring_plan.h) share it.
 */
#ifndef CUOPS_CLUSTER_SIZE_H
#define CUOPS_CLUSTER_SIZE_H

#define CUOPS_CLUSTER_PORTABLE_SIZE 8

#endif /* CUOPS_CLUSTER_SIZE_H */
