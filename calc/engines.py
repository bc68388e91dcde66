"""Engine profiles: the figures a real serving engine reaches, and how far off they were measured to be
(docs/method.md section 8).

A profile holds, per engine, the fractions of each datasheet peak the engine reaches (``eff_bw`` reading
weights, ``eff_kv`` reading the KV cache, ``eff_flops`` for the arithmetic), the fixed time it spends per
decode step (``step_us``) and per layer of each step (``layer_us``), the share of each card's memory it takes (``mem_util``) less its reserve for
activations and workspace (``overhead_gib``), the most sequences it schedules (``max_seqs``), and two figures of
its throughput under full load (``tok_us``, host time per output token; ``eff_link``, the fraction of the
interconnect's bandwidth its all-reduces reach), and ``eff_dequant``, the share of ``eff_bw`` its kernels keep when
the weights are packed (stored in fewer than 8 bits, or in blocks with their own scales) and unpacked on the
fly, and ``kv_reread``, the share of its GQA
re-reads a decode attention kernel pays when it reads each KV head once per query head rather than once, and
``eager_us``, the time each layer adds when the engine launches its kernels one by one instead of replaying a
captured CUDA graph (``cuda_graphs=0``), ``eff_fp4``, the share of ``eff_flops`` its arithmetic keeps at FP4
(``compute=fp4``), ``eff_fp8``, the share of ``eff_flops`` a decode step's arithmetic keeps at FP8
(``compute=fp8``), ``overlap``, the share of the shorter of a decode step's memory and arithmetic times its kernels
hide under the longer (1: the roofline's ``max``), ``expert_us``, the fixed time each routed expert of an MoE layer costs in every prefill chunk, and
``eff_prefill``, the fraction of the dense peak a prefill's arithmetic reaches (its GEMMs run on thousands of
tokens at once, a decode step's on the batch). ``roofline`` is the textbook model of docs/method.md (70 % of every peak, no fixed costs).

The figures live in ``calc/data/engines.csv``, one row per engine and figure, each with how it was obtained
(``basis``: ``definition``, ``fitted``, ``fixed`` from the engine's documentation or the measurements' notes,
``prior`` where no measurement constrains it, ``copied`` from another engine) and its source. The file is
written by ``scripts/calibrate.py`` from ``calc/data/measurements.csv``; so is ``calc/data/engine_errors.csv``,
the error of each profile on the measurements, per metric. This module only reads them (standard library only).
"""

from __future__ import annotations

import csv
import functools
import math
import re
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"
ENGINES_CSV = DATA_DIR / "engines.csv"
ERRORS_CSV = DATA_DIR / "engine_errors.csv"
MEASUREMENTS_CSV = DATA_DIR / "measurements.csv"
#: Published rows kept out of the fit (set-ups the links approximate, releases or kernels no profile carries).
KEPT_OUT_CSV = DATA_DIR / "measurements_other.csv"
CV_CSV = DATA_DIR / "engine_cv.csv"

FAMILIES_CSV = DATA_DIR / "engine_families.csv"


def _families() -> dict[str, dict[str, str]]:
    """``{engine id: {"name", "base", "covers", "releases", "source"}}`` from ``engine_families.csv``, in file
    order (``releases``: the covered releases in the form :func:`release_family` reads)."""
    with FAMILIES_CSV.open(newline="", encoding="utf-8") as f:
        return {row["engine"]: {k: (row.get(k) or "").strip()
                                for k in ("name", "base", "covers", "releases", "source")}
                for row in csv.DictReader(f)}


#: Each profile id, its name for people, the engine it is a release family of (``base``), the releases it covers
#: and where that came from. A plain id (``trtllm``) is the current release; a dated one (``trtllm-2023``) an
#: older family whose rows differ by a step change (docs/calibration.md section 3).
FAMILIES = types.MappingProxyType({e: types.MappingProxyType(v) for e, v in _families().items()})
#: Engine profiles, in the order the link key lists them (docs/method.md section 8).
ENGINES = tuple(FAMILIES)
DEFAULT_ENGINE = "vllm"
#: Engine names for people, one table for every page, the memo and the command line.
ENGINE_NAMES = types.MappingProxyType({e: v["name"] for e, v in FAMILIES.items()})
#: Engines that split every attention layer's heads over the cards of a tensor-parallel group (llama.cpp
#: splits whole layers or matrix rows, and the roofline splits nothing).
HEAD_SPLITTING = ("vllm", "sglang", "trtllm")
#: Engines that split a model over its cards by whole layers (llama.cpp's default ``--split-mode layer``): each
#: card holds every KV head of its own layers, and the cards take turns within a step, so a step reads and
#: computes at one card's peaks and hands the activations on at each of the ``g - 1`` boundaries instead of
#: all-reducing (docs/method.md section 5).
LAYER_SPLITTING = ("llamacpp",)


def splits_layers(engine: str) -> bool:
    """Whether ``engine`` splits its model over the cards by whole layers (:data:`LAYER_SPLITTING`) by default; a
    link's ``split=row`` splits every weight matrix instead (:func:`calc.model.splits_layers`)."""
    return base(engine) in LAYER_SPLITTING


