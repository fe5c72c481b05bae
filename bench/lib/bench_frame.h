/* SPDX-License-Identifier: MIT */
/*
 * bench_frame.h - the frame bench_pristine (pristine.bpf.c) puts back before
 * every run of the program under test.  Shared by the BPF side and the
 * harness (bench_path.c).
 */
#ifndef XLB_BENCH_FRAME_H
#define XLB_BENCH_FRAME_H

#include <linux/types.h>

#define BENCH_FRAME_MAX 256 /* bytes the wrapper restores: headers and a short payload */

struct bench_frame {
	__u32 len;
	__u32 pad;
	__u64 words[BENCH_FRAME_MAX / 8];
};

#endif /* XLB_BENCH_FRAME_H */
