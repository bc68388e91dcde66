"""Fit the engine profiles to the published measurements, cross-validate them by source, and write them.

    .venv/bin/python scripts/calibrate.py            # fit, cross-validate, print, write the data files
    .venv/bin/python scripts/calibrate.py --dry-run  # fit, cross-validate and print only

Reads ``calc/data/measurements.csv`` only (each row a calculator link naming the engine profile measured, the
metric ``step_ms`` or ``max_throughput_tok_s`` and the published value). One joint fit over every row: each
profile's figures are either its own (fitted on its rows), shared with the profile of another release family of
the same engine or of an engine of the same design (``SHARED``: one figure fitted on both profiles' rows), fixed
from the engine's documentation (``FIXED``), tied to another figure (``TIED``) or copied (``LINK_DONOR``). The fit
minimises ``sum(w * log(predicted / measured)^2)`` with ``w = OVER_WEIGHT`` (2) where a row is predicted faster
than measured (a step too short, a throughput too high) and 1 otherwise, plus a weak pull of each figure towards
its prior (``PRIOR``, weight ``PRIOR_WEIGHT``). Every figure is kept inside physical bounds (``BOUNDS``); the
search is scipy's bounded trust-region least squares from three starting points. The same data give the same
figures on every run.

Then it cross-validates by source (docs/calibration.md section 5): for each source (one published document at one
commit) the whole fit is run again without that source's rows, and those rows are predicted by the figures it
gives. A profile left without rows by that takes its release sibling's figures (``SIBLING``); that is the honest
prediction for a source nobody fitted to.

Writes ``calc/data/engines.csv`` (every figure of every profile with its basis and source),
``calc/data/card_families.csv`` (each card family's share of the bandwidth figures, ``eff_card``, and the profiles
it covers: fitted for :data:`FAMILY_FITTED`, 1 for the others), ``calc/data/engine_errors.csv`` (per profile and metric, in-sample and leave-one-source-out: n, signed median,
median, 90th percentile and worst absolute error in per cent) and ``calc/data/engine_cv.csv`` (each row's in-sample
and cross-validated prediction) and ``calc/data/region_errors.csv`` (the leave-one-source-out error by measured
region: profile x card family x model kind x cards per replica x packed weights). Roofline is docs/method.md sections 2, 5 and 6 by definition.

The fit evaluates rows with a vectorised copy of the model (``FastRows``); before writing, every row is evaluated
again through ``calc.report`` with the written figures and the two must agree to 1e-9.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import math
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calc import engines, load, memory, model, traffic  # noqa: E402
from calc.accuracy import region  # noqa: E402
from calc.engines import CROSS_VALIDATED, ENGINES, FIGURES, IN_SAMPLE, KEPT_OUT, ROOFLINE  # noqa: E402
from calc.scenario import KEY_TABLE, split_link  # noqa: E402
from calc.validate import (  # noqa: E402
    Measurement,
    Result,
    evaluate,
    flattering_pct,
    format_summary,
    kept_out_results,
    read_measurements,
    source_of,
    summarise,
)

SCRIPT = "scripts/calibrate.py"
#: Card families with a bandwidth share of their own (``eff_card``, calc/data/card_families.csv; docs/calibration.md
#: section 3), and the profiles it covers: those whose rows on the family read slower than the profiles' shares
#: (measured on the families the profiles are fitted on, 1). One figure a family, shared by the profiles named; a
#: family left without rows (in cross-validation) stays at 1.
FAMILY_FITTED = {"Turing": ("llamacpp-vulkan", "llamacpp-vulkan-2025")}
DATA = "calc/data/measurements.csv"

#: Bounds of every fitted figure (both ends allowed). 5 ms per step is above the largest fixed cost the batch-1 rows
#: call for; a larger one would make batch-1 decoding of small models slower than any row measures.
BOUNDS = {"eff_bw": (0.02, 1.0), "eff_kv": (0.02, 1.0), "eff_flops": (0.02, 1.0), "eff_link": (0.02, 1.0),
          "step_us": (0.0, 5000.0), "tok_us": (0.0, 100.0), "mem_util": (0.5, 1.0), "overhead_gib": (0.0, 16.0),
          "layer_us": (0.0, 500.0), "eff_dequant": (0.3, 1.0), "kv_reread": (0.0, 1.0), "eager_us": (0.0, 500.0),
          "eff_fp4": (0.1, 1.0), "eff_fp8": (0.1, 1.0), "expert_us": (0.0, 100.0), "eff_prefill": (0.02, 1.0), "eff_card": (0.3, 1.0),
          "overlap": (0.0, 1.0)}
#: Where a figure stays when no row constrains it: docs/method.md's roofline efficiency (0.7) and no extra time;
#: and no gain from FP4 arithmetic that no row measures (eff_fp4 0.5: the FP4 peak, twice FP8's, delivers FP8's
#: FLOP/s), so a fit without FP4 rows, as in cross-validation, never credits FP4 with a speed-up nobody measured;
#: likewise no gain from FP8 arithmetic in a decode step that no row measures (eff_fp8 0.5: BF16's FLOP/s).
PRIOR = {"eff_bw": 0.7, "eff_kv": 0.7, "eff_flops": 0.7, "eff_link": 0.7, "step_us": 0.0, "tok_us": 0.0,
         "mem_util": 1.0, "overhead_gib": 4.0, "layer_us": 0.0, "eff_dequant": 1.0, "kv_reread": 0.0, "eager_us": 0.0,
         "eff_fp4": 0.5, "eff_fp8": 0.5, "expert_us": 0.0, "eff_prefill": 0.7, "layer_ghz": 0.0, "eff_card": 1.0, "overlap": 1.0}
#: Scale of the pull towards the prior: efficiencies in log units, times in these microseconds, memory in GiB.
PRIOR_SCALE = {"step_us": 1000.0, "tok_us": 10.0, "overhead_gib": 4.0, "mem_util": 0.1, "layer_us": 100.0,
               "eager_us": 100.0, "expert_us": 10.0}
PRIOR_WEIGHT = 1e-3
#: Log error charged for a row the figures make impossible (nothing fits): a factor of about 20.
MISS = 3.0
#: Weight of a squared log error where the prediction is faster than the measurement (1 where it is slower).
OVER_WEIGHT = 2.0

#: The figures fitted for each profile with rows (own, or shared through ``SHARED``); the others are fixed below.
FITTED = {
    "vllm": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "eff_fp4",
             "eff_fp8", "expert_us"),
    "vllm-0.21": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "eff_fp4",
                  "eff_fp8", "expert_us"),
    "vllm-2025": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "eff_fp4",
                  "eff_fp8", "expert_us"),
    "vllm-v0": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "eff_fp4",
                "eff_fp8", "expert_us"),
    "sglang": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "eff_fp4",
               "eff_fp8", "expert_us"),
    "trtllm": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "eff_fp4", "expert_us"),
    "trtllm-2025": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "overhead_gib",
                    "eff_fp4", "expert_us"),
    "trtllm-2024": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "eff_fp4", "expert_us"),
    "trtllm-2023": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "overhead_gib",
                    "eff_fp4", "expert_us", "overlap"),
    "trtllm-v05": ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "overhead_gib",
                   "eff_fp4", "expert_us", "overlap"),
    "llamacpp": ("eff_bw", "eff_kv", "layer_us", "eff_dequant", "eager_us"),
    "llamacpp-2024": ("eff_bw", "layer_us", "eff_dequant", "eager_us"),
    "llamacpp-vulkan": ("eff_bw", "layer_us"),
    "llamacpp-vulkan-2025": ("eff_bw", "layer_us", "eff_dequant"),
}
#: Figures one profile shares with another: one figure fitted on both profiles' rows. A release family keeps the
#: efficiencies of its engine (the same kernels read the same memory) and differs in what changed between the
#: releases (fixed and per-sequence host time for TensorRT-LLM, the time per layer for llama.cpp); SGLang shares
#: vLLM's efficiencies (the same attention and GEMM libraries) and keeps its own host times. llama.cpp's Vulkan
#: backend runs other kernels through another launch path, so it keeps its own bandwidth share and time per layer.
#: The loss on packed weights (below 8 bits or in scaled blocks: calc.scenario.packed_weights) is each llama.cpp
#: family's own (its quantized matrix-vector kernels are what changed between the builds and backends), fitted where
#: its rows hold weights read as stored beside them.
SHARED = {
    ("trtllm-2023", "eff_bw"): "trtllm", ("trtllm-2023", "eff_kv"): "trtllm",
    ("trtllm-2023", "eff_flops"): "trtllm", ("trtllm-2023", "eff_prefill"): "trtllm",
    ("trtllm-2023", "eff_link"): "trtllm",
    ("trtllm-2023", "overhead_gib"): "trtllm-2025",
    # TensorRT-LLM v0.5 and v0.6 ran the same static-batch runtime as v0.7 with the older decode attention kernel
    # (kv_reread, fixed below): every fitted figure is one with trtllm-2023's (the host times) or trtllm's.
    **{("trtllm-v05", k): "trtllm" for k in ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "eff_link")},
    # The reserve of the TensorRT-engine releases (the current release works its memory out, calc/memory.py).
    ("trtllm-v05", "overhead_gib"): "trtllm-2025",
    # The 2025 releases over TensorRT engines run the kernels of the current ones: every speed figure is one.
    **{("trtllm-2025", k): "trtllm" for k in ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us",
                                              "eff_link")},
    # The 2024 C++ executor shares every speed figure with the current releases and differs in its memory only.
    **{("trtllm-2024", k): "trtllm" for k in ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us",
                                              "eff_link")},
    ("trtllm-2023", "step_us"): "trtllm-v05", ("trtllm-2023", "tok_us"): "trtllm-v05",
    # The static-batch TensorRT engines of v0.5 to v0.9 ran the same GEMM kernels whichever attention kernel they
    # decoded with: how much of a step's shorter time (memory or arithmetic) they hide under the longer is one figure.
    ("trtllm-v05", "overlap"): "trtllm-2023",
    ("llamacpp-2024", "eff_bw"): "llamacpp",
    # The builds before CUDA graphs launched every layer's kernels one by one (cuda_graphs=0): their time per
    # layer is the current builds' plus those launches, and a current build that runs without graphs (a card
    # older than Ampere) pays the same launches. Their rows fit the launches, the current builds' the rest.
    ("llamacpp-2024", "layer_us"): "llamacpp", ("llamacpp", "eager_us"): "llamacpp-2024",
    ("sglang", "eff_bw"): "vllm", ("sglang", "eff_kv"): "vllm", ("sglang", "eff_flops"): "vllm",
    ("sglang", "eff_link"): "vllm", ("sglang", "eff_prefill"): "vllm",
    # vLLM's FP8 linear layers (and SGLang's, from the same CUTLASS scaled GEMMs) quantize each token's activations
    # on the fly and multiply in scaled FP8 GEMMs; a decode step's GEMMs, one row per sequence, reach about the BF16
    # rate, a prefill's fill the FP8 tiles (docs/calibration.md section 3). Measured on vLLM's own FP8 rows only.
    ("sglang", "eff_fp8"): "vllm",
    # The Vulkan builds before the integer-dot matrix-vector kernels (PR #14903, August 2025) read memory and launch
    # their layers as the later ones do; what changed is how a quantized block reaches its dot product (dequantized
    # to floating point in the shader, then integer dot products on a quantized activation): the loss on packed
    # weights is each family's own, the rest is one.
    ("llamacpp-vulkan-2025", "eff_bw"): "llamacpp-vulkan", ("llamacpp-vulkan-2025", "layer_us"): "llamacpp-vulkan",
    # What the arithmetic keeps at FP4 is the FP4 GEMMs' (NVIDIA's CUTLASS and TRT-LLM-Gen kernels, which vLLM and
    # SGLang call through FlashInfer): only TensorRT-LLM's v1.0 rows measure it (NVFP4 on B200 and GB200), so every
    # other engine and release takes its measured figure rather than the prior.
    # What an MoE layer's experts cost in each prefill chunk beside their FLOPs is the grouped GEMM's and the token
    # gather's (the same problem in every engine): TensorRT-LLM's rows measure it (v1.0's Qwen3-30B-A3B with 128
    # small experts, Llama 4 Scout with 16 large ones; v0.17's Mixtral), vLLM's one MoE row with long prompts
    # (gpt-oss-20b, 20,000 tokens) barely moves with it, so every engine and release takes the one figure.
    **{(e, k): "trtllm" for e in ("vllm", "vllm-0.21", "vllm-2025", "vllm-v0", "sglang", "trtllm-2025", "trtllm-2024",
                                  "trtllm-2023", "trtllm-v05") for k in ("eff_fp4", "expert_us")},
    # vLLM's 2025 releases differ from the current ones in how they allocate memory (calc/memory.py), not in
    # any figure the rows measure: every figure is vllm's.
    **{(r, k): "vllm" for r in ("vllm-0.21", "vllm-2025")
       for k in ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "step_us", "tok_us", "eff_link", "eff_fp8")},
    # The V0 engine runs the same kernels as V1 (the efficiencies are one) through another host path: its scheduler,
    # block manager and output handling in the engine's own Python loop, per step and per sequence, where V1 splits
    # them between two processes and overlaps them with the GPU. Its host times are its own, fitted on its multi-step
    # runs (SGLang's benchmark of v0.6.0 with --num-scheduler-steps 10, docs/calibration.md section 3).
    **{("vllm-v0", k): "vllm" for k in ("eff_bw", "eff_kv", "eff_flops", "eff_prefill", "eff_link", "eff_fp8")},
}
#: In cross-validation, a profile left without rows takes its figures from this one.
SIBLING = {"llamacpp": "llamacpp-2024", "llamacpp-2024": "llamacpp", "llamacpp-vulkan": "llamacpp-vulkan-2025",
           "llamacpp-vulkan-2025": "llamacpp-vulkan", "trtllm": "trtllm-2025",
           "trtllm-2025": "trtllm", "trtllm-2023": "trtllm-v05", "trtllm-v05": "trtllm", "sglang": "vllm", "vllm": "sglang",
           "vllm-0.21": "vllm", "vllm-2025": "vllm", "vllm-v0": "vllm", "trtllm-2024": "trtllm"}
#: Figures fitted as one: batch-1 steps at short contexts read little cache, so llama.cpp's rows cannot tell the
#: bandwidth reached on the cache from the bandwidth reached on the weights.
#: llama.cpp's batch-1 rows measure no prefill: their prefill takes the arithmetic's one figure. TensorRT-LLM's 289
#: throughput rows hold prompts of 128 to 20,000 tokens beside outputs of 128 to 4,096, and vLLM's 14 prompts of
#: 128 to 20,000 tokens beside outputs of 128 to 2,048: both fit the two apart.
TIED = {"llamacpp-2024": {"eff_kv": "eff_bw"}, "llamacpp-vulkan": {"eff_kv": "eff_bw"},
        "llamacpp-vulkan-2025": {"eff_kv": "eff_bw"}}
for _e in ("llamacpp", "llamacpp-2024", "llamacpp-vulkan", "llamacpp-vulkan-2025"):
    TIED.setdefault(_e, {})["eff_prefill"] = "eff_flops"
_LLAMACPP_FIXED = {
    "step_us": (0.0, "llama.cpp's fixed time grows with the layers (its rows hold models of 22 to 80 layers): it is "
                     "fitted per layer (layer_us)"),
    "mem_util": (1.0, "llama.cpp allocates the cache it is told to (no memory fraction)"),
    "overhead_gib": (None, "empty: llama.cpp's own allocation, worked out from the launch settings (the CUDA "
                           "context and its compute buffers: calc/memory.py, docs/method.md section 8.2)"),
    "max_seqs": (4, "llama-server's default of 4 parallel slots (--parallel auto; ggml-org/llama.cpp issue 17989)"),
    "eff_fp4": (1.0, "llama.cpp unpacks FP4 weights (MXFP4, NVFP4) and multiplies them at 8 or 16 bits: no FP4 "
                     "arithmetic to lose"),
    "expert_us": (0.0, "no llama.cpp row measures a prefill: none modelled (0)"),
    "eff_fp8": (1.0, "llama.cpp multiplies at 8 or 16 bits whatever the weights' format: no FP8 arithmetic to lose"),
}
MODELLED = ("empty: the engine's own accounting, worked out from the launch settings (calc/memory.py, "
            "docs/method.md section 8.2)")
#: Figures taken from the engines' documentation or from the measurements' own notes, with their sources.
FIXED = {
    "vllm": {
        "layer_us": (0.0, "vLLM replays its decode steps as CUDA graphs, so launch costs do not grow with the layers"),
        "mem_util": (0.9, "vLLM's default gpu_memory_utilization 0.9, the setting its rows name"),
        "overhead_gib": (None, MODELLED),
        "max_seqs": (None, "empty: vLLM's default max_num_seqs by card, 1024 on cards of 70 GiB and more other "
                           "than the A100, else 256, at most max_num_batched_tokens (vllm/engine/arg_utils.py "
                           "get_batch_defaults; calc/engines.py default_max_seqs)"),
        "eff_dequant": (1.0, "no vllm row stores its dense weights packed, below 8 bits or in scaled blocks (gpt-oss's "
                              "MXFP4 experts are read "
                             "by the same kernels as its BF16 layers in the rows): no loss"),
    },
    "sglang": {
        "layer_us": (0.0, "SGLang replays its decode steps as CUDA graphs, as vLLM does"),
        "mem_util": (0.88, "SGLang's mem_fraction_static 0.88, the setting its rows name (--mem-frac 0.88)"),
        "max_seqs": (256, "vLLM's default max_num_seqs 256: SGLang's own cap (max_running_requests) follows its "
                          "memory, and the CUDA graphs it replays stop at 160 to 256 sequences"),
        "overhead_gib": (None, MODELLED),
        "eff_dequant": (1.0, "no sglang row stores its weights packed (below 8 bits or in scaled blocks): no loss"),
    },
    "trtllm": {
        "layer_us": (0.0, "TensorRT-LLM replays its decode steps as CUDA graphs (cuda_graph_config in the rows' "
                          "set-up), so launch costs do not grow with the layers"),
        "eff_dequant": (1.0, "one row only (9072b5c5, NVFP4) stores its weights packed (below 8 bits or in scaled "
                              "blocks): a figure fitted "
                             "to it would be tuned to one row, so none is fitted (1, no loss)"),
        "mem_util": (0.9, "the PyTorch backend's default KvCacheConfig.free_gpu_memory_fraction 0.9, of the memory "
                          "the weights and its profiling run leave (tensorrt_llm/_torch/pyexecutor/_util.py "
                          "KvCacheCreator)"),
        "overhead_gib": (None, MODELLED),
        "max_seqs": (2048, "TensorRT-LLM's default max_batch_size 2048 (trtllm-bench caps its own at 4096)"),
    },
    "trtllm-2023": {
        "layer_us": (0.0, "TensorRT-LLM engines run each step as one prebuilt TensorRT engine: no per-layer launches"),
        "eff_dequant": (1.0, "no trtllm-2023 row stores its weights packed (below 8 bits or in scaled blocks): no loss"),
        "mem_util": (1.0, "as trtllm: the whole card less a fitted reserve"),
        "max_seqs": (2048, "the rows set their own static batch (max_seqs in each link); trtllm's cap stands for "
                           "a user's scenario"),
    },
    "llamacpp": dict(_LLAMACPP_FIXED),
    "llamacpp-2024": dict(_LLAMACPP_FIXED),
    "llamacpp-vulkan": {**_LLAMACPP_FIXED,
                        "eff_dequant": (1.0, "every Vulkan row stores its weights packed (4- to 5-bit GGUF formats "
                                             "and Q8_0's scaled int8 blocks), so no row tells a loss on them from "
                                             "the bandwidth share: eff_bw is the packed weights' own (1, no loss "
                                             "beyond it), and the 2025 builds' loss is against it")},
    "llamacpp-vulkan-2025": dict(_LLAMACPP_FIXED),
}
FIXED["vllm-2025"] = dict(FIXED["vllm"])
FIXED["vllm-v0"] = {
    **FIXED["vllm"],
    "max_seqs": (256, "the V0 engine's default max_num_seqs 256 (vllm/config.py SchedulerConfig of v0.6 and v0.7; "
                      "the V1 engine sets its own by card)"),
}
FIXED["vllm-0.21"] = dict(FIXED["vllm"])
# The v0.17 to v0.21 releases over TensorRT engines: the current release's kernels, a fitted reserve.
FIXED["trtllm-2025"] = {
    **{k: v for k, v in FIXED["trtllm"].items() if k != "overhead_gib"},
    "eff_dequant": (1.0, "no trtllm-2025 row stores its weights packed (below 8 bits or in scaled blocks): no loss"),
    "mem_util": (1.0, "the v0.17 to v0.21 releases size the KV cache as a fraction (0.9 to 0.95) of the memory "
                      "left after the weights and buffers sized by the run's max_batch_size "
                      "(kv_cache_free_gpu_mem_fraction; perf-overview.md), which the rows do not give: "
                      "expressed here as the whole card less a fitted reserve"),
}
FIXED["trtllm-2024"] = {
    **FIXED["trtllm"],
    "mem_util": (0.9, "the executor's default kv_cache_free_gpu_mem_fraction 0.9 (KvCacheConfig; trtllm-bench's "
                      "--kv_cache_free_gpu_mem_fraction default .90), of the memory its buffers leave"),
    "overhead_gib": (None, MODELLED),
}
FIXED["trtllm-v05"] = {
    **FIXED["trtllm-2023"],
    "eff_dequant": (1.0, "no trtllm-v05 row stores its weights packed (below 8 bits or in scaled blocks): no loss"),
    "kv_reread": (1.0, "v0.5 and v0.6 decode through the masked multi-head attention kernel, one thread block "
                       "per query head and sequence (decoderMaskedMultiheadAttentionLaunch.h: grid(num_heads, "
                       "batch_size)), so each KV head is read once per query head it serves; v0.7 added the XQA "
                       "kernels for GQA (xqa_kernel cubins first in @3c44cb97; Falcon180B-H200.md: 'improved "
                       "its GQA kernels in the generation phase, up to 2.4x over v0.5')"),
}
_ONE_READ = {
    "vllm": "vLLM's decode kernels (FlashAttention, FlashInfer) load each KV head once for its group of query heads",
    "vllm-2025": "vLLM's decode kernels (FlashAttention, FlashInfer) load each KV head once for its group of query "
                 "heads",
    "vllm-0.21": "vLLM's decode kernels (FlashAttention, FlashInfer) load each KV head once for its group of query "
                 "heads",
    "vllm-v0": "vLLM's decode kernels (FlashAttention, FlashInfer) load each KV head once for its group of query "
               "heads",
    "sglang": "SGLang's decode kernels (FlashInfer, Triton) load each KV head once for its group of query heads",
    "trtllm": "the XQA and TRT-LLM-Gen decode kernels load each KV head once for its group of query heads",
    "trtllm-2024": "the XQA decode kernels load each KV head once for its group of query heads",
    "trtllm-2023": "v0.7 to v0.9 decode a GQA model the XQA kernels cover (Llama 2 70B's 8 query heads per KV head) "
                   "through them, which load each KV head once for its group of query heads (Falcon180B-H200.md "
                   "@3c44cb97; the v0.8.0 and v0.9.0 performance tables run Llama 2 70B with TRTLLM_ENABLE_XQA=1); a "
                   "shape they do not cover reads its cache per query head, kv_reread=1 in its link",
    "llamacpp": "llama.cpp's attention kernels load each KV head once for its group of query heads",
    "llamacpp-2024": "llama.cpp's batch-1 rows read too little cache for it to matter: none assumed",
    "llamacpp-vulkan": "llama.cpp's attention kernels load each KV head once for its group of query heads",
}
_ONE_READ["trtllm-2025"] = _ONE_READ["trtllm"]
_ONE_READ["llamacpp-vulkan-2025"] = _ONE_READ["llamacpp-vulkan"]
for _e, _why in _ONE_READ.items():
    FIXED[_e]["kv_reread"] = (0.0, _why)
_NO_EAGER = {
    "vllm": "no vllm row runs without CUDA graphs (--enforce-eager): its launches are not modelled (0)",
    "sglang": "no sglang row runs without CUDA graphs (--disable-cuda-graph): its launches are not modelled (0)",
    "trtllm": "no trtllm row runs without CUDA graphs: its launches are not modelled (0)",
    "trtllm-2023": "TensorRT-LLM engines run each step as one prebuilt TensorRT engine: no per-layer launches",
    "llamacpp-vulkan": "the Vulkan backend captures no CUDA graphs: its time per layer (layer_us) is its launches' "
                       "already",
}
_NO_EAGER["vllm-2025"] = _NO_EAGER["vllm"]
_NO_EAGER["vllm-0.21"] = _NO_EAGER["vllm"]
_NO_EAGER["vllm-v0"] = _NO_EAGER["vllm"]
_NO_EAGER["trtllm-2024"] = _NO_EAGER["trtllm"]
_NO_EAGER["trtllm-2025"] = _NO_EAGER["trtllm"]
_NO_EAGER["trtllm-v05"] = _NO_EAGER["trtllm-2023"]
_NO_EAGER["llamacpp-vulkan-2025"] = _NO_EAGER["llamacpp-vulkan"]
for _e, _why in _NO_EAGER.items():
    FIXED[_e]["eager_us"] = (0.0, _why)
for _e in ("trtllm", "trtllm-2025", "trtllm-2024", "trtllm-2023", "trtllm-v05"):
    FIXED[_e]["eff_fp8"] = (1.0, "TensorRT-LLM's FP8 rows (every Hopper row of v1.0 and v0.17, the H100 and H200 rows of "
                                 "v0.5 to v0.9) are fitted at eff_flops itself, beside its FP16 and BF16 rows on "
                                 "the same share: no loss of its own at FP8")
#: The clock (GHz) a clock-bound profile's ``layer_us`` is stated at: a round figure inside the boost clocks of the
#: cards its rows ran on (1.5 to 2.6 GHz), so ``layer_us`` reads as the time on a typical card.
LAYER_GHZ = 2.0
_CLOCKED = {
    "llamacpp-vulkan": "the Vulkan backend records each layer's small shaders (norms, RoPE, the KV write, attention "
                       "at a short context) into a command buffer and runs them one after another, each waiting on a "
                       "barrier after the last: a count of GPU clock cycles, so on a card of known boost clock a "
                       f"layer takes layer_us x {LAYER_GHZ:g} / clock_ghz (docs/calibration.md)",
}
_CLOCKED["llamacpp-vulkan-2025"] = _CLOCKED["llamacpp-vulkan"]
for _e in FIXED:
    FIXED[_e]["layer_ghz"] = ((LAYER_GHZ, _CLOCKED[_e]) if _e in _CLOCKED else
                              (0.0, f"{_e}'s time per layer is not taken to follow the card's clock: no row of it "
                                    "tells its clock cycles from its microseconds"))
#: Engines measured on several cards lend their all-reduce efficiency to engines that were not (the same
#: interconnects and collective libraries carry every engine's all-reduces).
LINK_DONOR = "trtllm"
#: Profiles in the order they are listed (the ones with rows).
FAMILY_ORDER = ("vllm", "vllm-0.21", "vllm-2025", "vllm-v0", "sglang", "trtllm", "trtllm-2025", "trtllm-2024", "trtllm-2023", "trtllm-v05", "llamacpp", "llamacpp-vulkan",
                "llamacpp-vulkan-2025", "llamacpp-2024")
#: Where a step's memory and arithmetic overlap fully (the roofline's max: ``overlap`` 1), and why.
_FULL_OVERLAP = {
    "vllm": "the roofline's max of a step's memory and arithmetic times: vLLM's GEMMs (CUTLASS, cuBLAS) stream their "
            "next tile while the tensor cores work on this one; a share fitted on its rows is not kept "
            "(docs/calibration.md section 3)",
    "trtllm": "the roofline's max of a step's memory and arithmetic times: the GEMM kernels of 2024 on stream their "
              "next tile while the tensor cores work on this one; a share fitted on the v1.0 and v0.17 rows flattered "
              "their NVFP4 rows out of sample (docs/calibration.md section 3)",
    "sglang": "the roofline's max of a step's memory and arithmetic times: SGLang's GEMMs (the CUTLASS and cuBLAS "
              "kernels vLLM calls) stream their next tile while the tensor cores work on this one; a share fitted on "
              "vLLM's rows is not kept (docs/calibration.md section 3)",
    "llamacpp": "the roofline's max: llama.cpp's rows are decode steps of one to a few sequences, memory-bound far "
                "from the ridge point, so they cannot measure a share",
}
for _e in FAMILY_ORDER:
    if "overlap" not in FITTED[_e]:
        _home = next(h for h in ("vllm", "sglang", "trtllm", "llamacpp") if _e.startswith(h))
        FIXED[_e]["overlap"] = (1.0, _FULL_OVERLAP[_home])


#: Figures the scenario derives from other engine figures a link may give (calc/scenario/keys.py ``after``:
#: ``eff_prefill`` and ``eff_fp4`` from ``eff_flops`` or ``eff``, ``expert_us`` from ``step_us``): a row whose link
#: gives one of those takes the derived figure as the report does, not the profile's.
FROM_LINK_FIGURES = {k.key: k.after for k in KEY_TABLE
                     if k.key in FIGURES and k.after and set(k.after) <= {*FIGURES, "eff"}}


class FastRows:
    """Every figure-independent quantity of a set of rows, so that figures (one array per figure, a value per
    row) are evaluated on all rows in one numpy expression. It repeats docs/method.md section 8
    (model.step_parts, traffic.load_throughput) term by term; :func:`check_against_report` proves it agrees with
    ``calc.report``. A figure the row's own link sets (``max_seqs=8``) overrides the profile's, as in the report."""

    COLS = ("gbw", "gT", "mem", "g", "W", "Wl", "free_fixed", "rule_trt", "C_end", "Wd8", "Wd4", "Wm8", "Wm4", "q", "C_ctx", "fl", "B_step", "comm_step",
            "C_load", "fl_load", "cb", "cl", "O", "I", "Fp", "L", "X_ctx", "X_load", "no_graphs",
            "one_seq_graphs", "fp4", "fp8", "PFx", "clock")

    def __init__(self, rows: list[Measurement]):
        self.rows = list(rows)
        self.measured = np.array([r.measured for r in self.rows], dtype=float)
        self.is_step = np.array([r.metric == "step_ms" for r in self.rows])
        self.engine = np.array([r.engine for r in self.rows])
        self.source = np.array([source_of(r) for r in self.rows])
        cols: dict[str, list[float]] = {k: [] for k in self.COLS}
        self.link_figures = {k: [] for k in FIGURES}
        # A throughput measured as a finite benchmark run (run_prompts, traffic.run_throughput): the steps it spends
        # at each batch b (its schedule depends on the reply lengths and the places memory holds, no fitted figure),
        # one entry per (row, b) with k_b > 0; the run's tokens and requests per row.
        run_row, run_b, run_k = [], [], []
        self.run_tokens = np.zeros(len(self.rows))
        self.run_n = np.zeros(len(self.rows))
        family = []  # each row's card family (accuracy.region), for eff_card
        for i, row in enumerate(self.rows):
            resolved = load(row.link).scenario
            if model.row_split(resolved):
                raise SystemExit(f"row {row.id}: a row split's hand-overs are worked out from llama.cpp issue #3120 "
                                 "(calc/engines.py ROW_SPLIT_LAYER_US), not fitted: keep its rows in "
                                 "calc/data/measurements_other.csv")
            family.append(region(resolved)[1])
            # The arithmetic counted at its plain FLOPs: the shares at FP4 and on routed experts are figures.
            s = resolved.model_copy(update={"eff_fp4": 1.0, "eff_fp8": 1.0, "expert_us": 0.0})
            raw, _ = split_link(row.link)
            for k in FIGURES:
                pinned = k in raw or any(a in raw for a in FROM_LINK_FIGURES.get(k, ()))
                self.link_figures[k].append(float(getattr(resolved, k)) if pinned else np.nan)
            g = s.gpus
            # The KV bytes a kernel that reads each KV head once per query head adds, per unit of kv_reread
            # (the step's read is linear in kv_reread: model.cache_bytes_read).
            once = s.model_copy(update={"kv_reread": 1.0})

            def reread(n: float, s=s, once=once) -> float:
                return s.attn * float(model.cache_bytes_read(once, n) - model.cache_bytes(s, n))
            gs = model.speed_cards(s)  # the cards whose peaks add up within a step (1 where layers are split)
            cols["gbw"].append(gs * s.bw_tbs * 1e12)
            cols["gT"].append(gs * s.tflops * 1e12)
            cols["mem"].append(s.mem_gib)
            cols["g"].append(g)
            cols["W"].append(model.weight_bytes(s))
            cols["Wl"].append(memory.loaded_weight_bytes(s))
            rule = engines.base(s.engine)
            cols["free_fixed"].append(memory.free_bytes(s) if s.engine in engines.MODELLED_RESERVE else np.nan)
            cols["rule_trt"].append(float(rule == "trtllm"))
            cols["C_end"].append(float(model.cache_bytes(s, memory.paged_context(s, traffic.request_context(s)))))
            # model.weight_parts: the bytes a step reads of each part, by whether it is packed (read at
            # eff_dequant of eff_bw) and whether it is a routed expert (read at the step's expert coverage).
            for name, routed, low in (("Wd8", False, False), ("Wd4", False, True), ("Wm8", True, False),
                                      ("Wm4", True, True)):
                cols[name].append(sum(p.params * p.read * p.bits / 8 for p in model.weight_parts(s)
                                      if p.routed == routed and model.read_packed(s, p.bits) == low))
            cols["q"].append(1 - s.experts_active / s.experts if s.experts else 1.0)
            if row.metric == "step_ms":
                if s.batch == "auto":
                    raise SystemExit(f"row {row.id}: a step_ms row needs an explicit batch")
                B = int(s.batch)
                cols["B_step"].append(B)
                cols["C_ctx"].append(s.attn * B * float(model.cache_bytes(s, s.ctx)))
                cols["fl"].append(B * float(model._flops_per_token(s, s.ctx)))
                cols["comm_step"].append(float(model.comm_seconds(s, B)))
                cols["X_ctx"].append(B * reread(s.ctx))
            else:
                cols["X_ctx"].append(0.0)
                cols["B_step"].append(0)
                cols["C_ctx"].append(0.0)
                cols["fl"].append(0.0)
                cols["comm_step"].append(0.0)
            n_load = traffic.load_context(s)
            cols["C_load"].append(s.attn * float(model.cache_bytes(s, n_load)))
            cols["X_load"].append(reread(n_load))
            cols["fl_load"].append(float(model._flops_per_token(s, n_load)))
            # model.comm_seconds per sequence (cb, over eff_link) and per step (cl): all-reduces, or hand-overs
            # at the g - 1 boundaries where the engine splits by layers.
            hops = (g - 1) if model.splits_layers(s) else 2 * s.layers * 2 * (g - 1) / g
            cols["cb"].append(hops * s.hidden * 2 / (s.link_gbs * 1e9) if g > 1 else 0.0)
            cols["cl"].append(((g - 1) if model.splits_layers(s) else 2 * s.layers) * s.link_us * 1e-6
                              if g > 1 else 0.0)
            cols["O"].append(s.out_tok)
            cols["I"].append(s.in_tok)
            cols["Fp"].append(traffic.prefill_flops(s))
            cols["L"].append(s.layers)
            cols["clock"].append(s.clock_ghz or 0.0)
            cols["no_graphs"].append(1.0 - s.cuda_graphs)
            cols["one_seq_graphs"].append(float(engines.graphs_for_one_sequence_only(s.engine)))
            cols["fp4"].append(float(s.compute == "fp4"))
            cols["fp8"].append(float(s.compute == "fp8"))
            # traffic.expert_prefill_seconds under load per microsecond of expert_us
            cols["PFx"].append(float(traffic.expert_prefill_seconds(s.model_copy(update={"expert_us": 1.0}))))
            if row.metric != "step_ms" and resolved.run_prompts:
                if np.isnan(cols["free_fixed"][-1]):
                    raise SystemExit(f"row {row.id}: a finite-run row needs an engine whose cache no fitted figure "
                                     "sizes")
                lengths = traffic.run_lengths(resolved)
                steps = traffic.run_schedule(lengths, traffic.throughput_batch(resolved))
                for b in np.flatnonzero(steps[1:]) + 1:
                    run_row.append(i)
                    run_b.append(b)
                    run_k.append(steps[b])
                self.run_tokens[i] = float(lengths.sum())
                self.run_n[i] = len(lengths)
        for k, v in cols.items():
            setattr(self, k, np.array(v, dtype=float))
        self.family = np.array(family)
        self.link_figures = {k: np.array(v, dtype=float) for k, v in self.link_figures.items()}
        self.run_row = np.array(run_row, dtype=int)
        self.run_b = np.array(run_b, dtype=float)
        self.run_k = np.array(run_k, dtype=float)

    def subset(self, mask: np.ndarray) -> FastRows:
        out = FastRows.__new__(FastRows)
        out.rows = [r for r, m in zip(self.rows, mask, strict=True) if m]
        for k in (*self.COLS, "measured", "is_step", "engine", "source", "family", "run_tokens", "run_n"):
            setattr(out, k, getattr(self, k)[mask])
        out.link_figures = {k: v[mask] for k, v in self.link_figures.items()}
        keep = mask[self.run_row]
        out.run_row = (np.cumsum(mask) - 1)[self.run_row[keep]]
        out.run_b, out.run_k = self.run_b[keep], self.run_k[keep]
        return out

    def predict(self, f: dict[str, np.ndarray]) -> np.ndarray:
        """Each row's metric under per-row figures ``f`` (NaN where nothing fits; ``max_seqs`` NaN = no cap)."""
        # The card family's share of both bandwidth figures (model.peaks: eff_card); 1 but for FAMILY_FITTED.
        shares = f.get("eff_card", {})  # {family: (share, profiles covered; empty: all)}
        card = np.array([shares[fam][0] if fam in shares and (not shares[fam][1] or e in shares[fam][1]) else 1.0
                         for fam, e in zip(self.family, self.engine, strict=True)], dtype=float)
        f = {k: np.where(np.isnan(self.link_figures[k]), np.asarray(v, dtype=float), self.link_figures[k])
             for k, v in f.items() if k != "eff_card"}
        gbw_card = self.gbw * card
        GiB = model.GiB
        # The arithmetic's peak at eff_flops, times eff_fp4 at FP4, and a decode step's times eff_fp8 at FP8
        # (model.arithmetic_share); a prefill's (gT_pf) at eff_prefill keeps the FP8 peak.
        gT_pf = self.gT * np.where(self.fp4 > 0, f["eff_fp4"], 1.0)
        gT = gT_pf * np.where(self.fp8 > 0, f["eff_fp8"], 1.0)
        # Packed weights are read at eff_dequant of eff_bw; the fixed time is per step and per layer.
        bw, dq = gbw_card * f["eff_bw"], f["eff_dequant"]

        every = slice(None)

        def both(mem, cmp, w):  # model.overlapped_seconds
            return np.maximum(mem, cmp) + (1 - w) * np.minimum(mem, cmp)

        def weights_s(B, ix=every):  # model.weight_read_seconds: each part at its bandwidth, routed experts at their coverage
            return (self.Wd8[ix] / bw[ix] + self.Wd4[ix] / (bw[ix] * dq[ix])
                    + (1 - self.q[ix] ** B) * (self.Wm8[ix] / bw[ix] + self.Wm4[ix] / (bw[ix] * dq[ix])))

        def fixed(B, ix=every):  # model.fixed_step_seconds: the launches where the step runs without a CUDA graph
            launches = np.maximum(self.no_graphs[ix], self.one_seq_graphs[ix] * (B > 1))
            clocked = (f["layer_ghz"][ix] > 0) & (self.clock[ix] > 0)  # model.layer_clock_factor
            c = np.where(clocked, f["layer_ghz"][ix] / np.where(clocked, self.clock[ix], 1.0), 1.0)
            return (f["step_us"][ix] + self.L[ix] * (f["layer_us"][ix] + launches * f["eager_us"][ix]) * c) * 1e-6

        def tau(B, ix=every):  # traffic.load_step_seconds
            return (both(weights_s(B, ix) + B * (self.C_load[ix] + f["kv_reread"][ix] * self.X_load[ix])
                         / (gbw_card[ix] * f["eff_kv"][ix]),
                         B * self.fl_load[ix] / (gT[ix] * f["eff_flops"][ix]), f["overlap"][ix])
                    + B * self.cb[ix] / f["eff_link"][ix] + self.cl[ix] + fixed(B, ix) + B * f["tok_us"][ix] * 1e-6)

        # traffic.load_prefill_seconds
        t_pf = (self.Fp / (gT_pf * f["eff_prefill"]) + self.PFx * f["expert_us"] + self.I * self.cb / f["eff_link"])
        # step_ms rows: the decode step of docs/method.md section 8 at the row's batch and context.
        step = (both(weights_s(self.B_step) + (self.C_ctx + f["kv_reread"] * self.X_ctx) / (gbw_card * f["eff_kv"]),
                     self.fl / (gT * f["eff_flops"]), f["overlap"])
                + self.comm_step + fixed(self.B_step)) * 1e3
        # max_throughput rows: traffic.load_throughput at traffic.throughput_batch.
        # calc/memory.py: vLLM's, SGLang's and TensorRT-LLM 2024's cache is their own accounting (no fitted figure
        # enters it); the other TensorRT-LLM profiles take mem_util of what the weights and a fitted reserve leave of
        # the card; the others mem_util of the card.
        over = np.nan_to_num(f["overhead_gib"], nan=0.0)
        share = self.g * (f["mem_util"] * self.mem - over) * GiB - self.Wl
        trt = f["mem_util"] * (self.g * (self.mem - over) * GiB - self.Wl)
        free = np.where(np.isnan(self.free_fixed), np.where(self.rule_trt > 0, trt, share), self.free_fixed)
        B = np.floor(np.maximum(0.0, free) / self.C_end)
        B = np.where(np.isnan(f["max_seqs"]), B, np.minimum(B, np.nan_to_num(f["max_seqs"], nan=0.0)))
        with np.errstate(invalid="ignore", divide="ignore"):
            thr = B * self.O / (self.O * tau(B) + B * t_pf)
            # traffic.run_throughput: the run's tokens over its steps at each batch and its prefills.
            run_s = np.bincount(self.run_row, weights=self.run_k * tau(self.run_b, self.run_row),
                                minlength=len(self.measured)) + self.run_n * t_pf
            thr = np.where(self.run_n > 0, self.run_tokens / run_s, thr)
        thr = np.where(B > 0, thr, np.nan)
        return np.where(self.is_step, step, thr)