#: llama.cpp's other way over several cards, ``--split-mode row``: every weight matrix split by rows, so the cards
#: read their shares at once, with the activations sent to each card before every matrix product and the results
#: gathered on the main card after it, which also holds the whole KV cache (docs/method.md section 5). It was the
#: only way of the CUDA builds before ggml-org/llama.cpp PR #4766 (merged on 2024-01-12), which made whole layers
#: the default; the profiles that may price it (the builds of 2023-2024, whose rows measured it).
ROW_SPLIT_ENGINES = ("llamacpp-2024",)
#: The first month whose llama.cpp CUDA builds split by whole layers by default (PR #4766, 2024-01-12): a row of
#: several cards dated before it ran with its matrices split by rows.
FIRST_LAYER_SPLIT_MONTH = (2024, 1)
#: The time per layer a decode step pays for the hand-overs of a row split, ``ROW_SPLIT_LAYER_US +
#: ROW_SPLIT_CARD_US * (g - 1)`` microseconds (about seven matrix products a layer, each synchronised with every
#: card): worked out from ggml-org/llama.cpp issue #3120 (September 2023; Llama 2 70B Q4_1 on 1 to 4
#: A100-SXM4-40GB, 76 of its 80 layers on the cards: 74.2, 98.6, 103.2 and 108.3 ms a token) by difference with its
#: one-card run, which cancels the 4 layers it left on the CPU: 0.53, 0.66 and 0.77 ms a layer on 2, 3 and 4 cards
#: once each card's share of the 40.6 GB of weights is read at the profile's bandwidth, a line of 421 + 117 per
#: extra card (docs/calibration.md section 8). Not fitted: the rows of several cards of these builds are kept out of
#: the fit and check it (calc/data/measurements_other.csv).
ROW_SPLIT_LAYER_US = 420.0
ROW_SPLIT_CARD_US = 117.0
#: The boost clock of the cards those figures come from (the A100-SXM4, calc/data/cards.csv), GHz: the hand-overs are
#: short kernels and waits, a count of clock cycles, so a card of another known clock takes them in proportion (the
#: kept-out rows agree: 2 and 6 RTX 3090s at 1.695 GHz and RTX 4090s at 2.52 GHz take one time in cycles, not in
#: microseconds; docs/calibration.md section 8). A card of unknown clock is priced at this one.
ROW_SPLIT_GHZ = 1.41
#: Profiles whose reserve for activations and runtime memory is worked out from the launch settings
#: (calc/memory.py) rather than a fixed figure: their ``overhead_gib`` is empty unless a link gives one. The other
#: TensorRT-LLM profiles keep a fitted reserve: no printout of the 2023 static-batch runtime is in the data, and the
#: buffers of the v0.17 to v0.21 TensorRT-engine path follow a max_batch_size its rows do not give.
MODELLED_RESERVE = ("vllm", "vllm-0.21", "vllm-2025", "vllm-v0", "sglang", "trtllm", "trtllm-2024", "llamacpp", "llamacpp-vulkan",
                    "llamacpp-vulkan-2025", "llamacpp-2024")
#: TensorRT-LLM profiles that size the KV cache from a profiling run (the PyTorch backend, v1.0 and later:
#: calc/memory.py ``trtllm_torch_reserve``) rather than from the executor's buffers (``trtllm-2024``).
PROFILING_RUN = ("trtllm",)


#: Tokens per KV-cache block, as each engine pages its cache: vLLM's ``block_size`` 16 on CUDA (vllm/config/cache.py;
#: 64 where FlashMLA serves multi-head latent attention, which takes no other size), SGLang's ``page_size`` 1
#: (server_args.py), the current TensorRT-LLM's ``KvCacheConfig.tokens_per_block`` 32 (llm-api reference) and the
#: TensorRT-engine releases' 64 (the attention plugin's ``tokens_per_block``). The printed token count is whole blocks;
#: llama.cpp and the roofline count single tokens.
KV_BLOCK_TOKENS = types.MappingProxyType({"vllm": 16, "vllm-0.21": 16, "vllm-2025": 16, "vllm-v0": 16, "sglang": 1, "trtllm": 32,
                                          "trtllm-2025": 32, "trtllm-2024": 64, "trtllm-2023": 64, "trtllm-v05": 64})
MLA_BLOCK_TOKENS = 64


def kv_block_tokens(engine: str, latent: bool) -> int:
    """Tokens per KV-cache block of ``engine`` (1: the engine counts single tokens); ``latent`` is multi-head latent
    attention, which vLLM pages in blocks of 64 (:data:`KV_BLOCK_TOKENS`)."""
    tokens = KV_BLOCK_TOKENS.get(engine, 1)
    return MLA_BLOCK_TOKENS if latent and base(engine) == "vllm" else tokens


def base(engine: str) -> str:
    """The engine a profile is a release family (or build) of: ``trtllm-2023`` -> ``trtllm``."""
    return FAMILIES[engine]["base"]


#: The backend each profile's releases name (``backend vulkan`` in engine_families.csv), None for the engine's
#: default one (CUDA, or the vendor's own).
_BACKENDS = types.MappingProxyType({e: (m.group(1) if (m := re.search(r"\bbackend (\w+)", v["releases"])) else None)
                                    for e, v in FAMILIES.items()})


def backend_of(engine: str) -> str | None:
    """The backend a profile is a build for (``llamacpp-vulkan`` -> ``"vulkan"``), None for the default one."""
    return _BACKENDS[engine]


#: How a source names an engine before the release it ran (``TensorRT-LLM v0.5.0``, ``vLLM 0.6.0``); a text naming
#: one engine only may give its release bare (``v0.17 table``).
_ENGINE_WORDS = {"vllm": r"vllm", "sglang": r"sglang", "trtllm": r"(?:tensorrt-llm|trt-llm|trtllm)",
                 "llamacpp": r"llama\.cpp"}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def named_months(text: str) -> list[tuple[int, int]]:
    """Every month ``text`` names, as (year, month): ``Dec 2023``, ``May. 2024``, ``2024-05-07``; in text order."""
    low = text.lower()
    found = [(m.start(), (int(m.group(2)), _MONTHS.index(m.group(1)[:3]) + 1)) for m in
             re.finditer(r"\b(" + "|".join(_MONTHS) + r")[a-z]*\.?\s+(20\d\d)\b", low)]
    found += [(m.start(), (int(m.group(1)), int(m.group(2)))) for m in
              re.finditer(r"\b(20\d\d)-(0[1-9]|1[0-2])-\d\d\b", low)]
    return [d for _, d in sorted(found)]


def _release_facts(engine: str, text: str) -> dict[str, Any]:
    """What ``text`` says of the release of ``engine`` (a base id) it describes: ``version`` as (major, minor),
    llama.cpp's ``build`` number, the latest ``date`` it names as (year, month), and the ``backends`` it names."""
    low = text.lower()
    facts: dict[str, Any] = {}
    named = re.search(_ENGINE_WORDS.get(engine, re.escape(engine)) + r"[\s:]*v?(\d+)\.(\d+)", low)
    others = [e for e in _ENGINE_WORDS if e != engine and re.search(_ENGINE_WORDS[e], low)]
    bare = None if others else re.search(r"\bv(\d+)\.(\d+)", low)
    hit = named or bare
    if hit:
        facts["version"] = (int(hit.group(1)), int(hit.group(2)))
    build = re.search(r"\b(?:builds?\s+b?|b)(\d{3,5})\b", low)
    if build:
        facts["build"] = int(build.group(1))
    dates = named_months(low)
    if dates:
        facts["date"] = max(dates)
    facts["backends"] = {b for b in ("vulkan", "metal", "rocm", "sycl") if b in low}
    return facts


