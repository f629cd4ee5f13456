#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A model of PyTorch's caching allocator under batches of varying length
(docs/plan.md, "Batches of varying length"): how much more than a step
allocates stays reserved at the longest shape.

The allocator (c10/cuda/CUDACachingAllocator.cpp, torch 2.1), large pool
only: a request gets the smallest cached free block that holds it (best
fit), split when more than 1 MiB remains; with none, a new segment of the
request's size (rounded up to 2 MiB; 20 MiB for 1-10 MiB requests); freed
blocks merge with free neighbours of their segment; nothing is released
(no cudaMalloc failure, no empty_cache). The step: a checkpointed LoRA step
of a Llama-like model (each layer's input kept, a layer's working set, the
HF loss path: bf16 logits, the shifted copy, the fp32 upcast, log-softmax
and its gradient, the bf16 gradient and the slice's zeros), its length
drawn uniformly from [seq/20, seq].

Prints, over seeds, the bytes a logit reserved beyond the allocated peak of
a step at the longest length. Usage: plan-alloc-sim.py [STEPS [SEEDS]]."""
import random
import statistics
import sys

MiB = 1 << 20


class Allocator:
    def __init__(self):
        self.segments = []  # each a list of blocks [size, free]
        self.reserved = self.allocated = self.peak_reserved = self.peak_allocated = 0

    def malloc(self, size):
        size = (size + 511) // 512 * 512
        best = None
        for seg in self.segments:
            for b in seg:
                if b[1] and b[0] >= size and (best is None or b[0] < best[1][0]):
                    best = (seg, b)
        if best is None:
            seg_size = 20 * MiB if size < 10 * MiB else (size + 2 * MiB - 1) // (2 * MiB) * 2 * MiB
            seg = [[seg_size, True]]
            self.segments.append(seg)
            self.reserved += seg_size
            best = (seg, seg[0])
        seg, b = best
        if b[0] - size > MiB:
            seg.insert(seg.index(b) + 1, [b[0] - size, True])
            b[0] = size
        b[1] = False
        self.allocated += b[0]
        self.peak_reserved = max(self.peak_reserved, self.reserved)
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return (seg, b)

    def free(self, h):
        seg, b = h
        b[1] = True
        self.allocated -= b[0]
        i = next(k for k, x in enumerate(seg) if x is b)
        if i + 1 < len(seg) and seg[i + 1][1]:
            b[0] += seg.pop(i + 1)[0]
        if i > 0 and seg[i - 1][1]:
            seg[i - 1][0] += b[0]
            seg.pop(i)


def step(a, T, V=151936, h=4096, L=32, inter=11008):
    kept = [a.malloc(T * h * 2) for _ in range(L)]
    for _ in range(2):
        for t in [a.malloc(T * h * 2) for _ in range(4)] + [a.malloc(T * inter * 2) for _ in range(3)]:
            a.free(t)
    logits, shifted, up, logsm = a.malloc(T * V * 2), a.malloc(T * V * 2), a.malloc(T * V * 4), a.malloc(T * V * 4)
    a.free(up), a.free(shifted), a.free(logits)
    gout, gin = a.malloc(T * V * 4), a.malloc(T * V * 4)
    a.free(gout), a.free(logsm)
    g16 = a.malloc(T * V * 2)
    a.free(gin)
    zeros = a.malloc(T * V * 2)
    a.free(g16)
    gh = a.malloc(T * h * 2)
    a.free(zeros)
    for l in range(L):
        for t in [a.malloc(T * h * 2) for _ in range(6)] + [a.malloc(T * inter * 2) for _ in range(4)]:
            a.free(t)
        a.free(kept[L - 1 - l])
    a.free(gh)


def run(seq, steps, seed, V=151936):
    random.seed(seed)
    fixed = Allocator()
    step(fixed, seq, V)
    varied = Allocator()
    for _ in range(steps):
        step(varied, random.randint(max(1, seq // 20), seq), V)
    return (varied.peak_reserved - fixed.peak_allocated) / (seq * V)


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    r = sorted(run(2048, steps, s) for s in range(seeds))
    print("%d steps, %d seeds: bytes a logit reserved beyond the allocated step: median %.1f, min %.1f, max %.1f"
          % (steps, seeds, statistics.median(r), r[0], r[-1]))