# ---------------------------------------------------------------- the joint fit


class Plan:
    """Which figure of which profile is a free parameter (a *slot*), shared, tied or fixed, for one set of rows.

    ``present`` is the set of profiles that have rows; a profile without rows takes its sibling's slots."""

    def __init__(self, present: set[str], fixed: dict[str, dict[str, float | None]], multi: set[str] | None = None):
        self.fixed = fixed
        owner: dict[tuple[str, str], str] = {}
        for e in FAMILY_ORDER:
            for k in FITTED[e]:
                home = SHARED.get((e, k), e)
                owner[(e, k)] = home
        # A profile without rows, and a shared figure whose home has no rows, move to a profile that has them.
        for (e, k), home in list(owner.items()):
            if home not in present:
                sib = SIBLING[home]
                owner[(e, k)] = SHARED.get((sib, k), sib) if k in FITTED[sib] else sib
        # An all-reduce share no row on several cards pins down is the donor's (LINK_DONOR), as for the profiles
        # that fit none: left to its prior it would be a guess (``multi``: the profiles with such rows).
        if multi is not None:
            donor = SHARED.get((LINK_DONOR, "eff_link"), LINK_DONOR)
            for (e, k), home in list(owner.items()):
                if k == "eff_link" and home not in multi and donor in multi:
                    owner[(e, k)] = donor
        self.owner = owner
        self.slots = sorted({f"{home}.{k}" for (e, k), home in owner.items()}) + [
            f"card.{fam}.eff_card" for fam in FAMILY_FITTED]

    def figures(self, x: np.ndarray, engine: np.ndarray) -> dict[str, np.ndarray]:
        """Per-row figure arrays for parameter vector ``x`` and the rows' profiles ``engine``."""
        vals = dict(zip(self.slots, x, strict=True))
        out = {k: np.empty(len(engine)) for k in FIGURES}
        for e in set(engine.tolist()):
            fe = self.profile(vals, e)
            sel = engine == e
            for k in FIGURES:
                out[k][sel] = np.nan if fe[k] is None else fe[k]
        out["eff_card"] = {fam: (vals[f"card.{fam}.eff_card"], under) for fam, under in FAMILY_FITTED.items()}
        return out

    def profile(self, vals: dict[str, float], e: str) -> dict[str, float | None]:
        f: dict[str, float | None] = {}
        for k in FIGURES:
            if (e, k) in self.owner:
                f[k] = vals[f"{self.owner[(e, k)]}.{k}"]
            else:
                f[k] = self.fixed[e][k]
        for k, v in TIED.get(e, {}).items():
            f[k] = f[v]
        return f

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lo = np.array([BOUNDS[s.split(".")[-1]][0] for s in self.slots])
        hi = np.array([BOUNDS[s.split(".")[-1]][1] for s in self.slots])
        return lo, hi