def _covers(spec: str, facts: Mapping[str, Any]) -> bool:
    """Whether one alternative of a family's ``releases`` (engine_families.csv) matches ``facts``: ``v0.17-v0.21``
    (releases 0.17 to 0.21, either end open when empty), ``build 3000-`` (llama.cpp builds), ``until 2024-05`` and
    ``from 2024-06`` (the latest month the text names, as ``May 2024`` or ``2024-05-07``), ``backend vulkan``, or
    several of these joined by ``&``, all of which must hold (``backend vulkan & until 2025-08``)."""
    if "&" in spec:
        return all(_covers(part, facts) for part in spec.split("&"))
    kind, _, arg = spec.strip().partition(" ")
    if spec.strip().startswith("v"):
        lo, _, hi = spec.strip().partition("-")
        if "version" not in facts:
            return False
        v = facts["version"]
        as_pair = lambda t: tuple(int(x) for x in t.lstrip("v").split("."))  # noqa: E731
        return (not lo or v >= as_pair(lo)) and (not hi or v <= as_pair(hi))
    if kind == "build" and "build" in facts:
        lo, _, hi = arg.partition("-")
        return (not lo or facts["build"] >= int(lo)) and (not hi or facts["build"] <= int(hi))
    if kind in ("until", "from") and "date" in facts:
        y, m = (int(x) for x in arg.split("-"))
        return facts["date"] <= (y, m) if kind == "until" else facts["date"] >= (y, m)
    if kind == "backend":
        return arg in facts["backends"]
    return False


def release_family(engine: str, text: str) -> str | None:
    """The release family of ``engine`` (a profile id) whose covered releases include the one ``text`` names (a
    measurement's version, source or notes: ``TensorRT-LLM v0.5.0``, ``llama.cpp snapshots Dec 2023``, ``builds
    7293-7474 ... -DGGML_VULKAN=1``), or None where the text names none of them. Each family's ``releases`` in
    ``engine_families.csv`` says what it covers; a backend it names (``vulkan``) comes before a release number, a
    family that adds a release range to the backend (``backend vulkan & until 2025-08``) before one that names the
    backend alone, and otherwise the first family in file order that covers the release wins. Used by
    ``--validate FILE``, so that a row measured on an older release is predicted by that release's profile, not the
    current one's."""
    b = base(engine)
    facts = _release_facts(b, text)
    fams = [e for e, v in FAMILIES.items() if v["base"] == b and v["releases"]]
    # A backend's families before the others, and among them the narrower (more conditions) first.
    for e in sorted(fams, key=lambda e: (not FAMILIES[e]["releases"].startswith("backend"),
                                         -FAMILIES[e]["releases"].count("&"))):
        if any(_covers(alt, facts) for alt in FAMILIES[e]["releases"].split(";")):
            return e
    return None


def default_batched_tokens(engine: str, card: str, torch_gib: float) -> int:
    """The tokens one step may hold when the launch does not say (``max_batched_tokens``).

    vLLM (V1, API server): 8192 on a card of at least 70 GiB that is not an A100, else 2048
    (vllm/engine/arg_utils.py ``get_batch_defaults``). SGLang: ``chunked_prefill_size`` 8192; TensorRT-LLM:
    ``max_num_tokens`` 8192 (its BuildConfig default); llama.cpp: ``n_ubatch`` 512, the tokens one graph computes
    (``-ub``; common/common.h; its ``n_batch`` of 2048 is split into such steps); roofline: 8192 (unused).
    """
    b = base(engine)
    if b == "vllm":
        return 8192 if torch_gib >= 70 and "a100" not in card else 2048
    return LLAMACPP_UBATCH if b == "llamacpp" else 8192


#: llama.cpp's default physical batch, ``n_ubatch`` (common/common.h ``n_ubatch = 512``): its compute buffers are
#: reserved for a graph of that many tokens.
LLAMACPP_UBATCH = 512
#: llama.cpp builds that run without flash attention unless told (``-fa``): the builds before ggml-org/llama.cpp PR
#: #15434 (August 2025, flash attention ``auto``, which CUDA resolves to on), on any backend. Their ``flash_attn``
#: defaults to 0.
NO_FLASH_ATTENTION = ("llamacpp-2024", "llamacpp-vulkan-2025")
#: llama.cpp builds whose server reserves logits for its slots only, not for every token of a physical batch
#: (ggml-org/llama.cpp PR #23861, May 2026: ``n_outputs_max = n_parallel * (1 + n_draft)``).
OUTPUTS_PER_SLOT = ("llamacpp", "llamacpp-vulkan")


def default_flash_attn(engine: str) -> int:
    """Whether the engine computes attention with a flash-attention kernel when the launch does not say
    (``flash_attn``): 0 for :data:`NO_FLASH_ATTENTION`, else 1. Only llama.cpp's memory reads it: without it, its
    compute buffer holds the attention scores of a whole physical batch (docs/method.md section 8.2)."""
    return 0 if engine in NO_FLASH_ATTENTION else 1


def default_max_seqs(engine: str, card: str, torch_gib: float, batched_tokens: int,
                     profile_seqs: int | None) -> int | None:
    """The most sequences per step when the launch does not say (``max_seqs``).

    vLLM (V1, API server): 1024 on a card of at least 70 GiB that is not an A100, else 256, and never more than
    ``max_num_batched_tokens`` (vllm/engine/arg_utils.py ``get_batch_defaults``, v0.11 to v0.30). Every other
    engine, and vLLM's V0 family (its fixed 256): its profile's figure (None: no cap).
    """
    if base(engine) == "vllm" and profile_seqs is None:
        return min(1024 if torch_gib >= 70 and "a100" not in card else 256, batched_tokens)
    return profile_seqs


#: Profiles whose builds capture no CUDA graphs, so every layer of every step launches its kernels one by one: the
#: llama.cpp builds before CUDA graphs (ggml-org/llama.cpp PR #6766, May 2024). Their ``cuda_graphs`` defaults to 0.
NO_CUDA_GRAPHS = ("llamacpp-2024",)


#: The first llama.cpp build a published row shows compiled with CUDA graphs (``-DGGML_CUDA_USE_GRAPHS`` in the build
#: log of XiongjieDai/GPU-Benchmarks-on-LLM-Inference 'LLaMA 3/Gaming GPUs/*_v3.ipynb', build 4426e298 (2824), May 9
#: 2024; ggml-org/llama.cpp PR #6766 was merged on 2024-05-08): a CUDA row of ``llamacpp-2024`` naming this build or
#: a later one ran with graphs.
FIRST_GRAPH_BUILD = 2824
#: The first month of llama.cpp CUDA builds with graphs (PR #6766, merged 2024-05-08): a ``llamacpp-2024`` CUDA row that
#: names no build but a month from this one on is taken to have run with them. May 2024 counts (24 of its 31 days; the
#: one published source of such rows, XiongjieDai's LLaMA-3 tables of May 2024, shows builds 2824 and 2833 in its
#: notebooks).
FIRST_GRAPH_MONTH = (2024, 5)


