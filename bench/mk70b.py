#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Llama-3.1-70B-shaped folder for the plan benchmark: config.json, an
index and 30 safetensors shards whose headers are real and whose data regions
are holes (sparse files: ~141 GB apparent, a few MB on disk)."""
import json, os, struct, sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
L, h, I, V, kv = 80, 8192, 28672, 128256, 1024
tensors = [("model.embed_tokens.weight", [V, h])]
for i in range(L):
    p = f"model.layers.{i}."
    tensors += [(p + "self_attn.q_proj.weight", [h, h]), (p + "self_attn.k_proj.weight", [kv, h]),
                (p + "self_attn.v_proj.weight", [kv, h]), (p + "self_attn.o_proj.weight", [h, h]),
                (p + "mlp.gate_proj.weight", [I, h]), (p + "mlp.up_proj.weight", [I, h]),
                (p + "mlp.down_proj.weight", [h, I]), (p + "input_layernorm.weight", [h]),
                (p + "post_attention_layernorm.weight", [h])]
tensors += [("model.norm.weight", [h]), ("lm_head.weight", [V, h])]
nshards = 30
per = (len(tensors) + nshards - 1) // nshards
weight_map, total = {}, 0
for s in range(nshards):
    name = f"model-{s + 1:05d}-of-{nshards:05d}.safetensors"
    hdr, off = {}, 0
    for tname, shape in tensors[s * per:(s + 1) * per]:
        n = 2
        for d in shape:
            n *= d
        hdr[tname] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + n]}
        off += n
        weight_map[tname] = name
    total += off
    blob = json.dumps(hdr, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    path = os.path.join(out, name)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        f.truncate(8 + len(blob) + off)
with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
    json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": h,
               "intermediate_size": I, "num_hidden_layers": L, "num_attention_heads": 64,
               "num_key_value_heads": 8, "vocab_size": V, "max_position_embeddings": 131072,
               "tie_word_embeddings": False, "torch_dtype": "bfloat16"}, f)