def log_errors(fast: FastRows, pred: np.ndarray) -> np.ndarray:
    """``log(predicted / measured)``, MISS where nothing fits."""
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.log(pred / fast.measured)
    return np.where(np.isfinite(e), e, MISS)


def fit(fast: FastRows, fixed: dict[str, dict[str, float | None]]) -> tuple[Plan, dict[str, float]]:
    """The joint fit on ``fast``'s rows: returns the plan and the fitted value of each slot."""
    multi = {SHARED.get((e, "eff_link"), e) for e in fast.engine[fast.g > 1].tolist()}
    plan = Plan(set(fast.engine.tolist()), fixed, multi)
    lo, hi = plan.bounds()
    names = [s.split(".")[-1] for s in plan.slots]
    slower = np.where(fast.is_step, 1.0, -1.0)  # sign of a log error that means "predicted slower"

    def residuals(x):
        e = log_errors(fast, fast.predict(plan.figures(x, fast.engine)))
        w = np.where(e * slower < 0, math.sqrt(OVER_WEIGHT), 1.0)  # faster than measured counts twice
        prior = []
        for k, v in zip(names, x, strict=True):
            prior.append((v - PRIOR[k]) / PRIOR_SCALE[k] if k in PRIOR_SCALE else math.log(v / PRIOR[k]))
        return np.concatenate([w * e, math.sqrt(PRIOR_WEIGHT) * np.array(prior)])

    best = None
    for share in (None, 0.3, 0.7):
        if share is None:
            x0 = np.array([min(max(PRIOR[k], lo_ + 1e-3 * (hi_ - lo_)), hi_ - 1e-3 * (hi_ - lo_))
                           for k, lo_, hi_ in zip(names, lo, hi, strict=True)])
        else:
            x0 = lo + share * (hi - lo)
        r = least_squares(residuals, x0, bounds=(lo, hi), method="trf", x_scale="jac", max_nfev=5000)
        if best is None or r.cost < best.cost - 1e-12:
            best = r
    return plan, {s: float(v) for s, v in zip(plan.slots, best.x, strict=True)}