def release_version(engine: str, text: str) -> tuple[int, int] | None:
    """The release ``text`` names for ``engine`` as (major, minor) (``vLLM v0.6.0``: (0, 6)), None where it names none."""
    return _release_facts(base(engine), text).get("version")


#: vLLM's releases from which the API server's default ``max_num_seqs`` follows the card (1024 on a card of at least
#: 70 GiB other than the A100: :func:`default_max_seqs`, read in the v0.11 to v0.30 sources); a row of an earlier
#: release that does not give the cap takes the V0 engine's ``max_num_seqs`` of 256, the smaller of the two, so it is
#: never priced with more sequences than its release scheduled.
VLLM_CARD_DEFAULTS_FROM = (0, 10)
VLLM_V0_MAX_SEQS = 256


def release_build(engine: str, text: str) -> int | None:
    """The llama.cpp build number ``text`` names (``build 2824``, ``b2824``), None where it names none."""
    return _release_facts(base(engine), text).get("build")


def default_cuda_graphs(engine: str) -> int:
    """Whether the engine replays its decode steps as captured CUDA graphs when the launch does not say
    (``cuda_graphs``): 0 for :data:`NO_CUDA_GRAPHS`, else 1 (vLLM, SGLang, TensorRT-LLM and current llama.cpp
    builds capture them by default). A current llama.cpp build also runs without them on NVIDIA cards older than
    Ampere (ggml/src/ggml-cuda/ggml-cuda.cu: ``cc < GGML_CUDA_CC_AMPERE`` disables them, lowered to Volta by PR
    #25749 of July 2026); a link for such a card says ``cuda_graphs=0``."""
    return 0 if engine in NO_CUDA_GRAPHS else 1


#: Profiles whose engine captures a CUDA graph for a step of one sequence only: llama.cpp's CUDA backend gives up
#: graphs when a step holds more than one token (ggml/src/ggml-cuda/ggml-cuda.cu: an ADD whose second operand has
#: ``ne[1] > 1`` sets ``use_cuda_graph = false``, "disable CUDA graphs for batch size > 1 for now"), so its
#: multi-slot decode and its prefill pay every layer's launches (``eager_us``). Its Vulkan build captures none.
GRAPHS_FOR_ONE_SEQUENCE = ("llamacpp", "llamacpp-2024")


def graphs_for_one_sequence_only(engine: str) -> bool:
    """Whether ``engine`` replays a captured CUDA graph only for steps of one sequence (:data:`GRAPHS_FOR_ONE_SEQUENCE`)."""
    return engine in GRAPHS_FOR_ONE_SEQUENCE


#: The card vendors each engine runs on, where it does not run on every card the catalogue lists: TensorRT-LLM
#: builds for NVIDIA GPUs only (NVIDIA/TensorRT-LLM README: "optimize inference on NVIDIA GPUs"), and llama.cpp
#: has no backend for Intel's Gaudi accelerators (ggml-org/llama.cpp README, "Supported backends": Metal, CUDA,
#: HIP, Vulkan, SYCL for Intel GPUs, MUSA, CANN, OpenCL and others).
ENGINE_VENDORS = types.MappingProxyType({"trtllm": ("NVIDIA",), "llamacpp": ("NVIDIA", "AMD", "Apple")})
#: Weight format kinds an engine cannot load: TensorRT-LLM reads no GGUF file (its checkpoints are converted from
#: Hugging Face weights; GGUF is llama.cpp's format).
ENGINE_REFUSES_KINDS = types.MappingProxyType({"trtllm": ("gguf",)})
#: The formats llama.cpp cannot load, with the GGUF type that stands for each: it reads GGUF files only, whose
#: weight types are its block formats (Q4_K_M, Q8_0 and the others), 16- and 32-bit floats, MXFP4 and (since
#: ggml-org/llama.cpp PR #19769, February 2026) NVFP4; a GPTQ or AWQ integer checkpoint or an FP8 one is converted
#: to one of those first (convert_hf_to_gguf.py), so it is priced in that type.
GGUF_COUNTERPART = types.MappingProxyType({"int4": "q4_k_m", "int4-g128": "q4_k_m", "int4-g64": "q4_k_m",
                                           "int8": "q8_0", "fp8": "q8_0"})


#: The other way: the checkpoint formats a GGUF type stands for, the first the engine and card run preferred (an
#: FP8 checkpoint where the card has FP8 units, else INT8), for a set-up that leaves llama.cpp.
GGUF_ORIGIN = types.MappingProxyType({g: tuple(f for f in ("fp8", "int8", "int4-g128") if GGUF_COUNTERPART[f] == g)
                                      for g in set(GGUF_COUNTERPART.values())})


def engine_weights(engine: str, weights: str) -> str:
    """The weight format ``engine`` runs when the link does not choose one and ``weights`` is the model's or the
    default: llama.cpp takes the GGUF counterpart (:data:`GGUF_COUNTERPART`) of a format it cannot load."""
    return GGUF_COUNTERPART.get(weights, weights) if base(engine) == "llamacpp" else weights


#: The card architectures a release family predates, with the first release that runs on them. TensorRT-LLM added
#: Blackwell in v0.17.0, built on CUDA 12.8 (NVIDIA/TensorRT-LLM docs/source/release-notes.md, "TensorRT-LLM
#: Release 0.17.0": "Blackwell support ... Added support for B200. Added support for GeForce RTX 50 series"; "The
#: dependent CUDA version is updated to 12.8.0"; v0.16.0 was built on CUDA 12.6.3), so v0.5 to v0.16 ship no kernels
#: for compute capability 10.0 (B200, GB200) or 12.0 (RTX 5090, RTX PRO 6000).
#: vLLM's V0 releases (v0.5 to v0.7) likewise: its default wheel moved from CUDA 12.4 to 12.8, the first toolkit with
#: Blackwell kernels, in v0.9.0 (vllm-project/vllm release notes, "v0.9.0": "The default wheel has been upgraded
#: from CUDA 12.4 to CUDA 12.8 ... Enhanced NVIDIA Blackwell support"; issue #13306, February 2025: an RTX 5090 under
#: vLLM "is not compatible with the current PyTorch installation", sm_120 unsupported).
RELEASE_PREDATES = types.MappingProxyType({
    **{engine: (("Blackwell-SM100", "Blackwell-SM120"),
                "TensorRT-LLM added Blackwell cards in v0.17 (built on CUDA 12.8)")
       for engine in ("trtllm-v05", "trtllm-2023", "trtllm-2024")},
    "vllm-v0": (("Blackwell-SM100", "Blackwell-SM120"),
                "vLLM's wheels moved to CUDA 12.8, the first with Blackwell kernels, in v0.9.0")})


