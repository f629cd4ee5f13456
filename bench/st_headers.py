#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python side of bench_plan.sh: read every shard's safetensors header
of a model folder with the `safetensors` package when it is installed
(safe_open reads the header), else the way its reference does it by hand
(8-byte length, json.loads); sum bytes per dtype. Prints one JSON line."""
import json
import os
import struct
import sys

d = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
try:
    from safetensors import safe_open  # noqa: F401
    how = "safetensors"
except ImportError:
    how = "json"
SIZE = {"BF16": 2, "F16": 2, "F32": 4, "U8": 1, "I8": 1, "I32": 4, "F8_E4M3": 1, "F8_E5M2": 1}
import time
t0 = time.perf_counter()
for _ in range(n):
    with open(os.path.join(d, "config.json")) as f:
        json.load(f)
    with open(os.path.join(d, "model.safetensors.index.json")) as f:
        shards = sorted(set(json.load(f)["weight_map"].values()))
    by = {}
    read = 0
    for s in shards:
        p = os.path.join(d, s)
        if how == "safetensors":
            with safe_open(p, framework="numpy") as f:
                for k in f.keys():
                    sl = f.get_slice(k)
                    dt = sl.get_dtype()
                    cnt = 1
                    for x in sl.get_shape():
                        cnt *= x
                    by[dt] = by.get(dt, 0) + cnt * SIZE.get(dt, 2)
        else:
            with open(p, "rb") as f:
                hlen = struct.unpack("<Q", f.read(8))[0]
                h = json.loads(f.read(hlen))
                read += 8 + hlen
            for k, v in h.items():
                if k == "__metadata__":
                    continue
                b, e = v["data_offsets"]
                by[v["dtype"]] = by.get(v["dtype"], 0) + e - b
ms = (time.perf_counter() - t0) * 1000 / n
print(json.dumps({"how": how, "shards": len(shards), "bytes_by_dtype": by, "bytes_read": read,
                  "ms_per_load": round(ms, 3)}))