def constrained(fast: FastRows, plan: Plan, vals: dict[str, float], slot: str) -> bool:
    """True when some row's prediction moves by more than 0.1 % as the slot moves by 10 % (or 100 µs / 1 GiB)."""
    name = slot.split(".")[-1]
    lo, hi = BOUNDS[name]
    shift = {"step_us": 100.0, "tok_us": 1.0, "overhead_gib": 1.0, "layer_us": 10.0, "eager_us": 10.0,
             "expert_us": 1.0}.get(name)
    x = np.array([vals[s] for s in plan.slots])
    base = fast.predict(plan.figures(x, fast.engine))
    i = plan.slots.index(slot)
    rel = 0.0
    for sign in (-1, 1):
        y = x.copy()
        y[i] = x[i] + sign * shift if shift else x[i] * (1.1 if sign > 0 else 1 / 1.1)
        if lo <= y[i] <= hi or shift is None:
            with np.errstate(invalid="ignore"):
                rel = max(rel, float(np.nanmax(np.abs(fast.predict(plan.figures(y, fast.engine)) / base - 1))))
    return rel > 1e-3


def on_bound(name: str, x: float) -> str:
    lo, hi = BOUNDS[name]
    if abs(x - lo) <= 1e-3 * max(1.0, abs(hi - lo)):
        return "lower"
    if abs(x - hi) <= 1e-3 * max(1.0, abs(hi - lo)):
        return "upper"
    return ""