def later_release(engine: str) -> str:
    """The advice every refusal by release date ends with: "choose a later release (engine=vllm is the current
    one)" (:data:`RELEASE_PREDATES`, :data:`FORMAT_PREDATES`)."""
    return f"choose a later release (engine={base(engine)} is the current one)"


@functools.cache
def card_arch() -> dict[str, str]:
    """``{card preset id: architecture family}`` from ``card_arch.csv``: the vendor's architecture name, split by
    compute capability where one name covers two kinds of chip (Ampere-SM80: A100; Ampere-SM86: A10; Blackwell-SM100:
    B200 and GB200; Blackwell-SM120: RTX 5090 and RTX PRO 6000, another die with GDDR7 memory and other kernels)."""
    with (DATA_DIR / "card_arch.csv").open(newline="", encoding="utf-8") as f:
        return {row["card"].strip(): row["arch"].strip() for row in csv.DictReader(f)}


CARD_FAMILIES_CSV = DATA_DIR / "card_families.csv"


@functools.cache
def card_families() -> Mapping[str, Mapping[str, Any]]:
    """``{family: {"eff_card", "engines", "basis", "source", "fitted_on"}}`` from ``card_families.csv``: the share of
    the engine profiles' bandwidth (``eff_bw``, ``eff_kv``) a card family reaches under the profiles ``engines`` (a
    tuple; empty: every profile), 1 for the families the profiles are fitted on (``reference``) and fitted by
    scripts/calibrate.py where a family's rows lean one way (docs/calibration.md section 3). Raises
    :class:`EngineDataError` on a share outside (0, 1], an unknown profile or a preset card's family missing."""
    out: dict[str, Mapping[str, Any]] = {}
    with CARD_FAMILIES_CSV.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            share = _number(row["eff_card"], f"card_families.csv {row['family']}")
            if share is None or not 0 < share <= 1:
                raise EngineDataError(f"card_families.csv: {row['family']}'s eff_card must be in (0, 1], "
                                      f"not {row['eff_card']!r}")
            under = tuple((row.get("engines") or "").split())
            if set(under) - set(ENGINES):
                raise EngineDataError(f"card_families.csv: {row['family']} names unknown engine profiles "
                                      f"{sorted(set(under) - set(ENGINES))}")
            out[row["family"].strip()] = types.MappingProxyType(
                {"eff_card": share, "engines": under, "basis": row["basis"].strip(), "source": row["source"].strip(),
                 "fitted_on": row["fitted_on"].strip()})
    missing = sorted(set(card_arch().values()) - set(out))
    if missing:
        raise EngineDataError(f"card_families.csv: no row for the preset cards' families {', '.join(missing)}")
    return types.MappingProxyType(out)


def family_name(arch: str | None) -> str | None:
    """A card family as ``card_families.csv`` spells it (``Turing``) from a link's ``arch`` in any case
    (``turing``); None for ``unknown`` or no family."""
    return {f.lower(): f for f in card_families()}.get((arch or "").lower())


def family_share(arch: str | None, engine: str) -> float:
    """The bandwidth share of card family ``arch`` (in any case) under profile ``engine`` (:func:`card_families`); 1
    for a family with no row or none named (a custom card whose family the link does not give), and under a profile
    the family's share does not cover."""
    name = family_name(arch)
    if name is None:
        return 1.0
    row = card_families()[name]
    return float(row["eff_card"]) if not row["engines"] or engine in row["engines"] else 1.0


def card_rule(engine: str, vendor: str | None, card_name: str | None, card_id: str | None = None,
              arch: str | None = None) -> str | None:
    """Why ``engine`` cannot run on a card of ``vendor`` (:data:`ENGINE_VENDORS`) or on preset ``card_id`` (or a
    custom card of family ``arch``, a link's in any case), whose architecture the release family predates
    (:data:`RELEASE_PREDATES`); None: it can, or a custom card of unknown family."""
    allowed = ENGINE_VENDORS.get(base(engine))
    if allowed is not None and vendor is not None and vendor not in allowed:
        names = ", ".join(allowed[:-1]) + " and " + allowed[-1] if len(allowed) > 1 else allowed[0]
        return f"{ENGINE_NAMES[engine]} does not run on {card_name or 'this card'} ({vendor}): it runs on {names} cards"
    arch = card_arch().get(card_id or "") or family_name(arch)
    archs, since = RELEASE_PREDATES.get(engine, ((), ""))
    if arch in archs:
        card = f"{card_name or card_id} ({arch})" if card_id in card_arch() else f"a custom {arch} card"
        return f"{ENGINE_NAMES[engine]} does not run on {card}: its releases predate the card; {since}, so {later_release(engine)}"
    return None


def apple_rule(engine: str, arch: str | None) -> str | None:
    """Why ``engine`` cannot run on a Mac's GPU (a custom card of family ``arch`` Apple): only llama.cpp has a Metal
    backend (and the roofline runs anywhere); None: it can, or the card is not a Mac's."""
    if family_name(arch) != "Apple" or base(engine) in ("llamacpp", "roofline"):
        return None
    return f"{ENGINE_NAMES[engine]} does not run on an Apple GPU (it has no Metal backend): llama.cpp does (engine=llamacpp)"


#: Weight formats first shipped after a release family's last release, with the families and why: MXFP4 came to LLM
#: checkpoints with gpt-oss (openai/gpt-oss-120b and -20b, released 2025-08-05, their experts in MXFP4), and each
#: engine added loading it for them (vLLM v0.10.1, TensorRT-LLM's gpt-oss support of August 2025, llama.cpp's
#: build of 2025-08-05); the families below end before that (vLLM V0 with v0.7, TensorRT-LLM's TensorRT-engine
#: releases with v0.21, llama.cpp's 2023-2024 builds in mid-2024).
FORMAT_PREDATES = types.MappingProxyType({
    "mxfp4": (("vllm-v0", "trtllm-v05", "trtllm-2023", "trtllm-2024", "trtllm-2025", "llamacpp-2024"),
              "MXFP4 checkpoints first shipped with gpt-oss (2025-08-05), after this family's last release"),
})


def format_rule(engine: str, weights: str, kind: str | None) -> str | None:
    """Why ``engine`` cannot load weights in format ``weights`` of ``kind`` (None: it can): llama.cpp loads GGUF
    types, TensorRT-LLM, vLLM and SGLang none, and a release family no format shipped after it
    (:data:`FORMAT_PREDATES`)."""
    families, since = FORMAT_PREDATES.get(weights, ((), ""))
    if engine in families:
        return f"{ENGINE_NAMES[engine]} cannot load {weights} weights: {since}; {later_release(engine)}"
    if base(engine) == "llamacpp" and weights in GGUF_COUNTERPART:
        return (f"{ENGINE_NAMES[engine]} cannot load {weights} weights: it loads GGUF files, whose types are its "
                f"block formats (q4_k_m, q8_0 and others), 16- and 32-bit floats, mxfp4 and nvfp4 (the GGUF "
                f"counterpart of {weights} is {GGUF_COUNTERPART[weights]})")
    if kind is None or kind not in ENGINE_REFUSES_KINDS.get(base(engine), ()):
        return None
    return f"{ENGINE_NAMES[engine]} cannot load {weights} weights: {kind.upper()} files are llama.cpp's format"


#: The bits each compute precision multiplies (its operands): the matrix units read the stored weights, so a GEMM
#: runs at the weights' precision or wider (docs/method.md section 5).
COMPUTE_BITS = types.MappingProxyType({"bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "fp4": 4})


def compute_rule(compute: str, weight_bits: float, expert_bits: float | None) -> str | None:
    """Why the matrix units cannot run at ``compute`` on weights stored in ``weight_bits`` (the routed experts in
    ``expert_bits``, None for a dense model), or None. A GEMM's operands include the stored weights: FP8 and INT8
    arithmetic need weights of at most 8 bits (an FP8, INT8 or 4-bit checkpoint: W8A8, W4A8), FP4 arithmetic
    weights of 4 (NVFP4, MXFP4); 16-bit arithmetic takes any (a 32-bit checkpoint is cast down). A 16-bit checkpoint
    runs at 16 bits; an MoE model qualifies by either part (gpt-oss
    runs its MXFP4 experts at FP8 beside 16-bit attention). Scales do not count: int4-g128 (4.25 bits) is 4-bit."""
    need = COMPUTE_BITS.get(compute)
    stored = min(math.floor(weight_bits + 1e-9), math.floor(expert_bits + 1e-9) if expert_bits else math.inf)
    if need is None or need >= 16 or stored <= need:  # 16-bit arithmetic runs on any checkpoint (fp32 cast down)
        return None
    return (f"compute={compute} multiplies {need}-bit operands, but the weights are stored in {stored} bits: the "
            f"matrix units read the stored weights, so they run at {stored} bits or wider (weights in {need} bits "
            "or fewer, or a wider compute precision)")


#: KV-cache formats each engine allocates, by name (docs/method.md section 5): vLLM's and SGLang's
#: ``--kv-cache-dtype`` (auto, fp8, fp8_e4m3, fp8_e5m2), TensorRT-LLM's ``KvCacheConfig.dtype`` (the model's, fp8,
#: int8), llama.cpp's ``--cache-type-k/-v`` (f16, bf16, q8_0, q4_0 and the other block types: int8 and int4 here;
#: no fp8). A link's own bit count is a format of its own, taken as given.
KV_FORMATS_BY_ENGINE = types.MappingProxyType({
    "vllm": ("fp16", "bf16", "fp8"),
    "sglang": ("fp16", "bf16", "fp8"),
    "trtllm": ("fp16", "bf16", "fp8", "int8"),
    "llamacpp": ("fp16", "bf16", "int8", "int4"),
})


def kv_rule(engine: str, kv: str) -> str | None:
    """Why ``engine`` cannot hold its KV cache in the named format ``kv``, or None (a bit count is taken as
    given)."""
    names = KV_FORMATS_BY_ENGINE.get(base(engine))
    if names is None or kv in names:
        return None
    try:
        float(kv)
        return None
    except ValueError:
        pass
    return (f"{ENGINE_NAMES[engine]} cannot hold its KV cache in {kv}: its cache formats are {', '.join(names)} "
            "(or a number of bits)")


#: The card's peaks TensorRT-LLM needs for weights it stores in these formats: FP8 GEMMs on FP8 tensor cores (Ada,
#: Hopper, Blackwell), NVFP4 GEMMs on FP4 ones (Blackwell); its support matrix (docs/source/reference/
#: precision.md) lists no weight-only kernel for either on older cards.
TRTLLM_FORMAT_PEAKS = types.MappingProxyType({"fp8": "fp8", "nvfp4": "fp4"})
#: The same for its KV cache: an FP8 cache is read by the FP8 attention kernels (Ampere caches in INT8).
TRTLLM_KV_PEAKS = types.MappingProxyType({"fp8": "fp8"})


def card_format_rule(engine: str, fmt: str, peaks: Mapping[str, Any] | None, card_name: str | None,
                     what: str = "weights") -> str | None:
    """Why ``engine`` cannot run ``what`` (weights, or a KV cache) stored in ``fmt`` on a card with these dense
    ``peaks`` (by precision; None: a custom card, whose peaks are not known), or None. TensorRT-LLM's FP8 KV cache
    needs the FP8 units too (its attention kernels read it natively; Ampere gets INT8)."""
    need = (TRTLLM_FORMAT_PEAKS if what == "weights" else TRTLLM_KV_PEAKS).get(fmt)
    if base(engine) != "trtllm" or need is None or peaks is None or peaks.get(need) is not None:
        return None
    return (f"{ENGINE_NAMES[engine]} runs {fmt} {what} on cards with {need.upper()} tensor cores, and "
            f"{card_name or 'this card'} has none")


def tp_rule(engine: str, heads: int, kv_heads: int, gpus: int, latent: bool) -> str | None:
    """The reason the engine refuses ``gpus``-way tensor parallelism for this shape, or None.

    vLLM, SGLang and TensorRT-LLM split the attention heads over the cards: the size must divide the query
    heads, and the KV heads must divide by it or divide it (a card holds whole KV heads, copied where there are
    fewer than cards; vllm/model_executor/layers/linear.py ``QKVParallelLinear``, vllm/config ``verify_with_
    parallel_config``). Multi-head latent attention caches one latent per token, so only the query rule applies.
    """
    if gpus <= 1 or base(engine) not in HEAD_SPLITTING:
        return None
    name = ENGINE_NAMES[engine]
    if heads % gpus:
        return (f"{name} refuses tensor parallel over {gpus} cards: the size must divide the {heads} attention "
                f"heads")
    if not latent and kv_heads % gpus and gpus % kv_heads:
        return (f"{name} refuses tensor parallel over {gpus} cards: the {kv_heads} KV heads must divide by it or "
                f"divide it")
    return None


#: How ``engine_errors.csv`` labels its kinds of error: on the rows the figures were fitted to, on each source's
#: rows predicted by figures fitted without that source, and on the published rows kept out of the fit
#: (``measurements_other.csv``) predicted by the shipped figures, filed under the profile whose figures predicted
#: them (:func:`figures_of` of the row's engine).
IN_SAMPLE, CROSS_VALIDATED, KEPT_OUT = "in-sample", "leave-one-source-out", "kept-out"
#: The figures of a profile, in link order. Each is also a link key that overrides the profile's figure.
FIGURES = ("eff_bw", "eff_kv", "eff_flops", "step_us", "mem_util", "max_seqs", "overhead_gib", "tok_us", "eff_link",
           "layer_us", "eff_dequant", "kv_reread", "eager_us", "eff_fp4", "expert_us", "eff_prefill", "layer_ghz",
           "eff_fp8", "overlap")
#: The efficiencies the link's ``eff`` sets when their own keys are not given.
EFFICIENCIES = ("eff_bw", "eff_kv", "eff_flops")
#: The metrics a measurement row checks (report keys).
METRICS = ("step_ms", "max_throughput_tok_s")
#: Each metric in words, one table for the pages, the memo, the notes and the command line.
METRIC_NAMES = types.MappingProxyType({"step_ms": "decode step time", "max_throughput_tok_s": "full-load throughput"})
#: Roofline's figures: exactly docs/method.md (``eff`` = 0.7 for all three efficiencies).
ROOFLINE = types.MappingProxyType({
    "eff_bw": 0.7, "eff_kv": 0.7, "eff_flops": 0.7, "step_us": 0.0, "mem_util": 1.0, "max_seqs": None,
    "overhead_gib": 4.0, "tok_us": 0.0, "eff_link": 1.0, "layer_us": 0.0, "eff_dequant": 1.0,
    "kv_reread": 0.0, "eager_us": 0.0, "eff_fp4": 1.0, "expert_us": 0.0, "eff_prefill": 0.7, "layer_ghz": 0.0,
    "eff_fp8": 1.0, "overlap": 1.0,
})
#: How a figure was obtained, as ``engines.csv`` records it.
BASES = ("definition", "fitted", "fixed", "prior", "copied")


class EngineDataError(ValueError):
    """``engines.csv`` or ``engine_errors.csv`` is missing a row or holds a value out of range."""


def _number(text: str, where: str) -> float | None:
    text = (text or "").strip()
    if text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise EngineDataError(f"{where}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise EngineDataError(f"{where}: {text!r} is not finite")
    return value


def _check(engine: str, figure: str, value: float | None, where: str) -> None:
    """Physical bounds: no efficiency above 1, no negative time or memory, at least one sequence."""
    if figure == "max_seqs":
        if value is not None and not (value >= 1 and float(value).is_integer()):
            raise EngineDataError(f"{where}: max_seqs must be an integer >= 1 or empty")
        return
    if value is None:
        if figure == "overhead_gib" and engine in MODELLED_RESERVE:
            return  # empty: the reserve is the engine's own accounting (calc/memory.py)
        raise EngineDataError(f"{where}: {engine} has no {figure}")
    if figure in (*EFFICIENCIES, "mem_util", "eff_link", "eff_dequant", "eff_fp4", "eff_fp8", "eff_prefill") \
            and not 0 < value <= 1:
        raise EngineDataError(f"{where}: {figure} must be in (0, 1]")
    if figure in ("step_us", "tok_us", "overhead_gib", "layer_us", "eager_us", "expert_us", "layer_ghz") \
            and value < 0:
        raise EngineDataError(f"{where}: {figure} must be >= 0")
    if figure in ("kv_reread", "overlap") and not 0 <= value <= 1:
        raise EngineDataError(f"{where}: {figure} must be in [0, 1]")


def load_profiles(path=ENGINES_CSV) -> dict[str, dict[str, dict[str, Any]]]:
    """``{engine: {figure: {"value", "basis", "source", "fitted_on"}}}`` from an ``engines.csv`` file.

    Every engine of :data:`ENGINES` must have every figure of :data:`FIGURES`; roofline's must be docs/method.md's.
    """
    path = Path(path)
    out: dict[str, dict[str, dict[str, Any]]] = {e: {} for e in ENGINES}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            where = f"{path.name} line {row.get('engine')}/{row.get('figure')}"
            engine, figure = (row.get("engine") or "").strip(), (row.get("figure") or "").strip()
            if engine not in out or figure not in FIGURES:
                raise EngineDataError(f"{where}: unknown engine or figure")
            if figure in out[engine]:
                raise EngineDataError(f"{where}: given twice")
            basis = (row.get("basis") or "").strip()
            if basis not in BASES:
                raise EngineDataError(f"{where}: basis must be one of {', '.join(BASES)}")
            value = _number(row.get("value", ""), where)
            _check(engine, figure, value, where)
            if figure == "max_seqs" and value is not None:
                value = int(value)
            out[engine][figure] = {"value": value, "basis": basis, "source": (row.get("source") or "").strip(),
                                   "fitted_on": (row.get("fitted_on") or "").strip()}
    for engine in ENGINES:
        missing = [f for f in FIGURES if f not in out[engine]]
        if missing:
            raise EngineDataError(f"{path.name}: {engine} lacks {', '.join(missing)}")
    if {f: out["roofline"][f]["value"] for f in FIGURES} != dict(ROOFLINE):
        raise EngineDataError(f"{path.name}: roofline's figures must be docs/method.md's {dict(ROOFLINE)}")
    return out


@functools.cache
def _table() -> Mapping[str, Mapping[str, Mapping[str, Any]]]:
    table = load_profiles()
    return types.MappingProxyType({e: types.MappingProxyType({f: types.MappingProxyType(v) for f, v in rows.items()})
                                   for e, rows in table.items()})


def figure_rows() -> Mapping[str, Mapping[str, Mapping[str, Any]]]:
    """Every figure of every profile with how it was obtained and its source (read-only)."""
    return _table()


@functools.cache
def profiles() -> Mapping[str, Mapping[str, Any]]:
    """``{engine: {figure: value}}``: the figure each profile uses (``max_seqs`` None = no cap)."""
    return types.MappingProxyType({e: types.MappingProxyType({f: rows[f]["value"] for f in FIGURES})
                                   for e, rows in _table().items()})


def profile(engine: str) -> Mapping[str, Any]:
    """The figures of one engine profile."""
    return profiles()[engine]


def load_error_bands(path=ERRORS_CSV) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``{engine: {basis: [{"metric", "n", "signed_median_pct", "median_pct", "p90_pct", "max_pct", "basis"}]}}``
    from an ``engine_errors.csv`` file, ``basis`` being :data:`IN_SAMPLE`, :data:`CROSS_VALIDATED` or
    :data:`KEPT_OUT`. The errors
    are signed so that a positive one flatters self-hosting (a step predicted too short, a throughput too high);
    an engine with no measured rows has empty lists. Raises :class:`EngineDataError` on a bad row."""
    path = Path(path)
    out: dict[str, dict[str, list[dict[str, Any]]]] = {e: {IN_SAMPLE: [], CROSS_VALIDATED: [], KEPT_OUT: []}
                                                       for e in ENGINES}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            engine, metric = (row.get("engine") or "").strip(), (row.get("metric") or "").strip()
            basis = (row.get("basis") or "").strip()
            where = f"{path.name} {engine}/{metric}/{basis}"
            if engine not in out or metric not in METRICS or basis not in (IN_SAMPLE, CROSS_VALIDATED, KEPT_OUT):
                raise EngineDataError(f"{where}: unknown engine, metric or basis")
            signed, median, p90, worst, n = (_number(row.get(k, ""), where) for k in
                                             ("signed_median_pct", "median_pct", "p90_pct", "max_pct", "n"))
            if (median is None or p90 is None or worst is None or signed is None or n is None or n < 1
                    or not 0 <= median <= p90 <= worst or abs(signed) > worst + 1e-9):
                raise EngineDataError(f"{where}: needs n >= 1 and 0 <= median_pct <= p90_pct <= max_pct")
            out[engine][basis].append({"metric": metric, "n": int(n), "signed_median_pct": signed,
                                       "median_pct": median, "p90_pct": p90, "max_pct": worst, "basis": basis})
    for by_basis in out.values():
        for bands in by_basis.values():
            bands.sort(key=lambda b: METRICS.index(b["metric"]))
    return out


@functools.cache
def _bands() -> Mapping[str, Mapping[str, tuple]]:
    return types.MappingProxyType({e: types.MappingProxyType({b: tuple(types.MappingProxyType(x) for x in v)
                                                              for b, v in by_basis.items()})
                                   for e, by_basis in load_error_bands().items()})


def error_band(engine: str, basis: str = CROSS_VALIDATED) -> list[dict[str, Any]] | None:
    """The engine's error on published measurements, one entry per metric (``{"metric", "n",
    "signed_median_pct", "median_pct", "p90_pct", "max_pct", "basis"}``), or None when no row measured it.

    The default ``basis`` is :data:`CROSS_VALIDATED`: each source's rows predicted by figures fitted without
    that source (docs/calibration.md section 5), the only figure that says how far off a new set-up may be.
    :data:`IN_SAMPLE` is the error on the rows the figures were fitted to; :data:`KEPT_OUT` the shipped figures' error
    on published rows kept out of the fit. A family with no rows of its own that shares every figure of its engine
    (``vllm-2025``) carries its engine's error."""
    bands = _bands()[engine][basis] or _bands()[figures_of(engine)][basis]
    return [dict(b) for b in bands] if bands else None


#: Release families whose published rows kept out of the fit are an error band of their own whatever figures they
#: share: they ran a release whose host work the figures model only in part (vLLM's V0 engine, its host times fitted on
#: runs with multi-step scheduling, its kept-out runs scheduling one step at a time), so their error says nothing of
#: the release the engine's plain id prices, nor its rows of that release.
OWN_KEPT_OUT = ("vllm-v0",)


def kept_out_as(engine: str) -> str:
    """The profile whose kept-out band a published row predicted under ``engine`` files under: ``engine`` itself
    for a family of :data:`OWN_KEPT_OUT`, else :func:`figures_of`."""
    return engine if engine in OWN_KEPT_OUT else figures_of(engine)


def figures_of(engine: str) -> str:
    """The profile whose measured rows stand for ``engine``'s speeds: its base engine's when it shares every
    fitted figure with it (``vllm-2025`` -> ``vllm``), else itself."""
    return base(engine) if _shares_every_figure(engine) else engine


def _shares_every_figure(engine: str) -> bool:
    """True when every fitted figure of ``engine`` is its base engine's (a release family that differs only in
    what no measured row sees, such as how it allocates memory; a reserve it works out itself is its own)."""
    b = base(engine)
    if b == engine:
        return False
    mine, theirs = figure_rows()[engine], figure_rows()[b]
    own = {"overhead_gib"} if engine in MODELLED_RESERVE else set()
    # A figure fitted on either side counts: a family's own fitted reserve (trtllm-2025) makes it a profile of its own.
    return all(mine[f]["value"] == theirs[f]["value"] for f in FIGURES
               if "fitted" in (theirs[f]["basis"], mine[f]["basis"]) and f not in own)


def widest_band(basis: str = CROSS_VALIDATED) -> dict[str, Any] | None:
    """The widest error of any calibrated engine and metric (largest ``p90_pct``) on ``basis``: the band a
    scenario outside every measured region is given (docs/calibration.md section 6)."""
    bands = [dict(b, engine=e) for e, by_basis in _bands().items() if e != "roofline" for b in by_basis[basis]]
    return max(bands, key=lambda b: (b["p90_pct"], b["median_pct"])) if bands else None


def figures_used(s: Any) -> dict[str, dict[str, Any]]:
    """Each profile figure the scenario uses and whether it is the profile's (the report's ``engine_profile``):
    ``{"value", "from": "profile", "basis"}`` for the engine's own figure (``basis`` as ``engines.csv`` records
    it), ``{"value", "from": "link"}`` where the link sets another value (its own key, or ``eff`` for the three
    efficiencies). A link that repeats the profile's figure, as a printed scenario does, reads ``"profile"``, so a
    report and the report of its own scenario agree."""
    rows = figure_rows()[s.engine]
    out = {}
    for f in FIGURES:
        value = getattr(s, f)
        own = rows[f]["value"]
        if f == "max_seqs":  # vLLM's is its default by card (default_max_seqs)
            own = default_max_seqs(s.engine, s.card, s.torch_gib, s.max_batched_tokens, own)
        if value == own:
            out[f] = {"value": value, "from": "profile", "basis": rows[f]["basis"]}
        else:
            out[f] = {"value": value, "from": "link"}
    return out