def rounded(name: str, x):
    if x is None:
        return None
    if name in ("step_us", "tok_us", "layer_us", "eager_us", "expert_us"):
        return round(x, 1)
    if name == "overhead_gib":
        return round(x, 2)
    if name == "max_seqs":
        return int(x)
    return round(x, 4)


def fixed_figures(rows: list[Measurement]) -> tuple[dict, dict]:
    """``({profile: {figure: value}}, {profile: {figure: note}})`` of the figures not fitted."""
    notes = {e: dict(FIXED[e]) for e in FAMILY_ORDER}
    values = {}
    for e in FAMILY_ORDER:
        v = {k: val for k, (val, _) in notes[e].items()}
        for k in FIGURES:
            if k not in v and k not in FITTED[e]:
                v[k] = PRIOR[k]
        values[e] = v
    return values, notes


def cross_validate(fast: FastRows, fixed: dict) -> np.ndarray:
    """Each row predicted by a fit without its source's rows (docs/calibration.md section 5)."""
    out = np.full(len(fast.rows), np.nan)
    for src in sorted(set(fast.source.tolist())):
        held = fast.source == src
        train = fast.subset(~held)
        plan, vals = fit(train, fixed)
        x = np.array([vals[s] for s in plan.slots])
        test = fast.subset(held)
        out[held] = test.predict(plan.figures(x, test.engine))
    return out


# ---------------------------------------------------------------- error summaries


def summaries(rows: list[Measurement], predicted, basis: str) -> list[dict]:
    """:func:`calc.validate.summarise` of ``rows`` with ``predicted`` (NaN: no prediction), each marked with its
    ``basis``."""
    results = [Result(r, None if not np.isfinite(p) else float(p)) for r, p in zip(rows, predicted, strict=True)]
    return [dict(b, basis=basis) for b in summarise(results)]


# ---------------------------------------------------------------- output


def build_table(fast: FastRows, plan: Plan, vals: dict, notes: dict, data_name: str) -> dict:
    """``{engine: {figure: (value, basis, source)}}`` for every profile (``notes``: the fixed figures' sources,
    from :func:`fixed_figures`)."""
    table: dict[str, dict[str, tuple]] = {"roofline": {
        k: (ROOFLINE[k], "definition", "docs/method.md (eff = 0.7 for every part, no fixed costs, the "
                                       "whole card less 4 GiB, no cap on sequences)") for k in FIGURES}}
    shown = {s: rounded(s.split(".")[-1], v) for s, v in vals.items()}
    for e in FAMILY_ORDER:
        prof = plan.profile(shown, e)
        entry = {}
        for k in FIGURES:
            v = prof[k]
            if (e, k) in plan.owner:
                home = plan.owner[(e, k)]
                slot = f"{home}.{k}"
                home_ids = " ".join(r.id for r in fast.rows if plan.owner.get((r.engine, k)) == home)
                if constrained(fast, plan, vals, slot):
                    bound = on_bound(k, v)
                    note = f" (on its {bound} bound {BOUNDS[k][0 if bound == 'lower' else 1]:g})" if bound else ""
                    shared = f", one figure shared by {', '.join(sorted({x for (x, kk), h in plan.owner.items() if kk == k and h == home}))}" \
                        if sum(1 for (x, kk), h in plan.owner.items() if kk == k and h == home) > 1 else ""
                    entry[k] = (v, "fitted", f"{SCRIPT} on {data_name} rows {home_ids}{shared}{note}")
                else:
                    entry[k] = (PRIOR[k], "prior", f"no {e} row constrains it: the prior of {SCRIPT}")
            elif k in TIED.get(e, {}):
                # The tied figure's basis: a figure tied to a prior is a prior.
                entry[k] = (v, entry[TIED[e][k]][1], f"{SCRIPT}: the same figure as {TIED[e][k]} (the rows cannot "
                                                     "tell the two apart)")
            elif k in notes[e]:
                entry[k] = (v, "fixed", notes[e][k][1])
            elif k == "eff_link":
                entry[k] = (plan.profile(shown, LINK_DONOR)["eff_link"], "copied",
                            f"no {e} row runs on several cards: {LINK_DONOR}'s fitted figure")
            else:
                entry[k] = (PRIOR[k], "prior", f"no {e} row constrains it: the prior of {SCRIPT}")
        table[e] = entry
    return table


def write_engines(path: Path, table: dict, date: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["engine", "figure", "value", "basis", "source", "fitted_on"])
        for e in ENGINES:
            for name in FIGURES:
                value, basis, source = table[e][name]
                w.writerow([e, name, "" if value is None else value, basis, source, date])


def family_table(fast: FastRows, plan: Plan, vals: dict, data_name: str) -> dict[str, tuple]:
    """``{family: (eff_card, profiles covered, basis, source)}`` of every card family: fitted for
    :data:`FAMILY_FITTED` where a row constrains it, else 1."""
    out = {}
    for fam in engines.card_families():
        slot = f"card.{fam}.eff_card"
        if fam not in FAMILY_FITTED:
            out[fam] = (1.0, (), "reference", "the engine profiles' bandwidth shares are fitted on this family's rows "
                                              f"({SCRIPT}): its own share is theirs, 1 by definition")
            continue
        under = FAMILY_FITTED[fam]
        if constrained(fast, plan, vals, slot):
            ids = " ".join(r.id for r, f in zip(fast.rows, fast.family, strict=True) if f == fam)
            bound = on_bound("eff_card", vals[slot])
            note = f" (on its {bound} bound)" if bound else ""
            out[fam] = (rounded("eff_card", vals[slot]), under, "fitted",
                        f"{SCRIPT} on {data_name} rows {ids}, one figure for the profiles named{note}")
        else:
            out[fam] = (1.0, under, "prior", f"no row on a {fam} card constrains it: the prior of {SCRIPT}")
    return out


def write_families(path: Path, families: dict[str, tuple], date: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["family", "eff_card", "engines", "basis", "source", "fitted_on"])
        for fam, (value, under, basis, source) in families.items():
            w.writerow([fam, value, " ".join(under), basis, source, date])


def write_errors(path: Path, bs: list[dict], date: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["engine", "metric", "basis", "n", "signed_median_pct", "median_pct", "p90_pct", "max_pct",
                    "most_flattering_pct", "rows", "fitted_on", "source"])
        for b in bs:
            w.writerow([b["engine"], b["metric"], b["basis"], b["n"], round(b["signed_median_pct"], 2),
                        round(b["median_pct"], 2), round(b["p90_pct"], 2), round(b["max_pct"], 2),
                        round(b["most_flattering_pct"], 2), " ".join(b["rows"]), date, b["source"]])


def write_cv(path: Path, fast: FastRows, inside: np.ndarray, cv: np.ndarray) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["id", "engine", "metric", "source", "measured", "predicted_in_sample", "predicted_cv"])
        for r, a, b, src in zip(fast.rows, inside, cv, fast.source, strict=True):
            w.writerow([r.id, r.engine, r.metric, src, r.measured, "" if not np.isfinite(a) else f"{a:.6g}",
                        "" if not np.isfinite(b) else f"{b:.6g}"])


def region_summaries(rows: list[Measurement], predicted) -> list[dict]:
    """The error of ``predicted`` on ``rows`` grouped by measured region (:func:`calc.accuracy.region`: the
    profile whose figures predict the row, card family, model kind, cards per replica, packed weights) and metric,
    as :func:`calc.validate.summarise` gives each group; rows on custom cards name no card family and are left
    out (docs/calibration.md section 6)."""
    groups: dict[tuple, list[Result]] = {}
    for r, p in zip(rows, predicted, strict=True):
        where = region(load(r.link).scenario)
        if where[1] != "unknown":
            groups.setdefault(where, []).append(Result(r, None if not np.isfinite(p) else float(p)))
    return [dict(b, region=where) for where, rs in sorted(groups.items()) for b in summarise(rs, by_engine=False)]


def kept_out_region_summaries(kept: list[Result]) -> list[dict]:
    """The error of the shipped figures on ``kept``, the rows kept out of the fit
    (:func:`calc.validate.kept_out_results`, evaluated once by the caller), grouped by measured region as
    :func:`region_summaries` groups, each row's region named by the profile whose kept-out band it files under
    (``vllm-v0``'s rows under their own), marked ``"basis": "kept-out"``; rows split by rows (``split=row``) are
    left out."""
    groups: dict[tuple, list[Result]] = {}
    for r in kept:
        scenario = load(r.row.link).scenario
        where = (r.row.engine, *region(scenario)[1:])
        # A row split is a way over the cards of its own, which a scenario of whole layers on as many cards does not
        # share: its rows count in the engine's band only.
        if where[1] != "unknown" and not model.row_split(scenario):
            groups.setdefault(where, []).append(r)
    return [dict(b, region=where, basis=KEPT_OUT) for where, rs in sorted(groups.items())
            for b in summarise(rs, by_engine=False)]


def write_regions(path: Path, bs: list[dict], date: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["engine", "card_family", "model_kind", "gpus", "packed", "metric", "basis", "n",
                    "signed_median_pct", "median_pct", "p90_pct", "max_pct", "most_flattering_pct", "rows",
                    "fitted_on", "source"])
        for b in bs:
            engine, arch, kind, gpus, packed = b["region"]
            basis = b.get("basis", CROSS_VALIDATED)
            w.writerow([engine, arch, kind, gpus, int(packed), b["metric"], basis, b["n"],
                        round(b["signed_median_pct"], 2), round(b["median_pct"], 2), round(b["p90_pct"], 2),
                        round(b["max_pct"], 2), round(b["most_flattering_pct"], 2), " ".join(b["rows"]), date,
                        f"{SCRIPT}: each source's rows predicted by a fit without that source, by measured region"
                        if basis == CROSS_VALIDATED else
                        f"{SCRIPT}: the rows of calc/data/measurements_other.csv, kept out of the fit, predicted by "
                        "the shipped figures, by measured region"])


def check_against_report(fast: FastRows, table: dict, families: dict[str, tuple]) -> np.ndarray:
    """Every row through ``calc.report`` with the figures now in ``engines.csv`` and ``card_families.csv`` equals the
    fast copy; returns the report's predictions (NaN where none)."""
    for name in ("_table", "profiles", "_bands", "card_families"):
        getattr(engines, name).cache_clear()
    f = {k: np.array([np.nan if table[e][k][0] is None else table[e][k][0] for e in fast.engine]) for k in FIGURES}
    f["eff_card"] = {fam: (v, under) for fam, (v, under, _, _) in families.items()}
    quick = fast.predict(f)
    slow = np.array([r.predicted if r.predicted is not None else np.nan for r in evaluate(fast.rows)])
    if not np.allclose(quick, slow, rtol=1e-9, equal_nan=True):
        bad = [(r.id, q, s) for r, q, s in zip(fast.rows, quick, slow, strict=True)
               if not math.isclose(q, s, rel_tol=1e-9)]
        raise SystemExit(f"the fast copy and calc.report disagree: {bad}")
    return slow


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(ROOT / DATA), help="measurements file (default: %(default)s)")
    p.add_argument("--dry-run", action="store_true", help="fit and print, write nothing")
    p.add_argument("--date", default=dt.date.today().isoformat(), help="fit date written with each figure")
    args = p.parse_args(argv)

    rows = [r for r in read_measurements(args.data) if r.engine in FITTED]
    path = Path(args.data).resolve()
    data_name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else args.data
    fast = FastRows(rows)
    fixed, notes = fixed_figures(rows)
    plan, vals = fit(fast, fixed)
    x = np.array([vals[s] for s in plan.slots])
    inside = fast.predict(plan.figures(x, fast.engine))
    cv = cross_validate(fast, fixed)
    table = build_table(fast, plan, vals, notes, data_name)
    families = family_table(fast, plan, vals, data_name)

    for e in ENGINES:
        print(f"{e}:")
        for k in FIGURES:
            v, basis, source = table[e][k]
            print(f"  {k:<13} {'none' if v is None else f'{v:g}':>8}  {basis:<10} {source[:100]}")
    for fam, (v, under, basis, source) in families.items():
        if basis != "reference":
            print(f"card family {fam} under {', '.join(under) or 'every profile'}: eff_card {v:g}  {basis:<10} "
                  f"{source[:100]}")
    cv_bands = summaries(rows, cv, CROSS_VALIDATED)
    print("\nin-sample (rows the figures were fitted to):")
    print(format_summary(summaries(rows, inside, IN_SAMPLE)))
    print("\nleave-one-source-out (each source predicted by a fit without it):")
    print(format_summary(cv_bands))
    print("\nworst rows, cross-validated (+ where the prediction flatters self-hosting):")
    err = (cv / fast.measured - 1) * 100
    width = max(map(len, FAMILY_ORDER))
    for i in np.argsort(-np.abs(np.nan_to_num(err, nan=1e9)))[:12]:
        r = fast.rows[i]
        print(f"  {r.id} {r.engine:<{width}} {r.metric:<21} {flattering_pct(r.metric, err[i]):+7.1f}%  "
              f"{fast.source[i][:60]}")
    if args.dry_run:
        return 0

    date = args.date
    write_engines(ROOT / "calc" / "data" / "engines.csv", table, date)
    write_families(ROOT / "calc" / "data" / "card_families.csv", families, date)
    inside = check_against_report(fast, table, families)
    out = []
    # Roofline is fitted to nothing, so its error on every row is out of sample on both counts.
    roofline = summarise(evaluate(rows, engine="roofline"), by_engine=False)
    for basis in (IN_SAMPLE, CROSS_VALIDATED):
        for b in roofline:
            out.append(dict(b, engine="roofline", basis=basis,
                            source=f"{SCRIPT}: every row's link with engine=roofline (for comparison)"))
    for b in summaries(rows, inside, IN_SAMPLE):
        out.append(dict(b, source=f"{SCRIPT}: each row's own link against its measured figure"))
    for b in cv_bands:
        out.append(dict(b, source=f"{SCRIPT}: each source's rows predicted by a fit without that source"))
    # The published rows kept out of the fit, predicted by the figures just written, each under the profile whose
    # figures predicted it (a release family sharing every figure of its engine files under the engine).
    kept = kept_out_results()
    for b in summarise(kept):
        out.append(dict(b, basis=KEPT_OUT, source=f"{SCRIPT}: the published rows of calc/data/measurements_other.csv, "
                                                   "kept out of the fit, predicted by the shipped figures"))
    write_errors(ROOT / "calc" / "data" / "engine_errors.csv", out, date)
    write_cv(ROOT / "calc" / "data" / "engine_cv.csv", fast, inside, cv)
    write_regions(ROOT / "calc" / "data" / "region_errors.csv",
                  region_summaries(rows, cv) + kept_out_region_summaries(kept), date)
    for name in ("_table", "profiles", "_bands", "card_families"):
        getattr(engines, name).cache_clear()
    print(f"\nwrote calc/data/engines.csv, card_families.csv, engine_errors.csv, engine_cv.csv and region_errors.csv (fit date {date})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
