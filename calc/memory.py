"""Memory as each engine allocates it (docs/method.md section 8.2): what a card holds for the weights as loaded,
the engine's own reserve, and the KV cache, per card, in GiB (``2**30`` bytes).

Each engine sizes its KV cache by its own rule, from a different total:

- **roofline**: ``mem_util`` of the card (``mem_gib``, as nvidia-smi reports it) less the reserve ``overhead_gib``
  and the weights.
- **llama.cpp** (``src/llama-context.cpp``): the card less the CUDA context, the weights it offloads (the input
  embedding table stays in host memory) and its compute buffers, reserved for a graph of ``n_ubatch`` tokens
  (``max_batched_tokens``): the logits of its output rows, or the attention's working set over the context (the
  scores of every head without flash attention), whichever is larger. It allocates the KV cache it is told,
  ``n_ctx`` cells: ``max_seqs`` slots of ``ctx`` tokens, padded to 256 cells; the rest of the card stays free.
- **vLLM** (``vllm/v1/worker/gpu_worker.py`` ``determine_available_memory``): the total CUDA reports
  (``torch_gib``) times ``gpu_memory_utilization`` (``mem_util``), less the weights as loaded, the activation peak
  of its profiling run, the memory that appears outside PyTorch's allocator during it and, since v0.21, the
  CUDA graphs' memory. The CUDA context and NCCL exist before its first snapshot and come out of the share it
  leaves (``1 - mem_util``). Each release family allocates by its own terms (``VLLM_RELEASES``); a link that
  names no release (``engine=vllm``) is charged the family that leaves the smaller cache.
- **SGLang** (``python/sglang/srt/model_executor/model_runner.py`` ``profile_max_num_token``): ``mem_fraction_static``
  (``mem_util``) of the memory free when it starts (``torch_gib`` less the CUDA context) holds the weights and the
  KV cache; the rest of the card is left for activations and CUDA graphs, outside the fraction.
- **TensorRT-LLM** (``KvCacheConfig.free_gpu_memory_fraction``; docs/source/reference/memory.md): ``mem_util``
  of the memory free after the engine has loaded. The 2024 releases' accounting is worked out: the total CUDA
  reports (``torch_gib``) less the weights, the CUDA context, the execution context, and runtime buffers and a
  decoder sized by ``max_batch_size`` and the vocabulary (``trtllm_reserve``); the other profiles take the card
  (``mem_gib``) less the weights and a fitted ``overhead_gib``.

A link's ``overhead_gib`` replaces the reserve an engine's rule works out (vLLM's three terms, SGLang's context,
TensorRT-LLM's buffers).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import engines, model
from .model import GiB, cache_bytes, moe_split, weight_bytes
from .scenario import Scenario

#: What vLLM's profiling run charges besides the weights and activations: memory that appears outside PyTorch's
#: allocator during the run (the CUDA context and NCCL exist before its first snapshot and are not charged), GiB
#: per card; the gpt-oss printouts of vllm issues #23278 and #27508 leave 0.16 and 0.26 GiB for it.
VLLM_NON_TORCH_GIB = 0.2
#: vLLM's memory accounting by release family (docs/method.md section 8.2), each read from that release's code:
#: the bytes alive per element of the ``rows x vocab`` logits at the peak of its dummy sampler run (the PyTorch
#: sort path of v0.10 to v0.14: bf16 and fp32 logits, sorted values and int64 indices, the sort's scratch, 38;
#: the FlashInfer and Triton top-k/top-p of later releases, 14), the CUDA-graph memory it reserves before sizing
#: the cache (v0.21 and later; its printouts estimate 0.36 to 0.58 GiB) and how its MXFP4 MoE kernels hold
#: routed experts ("marlin": the v0.10 to v0.14 path on Hopper, intermediate size padded to 128 and hidden to
#: 256; "triton": v0.14 and later, the checkpoint plus a second copy of its 8-bit scales per 32 weights).
VLLM_RELEASES = {
    "vllm-0.21": {"sampler_bytes": 14.0, "graphs_gib": 0.5, "mxfp4": "triton"},
    "vllm-2025": {"sampler_bytes": 38.0, "graphs_gib": 0.0, "mxfp4": "marlin"},
}
#: vLLM release families charged another family's memory accounting: the V0 engine (v0.5 to v0.7) reserved no
#: CUDA-graph memory before sizing its cache and profiled its sampler through PyTorch's sort, as v0.10 to v0.14 do.
VLLM_MEMORY_AS = {"vllm-v0": "vllm-2025"}
#: The vLLM profile whose link names no release (plain ``engine=vllm``): the start-up printouts users paste come
#: from every release, and the families above size one launch's cache up to four times apart (gpt-oss-120b on an
#: H100: 1.94 GiB as v0.10 to v0.14 allocate it, 7.81 as v0.21 and later do). Where they differ, the plain id
#: charges the accounting that leaves less cache, so that an unnamed release never promises sequences the engine
#: may not hold; ``engine=vllm-0.21`` or ``engine=vllm-2025`` names the release (calc/notes.py says which applies).
VLLM_UNNAMED = "vllm"
#: Memory SGLang finds already taken when it measures the free memory it takes ``mem_fraction_static`` of (the
#: CUDA context, the communicators), GiB per card below the total CUDA reports: on 4 L4s at TP 4, SGLang 0.4.3
#: printed "Load weight begin. avail mem=21.63 GB" (didier-durand/llms-in-clouds docs/sglang.md).
SGLANG_CONTEXT_GIB = 0.3
#: What SGLang's distributed start-up takes beside it, GiB per card, where the cards of a tensor-parallel group
#: are joined by a peer-to-peer fabric (the communicators' buffers over NVLink or xGMI; PCIe groups take next to
#: nothing, as the 4 L4s above): "Init torch distributed ends. mem usage=1.77 GB" to "2.01 GB" on the 8 ranks of
#: sgl-project/sglang PR #11716 (Oct 2025), 0.00 on one card in the issues that print it. SGLang sizes the pool
#: from the rank with the least memory left, so the largest.
SGLANG_P2P_INIT_GIB = 2.0
#: Link bandwidth, GB/s per card, from which a card's fabric is peer-to-peer (NVLink 3 is 300, xGMI 448; PCIe 5.0
#: x16 is 64).
P2P_LINK_GBS = 100.0
#: TensorRT-LLM's C++ executor before it sizes the KV cache (docs/source/reference/memory.md: "pre-allocated ...
#: based on runtime max_batch_size and max_seq_len"), from its [MemUsageChange] printouts: the CUDA context and
#: libraries (GiB per card: the doc's own H100 example leaves 0.76 GiB of "total 79.10, available 70.48" beside the
#: engine, execution context, runtime buffers and decoder it prints), and the runtime buffers and the decoder in
#: bytes per sequence of ``max_batch_size`` and token of the vocabulary (logits and sampling state): runtime
#: buffers 9.18 and 9.34 (2.66 GB for Qwen2.5-0.5B at 2048 x 151,936, TensorRT-LLM issue #1188, Nov 2024; 1.14 GB
#: for Llama 2 7B at 4096 x 32,000, v0.12 trtllm-bench in benchmarks/cpp/README.md), decoder 19.9 in the later of
#: the two (5.76 GB; v0.12 printed 35.6).
TRTLLM_CONTEXT_GIB = 0.75
TRTLLM_RUNTIME_BYTES = 9.25
TRTLLM_DECODER_BYTES = 19.9
#: Memory SGLang's weight load takes per card beside the checkpoint's bytes (rotary tables, buffers, the
#: allocator's blocks): the same printout's "Load weight end ... mem usage=15.54 GB" against 15.26 GiB of weights.
SGLANG_LOAD_EXTRA_GIB = 0.3
#: The CUDA context a llama.cpp process holds on each card beside the buffers it prints, GiB: llama.cpp prints no
#: figure for it; the context SGLang found taken on the same kind of start (``SGLANG_CONTEXT_GIB``) stands for it.
LLAMACPP_CONTEXT_GIB = SGLANG_CONTEXT_GIB
#: The share of an Apple machine's unified memory Metal lets the GPU hold (``MTLDevice.recommendedMaxWorkingSetSize``,
#: which llama.cpp prints at start and allocates within): two thirds up to 32 GiB (21,845.34 MB on a 32 GB M2 Max,
#: ollama/ollama issue #434; the same on an M1 Max, ggml-org/llama.cpp PR #2011), three quarters above (about 49 GB
#: on a 64 GB M2 Max, ggml-org/llama.cpp issue #1870; about 36 GB on a 48 GB Mac, osaurus-ai/osaurus PR #1958).
#: macOS 26 gives a 128 GB Mac 107.5 GiB (84 %, antirez/ds4 PR #893): three quarters is the cautious figure there.
APPLE_WORKING_SET = ((32.0, 2 / 3), (float("inf"), 0.75))


def apple_working_set_gib(mem_gib: float) -> float:
    """The GPU's share of ``mem_gib`` GiB of unified memory on an Apple machine (:data:`APPLE_WORKING_SET`), GiB."""
    return mem_gib * next(share for up_to, share in APPLE_WORKING_SET if mem_gib <= up_to)


def on_apple(s: Scenario) -> bool:
    """Whether the scenario's card is an Apple machine's GPU (a custom card of ``arch=apple``)."""
    return engines.family_name(s.arch) == "Apple"


#: llama.cpp pads its context to whole multiples of 256 cells (src/llama-context.cpp ``GGML_PAD(n_ctx, 256)``).
LLAMACPP_CELL_PAD = 256
#: llama.cpp's compute buffer: how many f32 tensors of the residual stream's width (``n_ubatch x hidden``) it
#: holds beside the output head (1), beside the attention (4), and at least in any phase (15) (docs/method.md
#: section 8.2). Read from start-up printouts: Pythia 2.8B on a V100 (ggml-org/ci, build 4343), Llama 3 8B
#: (developer0hye/llama-3-korean-bllossom-8b-q4-docker README), a Mistral-shaped 7B at 2,048 and 32,768 cells
#: (fedora-copr/logdetective PR #106), Gemma 7B (ggml-org/llama.cpp PR #5631), within 0.1 % where the logits or
#: the attention scores set the size (6 % under for Pythia without flash attention); the floor is the one current
#: server's printout with logits per slot (nehaai/kvcalc README, Llama 3 8B, 124 MiB), above what the same graph
#: takes on the CPU backend (about 6 widths), so that a card is not over-filled.
LLAMACPP_OUT_WIDTHS, LLAMACPP_ATTN_WIDTHS, LLAMACPP_FLOOR_WIDTHS = 1, 4, 15


def sglang_context_gib(s) -> float:
    """Memory already taken on each card when SGLang measures the free memory it takes ``mem_fraction_static``
    of, GiB per card: the CUDA context (``SGLANG_CONTEXT_GIB``), plus the communicators' buffers
    (``SGLANG_P2P_INIT_GIB``) on a tensor-parallel group of more than one card joined at ``P2P_LINK_GBS`` or
    more (docs/method.md section 8.2)."""
    p2p = s.gpus > 1 and (s.link_gbs or 0.0) >= P2P_LINK_GBS
    return SGLANG_CONTEXT_GIB + (SGLANG_P2P_INIT_GIB if p2p else 0.0)


def gib_text(gib: float) -> str:
    """GiB to two decimals, or two significant figures below 0.01 GiB (a tiny custom card is not "0.00 GiB")."""
    return f"{gib:,.2f}" if abs(gib) >= 0.01 or gib == 0 else f"{gib:.2g}"


@dataclass(frozen=True)
class Block:
    """One labelled part of a card's memory, GiB per card."""

    name: str
    gib: float


#: The largest share of a card the memory notes suggest giving vLLM (its own documentation's examples go to 0.95,
#: leaving room for what runs beside it).
LARGEST_SUGGESTED_MEM_UTIL = 0.95


@dataclass(frozen=True)
class Memory:
    """A card's memory as the scenario's engine allocates it, GiB per card (docs/method.md section 8.2).

    ``kv_cache_gib`` is signed: negative is the shortfall when the weights and reserve exceed the engine's share.
    """

    rule: str                 # the engine whose rule sized the cache
    engine: str               # the profile id
    mem_util: float
    card_gib: float           # the card's memory, nvidia-smi's total (mem_gib)
    total_gib: float          # the total the engine takes its share of (torch_gib for vLLM and SGLang)
    weights_loaded_gib: float
    reserve: tuple[Block, ...]
    kv_cache_gib: float       # the room the engine has for its cache (what max_batch divides)
    gpus: int
    kv_alloc_gib: float | None = None  # the cache it allocates where it is told a size (llama.cpp's n_ctx cells)
    cells: int | None = None           # llama.cpp's n_ctx, the cells of that cache
    kv_asked_gib: float | None = None  # what those cells take per card, allocated or not
    kv_cards: int | None = None        # the cards that hold the cache where not all do (llama.cpp's row split: 1)

    @property
    def allocated_gib(self) -> float:
        """The KV cache the engine allocates per card: its whole room (vLLM, SGLang, TensorRT-LLM), or the cells it
        is told where that is less (llama.cpp)."""
        return self.kv_cache_gib if self.kv_alloc_gib is None else self.kv_alloc_gib

    @property
    def reserve_gib(self) -> float:
        return sum(b.gib for b in self.reserve)

    @property
    def unclaimed_gib(self) -> float:
        """The part of the card the engine leaves alone (its share's complement, what the driver keeps, and llama.cpp's
        room beyond the cells it allocates)."""
        return self.card_gib - self.weights_loaded_gib - self.reserve_gib - max(self.allocated_gib, 0.0)

    @property
    def outside_gib(self) -> float:
        """What the card's memory holds beyond what the engine may take of it at all (a Mac's unified memory beyond
        Metal's working set, which macOS keeps), GiB; 0 elsewhere."""
        return max(0.0, self.card_gib - self.total_gib) if self.rule == "llamacpp" else 0.0

    @property
    def card_line_text(self) -> str:
        """The card's memory in words, for the dashed line of the Fit page's chart."""
        if self.outside_gib > 0:
            return (f"the Mac's {gib_text(self.card_gib)} GiB of unified memory, of which Metal lets the GPU hold "
                    f"{gib_text(self.total_gib)} GiB")
        return f"the card, {gib_text(self.card_gib)} GiB as its driver reports it (nvidia-smi, rocm-smi)"

    @property
    def needed_gib(self) -> float:
        """What the weights and the reserve need per card before any KV cache."""
        return self.weights_loaded_gib + sum(b.gib for b in self.reserve if not b.name.startswith("left "))

    @property
    def weights_alone_overflow(self) -> bool:
        """Whether the weights as loaded overflow the engine's share by themselves, not only with its reserve."""
        return self.kv_cache_gib + (self.needed_gib - self.weights_loaded_gib) < 0

    @property
    def share_text(self) -> str:
        """What the engine takes its cache from, in its own terms."""
        pct = f"{self.mem_util:.0%}"
        if self.rule == "vllm":
            return f"{pct} (gpu_memory_utilization) of the {gib_text(self.total_gib)} GiB CUDA reports"
        if self.rule == "sglang":
            return f"{pct} (mem_fraction_static) of the memory free when it starts"
        if self.rule == "trtllm" and any(b.name.startswith("activation peak") for b in self.reserve):
            return f"{pct} (free_gpu_memory_fraction) of what its weights and its profiling run leave"
        if self.rule == "trtllm":
            return f"{pct} (kv_cache_free_gpu_mem_fraction) of what its weights and buffers leave"
        if self.rule == "llamacpp" and self.cells is not None:
            where = (f"Metal's working set, {gib_text(self.total_gib)} GiB of the {gib_text(self.card_gib)} GiB of "
                     "unified memory (recommendedMaxWorkingSetSize)" if self.outside_gib > 0 else
                     f"the card's {gib_text(self.card_gib)} GiB")
            return f"{where}, where it allocates the {self.cells:,} cells it is told (n_ctx: max_seqs slots of ctx tokens)"
        return f"the card's {gib_text(self.card_gib)} GiB" if self.mem_util >= 1 else \
            f"{pct} of the card's {gib_text(self.card_gib)} GiB"

    def larger_share_text(self) -> str:
        """Where the weights and the reserve do not fit vLLM's share of the card but would at a larger
        ``gpu_memory_utilization`` up to :data:`LARGEST_SUGGESTED_MEM_UTIL`, that remedy with the KV cache it leaves
        ("mem_util 0.95 (gpu_memory_utilization) leaves 1.94 GiB per card for the KV cache"); "" otherwise."""
        if self.rule != "vllm" or self.kv_cache_gib >= 0 or self.mem_util >= LARGEST_SUGGESTED_MEM_UTIL:
            return ""
        room = LARGEST_SUGGESTED_MEM_UTIL * self.total_gib - self.needed_gib
        if room <= 0:
            return ""
        return (f"mem_util {LARGEST_SUGGESTED_MEM_UTIL:g} (gpu_memory_utilization) leaves {room:,.2f} GiB per card "
                "for the KV cache")

    def sentence(self) -> str:
        """The allocation per card in words, each block with its size (the Fit page's caption, the memo)."""
        name = engines.ENGINE_NAMES.get(self.engine, self.engine)
        parts = [f"{self.weights_loaded_gib:,.2f} GiB of weights as loaded"]
        parts += [f"{b.gib:,.2f} GiB {b.name}" for b in self.reserve if b.gib > 0]
        kv = (f"{self.allocated_gib:,.2f} GiB for the KV cache" if self.kv_cache_gib > 0
              else f"nothing for the KV cache (short by {-self.kv_cache_gib:,.2f} GiB)")
        left = "stay free beside its cells" if self.cells is not None else "are left outside its share"
        rest = (f"{self.unclaimed_gib:,.2f} GiB of the {gib_text(self.card_gib)} GiB card {left}" if self.unclaimed_gib >= 0
                else f"together {-self.unclaimed_gib:,.2f} GiB more than the {gib_text(self.card_gib)} GiB card holds")
        where = ("On the main card, which holds the whole cache under a row split (split=row)" if self.cache_cards < self.gpus
                 else "Per card")
        return f"{where}, {name} sizes its cache from {self.share_text}: " + ", ".join(parts) + f"; {kv}; {rest}."

    @property
    def kv_cache_bytes(self) -> float:
        """The room for the KV cache over every card of the replica that holds it, bytes (negative: the shortfall)."""
        return self.kv_cache_gib * self.cache_cards * GiB

    @property
    def cache_cards(self) -> int:
        """The cards that hold the KV cache: every card of the replica, but the main one alone under a row split."""
        return self.gpus if self.kv_cards is None else self.kv_cards

    @property
    def allocated_bytes(self) -> float:
        """The KV cache the engine allocates over every card of the replica, bytes (negative: the shortfall)."""
        return self.allocated_gib * self.cache_cards * GiB


def vllm_release_id(s: Scenario) -> str | None:
    """The vLLM release family (a key of :data:`VLLM_RELEASES`) whose memory accounting sizes the scenario's cache:
    the one its link names, or for plain ``engine=vllm`` (:data:`VLLM_UNNAMED`) the one that leaves the smaller KV
    cache (the later release on a tie); None for any other engine."""
    if engines.base(s.engine) != "vllm":
        return None
    if s.engine in VLLM_RELEASES:
        return s.engine
    if s.engine in VLLM_MEMORY_AS:
        return VLLM_MEMORY_AS[s.engine]
    return min(VLLM_RELEASES, key=lambda r: (_vllm_kv_gib(s, VLLM_RELEASES[r]), r != "vllm-0.21"))


def _vllm_release(s: Scenario) -> dict | None:
    rid = vllm_release_id(s)
    return None if rid is None else VLLM_RELEASES[rid]


def _vllm_reserve(s: Scenario, release: dict) -> tuple[Block, ...]:
    """vLLM's reserve per card under one release family's accounting (GiB blocks), or the link's ``overhead_gib``."""
    if s.overhead_gib is not None:
        return (Block("reserve (overhead_gib)", s.overhead_gib),)
    reserve = (Block("activation peak of the profiling run", vllm_activation_bytes(s, release) / GiB),
               Block("memory outside PyTorch's allocator", VLLM_NON_TORCH_GIB))
    if s.cuda_graphs and release["graphs_gib"]:
        reserve += (Block("CUDA graphs", release["graphs_gib"]),)
    return reserve


def _vllm_kv_gib(s: Scenario, release: dict) -> float:
    """vLLM's KV cache per card under one release family's accounting, GiB (negative: the shortfall)."""
    loaded = loaded_weight_bytes(s, release) / GiB / s.gpus
    return s.mem_util * s.torch_gib - loaded - sum(b.gib for b in _vllm_reserve(s, release))


def expert_width(s: Scenario) -> float:
    """The intermediate size of one routed expert, ``M / (E * L * 3 * hidden)`` (gate, up and down projections)."""
    M, _ = moe_split(s)
    return M / (s.experts * s.layers * 3 * s.hidden) if s.experts else 0.0


def loaded_weight_bytes(s: Scenario, release: dict | None = None) -> float:
    """Weight bytes over the replica as the engine holds them: :func:`calc.model.weight_bytes`, plus what vLLM's
    MXFP4 MoE kernels add to routed experts stored in MXFP4 (``VLLM_RELEASES``): gpt-oss-120b's 60.8 GiB
    checkpoint loads as 65.97 GiB through Marlin (vllm issue #23278) and 64.38 GiB through the Triton kernels
    (vllm issue #33155); SGLang's load takes ``SGLANG_LOAD_EXTRA_GIB`` more on each card. ``release`` (one of
    ``VLLM_RELEASES``) replaces the vLLM release the scenario's engine stands for."""
    W = weight_bytes(s)
    if engines.base(s.engine) == "sglang":
        return W + s.gpus * SGLANG_LOAD_EXTRA_GIB * GiB
    if engines.base(s.engine) == "llamacpp":
        return W - input_table_bytes(s)
    release = _vllm_release(s) if release is None else release
    if release is None or s.weights_experts != "mxfp4" or not s.experts:
        return W
    M, _ = moe_split(s)
    if M <= 0:  # a custom shape whose parameters leave the routed experts nothing: no expert to pad
        return W
    experts = M * s.expert_weight_bits / 8
    if release["mxfp4"] == "marlin":
        width = expert_width(s)
        padded = (math.ceil(width / 128) * 128) * (math.ceil(s.hidden / 256) * 256)
        return W + experts * (padded / (width * s.hidden) - 1)
    return W + M * 8 / 32 / 8  # the 8-bit scale of every 32 weights, held twice


def input_table_bytes(s: Scenario) -> float:
    """Bytes of the input-embedding table (``embed_b``, in the embedding part's format), which llama.cpp keeps in
    host memory ("CPU_Mapped model buffer"): 0 where input and output share one table, which it copies to the card
    that holds the output layer."""
    part = next((p for p in model.weight_parts(s) if p.name == "embeddings and LM head"), None)
    return 0.0 if part is None else min(model.embed_params(s), part.params) * part.bits / 8


def llamacpp_cells(s: Scenario) -> int:
    """llama.cpp's ``n_ctx``: ``max_seqs`` slots of ``ctx`` tokens (one slot without a cap), padded to 256 cells
    (llama-server runs its slots on one unified cache of ``n_ctx`` cells; src/llama-context.cpp)."""
    slots = 1 if s.max_seqs is None else int(s.max_seqs)
    return int(math.ceil(slots * s.ctx / LLAMACPP_CELL_PAD) * LLAMACPP_CELL_PAD)


def llamacpp_compute_bytes(s: Scenario) -> float:
    """llama.cpp's compute buffer on the card that holds the output layer, bytes: the largest phase of a graph of
    ``ub = min(n_ubatch, n_ctx)`` tokens (``max_batched_tokens``; ggml's allocator reuses what a phase frees), of
    ``max(4*n_out*V + 4*ub*E, A, 4*ub*20*E)`` with ``A = 2*ub*n_kv + 16*ub*E`` under flash attention (its f16 mask)
    and ``4*ub*n_kv*(H + 1) + 16*ub*E`` without (the f32 scores of every head and the mask); ``n_kv`` the cells,
    ``n_out`` the output rows: the slots for a server that reserves logits per slot (ggml-org/llama.cpp PR #23861),
    else ``ub`` (docs/method.md section 8.2)."""
    cells = llamacpp_cells(s)
    ub = min(int(s.max_batched_tokens), cells)
    E, V = float(s.hidden), float(s.vocab)
    slots = 1 if s.max_seqs is None else int(s.max_seqs)
    n_out = min(slots, ub) if s.engine in engines.OUTPUTS_PER_SLOT else ub
    out = 4.0 * n_out * V + 4.0 * LLAMACPP_OUT_WIDTHS * ub * E
    attn = (2.0 * ub * cells if s.flash_attn else 4.0 * ub * cells * (s.heads + 1)) \
        + 4.0 * LLAMACPP_ATTN_WIDTHS * ub * E
    return max(out, attn, 4.0 * LLAMACPP_FLOOR_WIDTHS * ub * E)


#: The widest dense MLP a token passes through, in widths of the residual stream: Gemma 2 27B's 36,864 over 4,608 is
#: 8, the widest in the catalogue; twice that is the cap.
MLP_WIDTH_MAX = 16


def forward_activation_bytes(s: Scenario) -> float:
    """Activations of one forward pass over ``max_batched_tokens`` tokens on one card, bytes: the residual stream,
    q/k/v and the MLP's gate and up projections in 16 bits, split over the cards, the dense MLP at most
    :data:`MLP_WIDTH_MAX` widths wide (docs/method.md section 8.2)."""
    g = s.gpus
    _, D = moe_split(s)
    # The MLP width a token passes through: the dense block's, plus the routed experts it is sent to.
    # At most MLP_WIDTH_MAX widths of the residual stream: a custom width far too narrow for the parameters (the
    # default heads = kv_heads) would otherwise put a whole layer's weights into one activation.
    mlp = min(max(0.0, (D - s.vocab * s.hidden - s.embed_b * 1e9) / s.layers / (3 * s.hidden)), MLP_WIDTH_MAX * s.hidden)
    mlp += s.experts_active * expert_width(s)
    per_token = 2 * (4 * s.hidden + ((s.heads + 2 * s.kv_heads) * s.head_dim + 2 * mlp) / g)
    return s.max_batched_tokens * per_token


def trtllm_reserve(s: Scenario) -> tuple[Block, ...]:
    """What TensorRT-LLM's executor allocates on each card before it sizes the KV cache, GiB per card: the CUDA
    context, the execution context (TensorRT's activations for ``max_num_tokens`` tokens, plus the logits of
    ``max_batch_size`` sequences in 16 bits before their 32-bit copy), the runtime buffers and the decoder, both
    per sequence of ``max_batch_size`` (``max_seqs``) and token of the vocabulary (``TRTLLM_*``; docs/method.md
    section 8.2)."""
    rows_vocab = float(s.max_seqs) * s.vocab
    return (Block("CUDA context and libraries", TRTLLM_CONTEXT_GIB),
            Block("execution context (activations)", (forward_activation_bytes(s) + 2 * rows_vocab) / GiB),
            Block("runtime buffers", TRTLLM_RUNTIME_BYTES * rows_vocab / GiB),
            Block("decoder", TRTLLM_DECODER_BYTES * rows_vocab / GiB))


#: The current TensorRT-LLM's own accounting (its PyTorch backend, the default from v1.0; profile ``trtllm``): the KV
#: cache is ``free_gpu_memory_fraction`` (0.9 by default, the profile's ``mem_util``) of the total CUDA reports less
#: the weights and the peak of a profiling run (tensorrt_llm/_torch/pyexecutor/_util.py ``KvCacheCreator``). The
#: peak beside the weights is NVIDIA's own estimate (ai-dynamo/aiconfigurator sdk/backends/trtllm_backend.py
#: @00ae653b and systems/h800_sxm.yaml @77f0282e): activations ``2 * max_num_tokens * hidden * c`` bytes with ``c``
#: 11, 6.5 and 5 for 1, 2 and more cards, NCCL 0.33 GiB on 2 cards and 0.38 on more, 3.5 GiB besides. Two printouts
#: come out within 0.5 % (an H200, TensorRT-LLM PR #15734; Llama 3.1 8B FP8 on an H100, issue #6294). The v0.17 to
#: v0.21 releases over TensorRT engines (``trtllm-2025``) keep a fitted reserve (docs/calibration.md section 8).
TRTLLM_TORCH_FRACTION = 0.9
TRTLLM_TORCH_ACT_BYTES = {1: 11.0, 2: 6.5}
TRTLLM_TORCH_ACT_BYTES_MANY = 5.0
TRTLLM_TORCH_NCCL_GIB = {1: 0.0, 2: 358612992 / GiB}
TRTLLM_TORCH_NCCL_GIB_MANY = 411041792 / GiB
TRTLLM_TORCH_OTHER_GIB = 3.5


def trtllm_torch_reserve(s: Scenario) -> tuple[Block, ...]:
    """What the PyTorch backend of TensorRT-LLM holds beside the weights when it sizes the KV cache, GiB per card:
    the activation peak of its profiling run over ``max_batched_tokens`` tokens, the NCCL communicators of a
    tensor-parallel group and the rest of the runtime (``TRTLLM_TORCH_*``)."""
    g = s.gpus
    act = 2.0 * s.max_batched_tokens * s.hidden * TRTLLM_TORCH_ACT_BYTES.get(g, TRTLLM_TORCH_ACT_BYTES_MANY) / GiB
    nccl = TRTLLM_TORCH_NCCL_GIB.get(g, TRTLLM_TORCH_NCCL_GIB_MANY)
    return (Block("activation peak of the profiling run", act),
            *((Block("NCCL communicators", nccl),) if nccl else ()),
            Block("CUDA context, libraries and runtime buffers", TRTLLM_TORCH_OTHER_GIB))


def trtllm_torch_kv_gib(s: Scenario) -> float:
    """The KV cache per card the current TensorRT-LLM's PyTorch backend would allocate, GiB (negative: short): at
    the link's ``mem_util`` where it is below 1, else at the default fraction (``TRTLLM_TORCH_*``). The notes of a
    ``trtllm-2025`` scenario quote it beside that profile's fitted reserve."""
    fraction = s.mem_util if s.mem_util < 1 else TRTLLM_TORCH_FRACTION  # the link's, else the default
    over = sum(b.gib for b in trtllm_torch_reserve(s))
    return fraction * (s.torch_gib - loaded_weight_bytes(s) / GiB / s.gpus - over)


def vllm_activation_bytes(s: Scenario, release: dict | None = None) -> float:
    """The activation peak of vLLM's profiling run on one card, bytes: the larger of its dummy forward pass over
    ``max_batched_tokens`` tokens (the residual stream, q/k/v and the MLP's gate and up projections in 16 bits,
    split over the cards) and its dummy sampler run over ``min(max_seqs, max_batched_tokens)`` rows of logits of
    the whole vocabulary on every card, since the V1 engine all-gathers them (``sampler_bytes`` per element,
    ``VLLM_RELEASES``; vllm/v1/worker/gpu_model_runner.py ``profile_run``, vllm/platforms/interface.py
    ``use_all_gather``)."""
    forward = forward_activation_bytes(s)
    rows = min(s.max_seqs if s.max_seqs is not None else s.max_batched_tokens, s.max_batched_tokens)
    # The V1 engine all-gathers the logits (Platform.use_all_gather), so every card samples the whole vocabulary.
    sampler = rows * s.vocab * (_vllm_release(s) if release is None else release)["sampler_bytes"]
    return max(forward, sampler)


@functools.lru_cache(maxsize=256)
def memory(s: Scenario) -> Memory:
    """The scenario's card memory as its engine allocates it (see the module docstring for each rule). One
    evaluation asks for it many times (every max_batch does), so it is kept per scenario (frozen, hashable; the
    result is frozen too)."""
    g = s.gpus
    loaded = loaded_weight_bytes(s) / GiB / g
    rule = engines.base(s.engine)
    given = s.overhead_gib
    if rule == "vllm":
        total = s.torch_gib
        reserve = _vllm_reserve(s, _vllm_release(s))
        kv = s.mem_util * total - loaded - sum(b.gib for b in reserve)
    elif rule == "sglang":
        total = s.torch_gib
        context = sglang_context_gib(s) if given is None else given
        free = total - context
        kv = s.mem_util * free - loaded
        reserve = (Block("CUDA context and communicators", context),
                   Block("left outside mem_fraction_static", (1 - s.mem_util) * free))
    elif rule == "trtllm":
        # The engine's own accounting starts from the total CUDA reports (the PyTorch backend's profiling run, or
        # the 2024 executor's buffers); a fitted reserve from the card's.
        total = s.torch_gib if given is None else s.mem_gib
        if given is not None:
            reserve = (Block("runtime buffers (overhead_gib)", given),)
        elif s.engine in engines.PROFILING_RUN:
            reserve = trtllm_torch_reserve(s)
        else:
            reserve = trtllm_reserve(s)
        over = sum(b.gib for b in reserve)
        kv = s.mem_util * (total - loaded - over)
        if kv > 0:
            reserve += (Block("left outside the KV fraction", (1 - s.mem_util) * (total - loaded - over)),)
    elif rule == "llamacpp":
        # On a Mac, what Metal lets the GPU hold of the unified memory; elsewhere the card's.
        total = apple_working_set_gib(s.mem_gib) if on_apple(s) else s.mem_gib
        # The driver's context is the backend's: a Vulkan build holds no CUDA context, though about as much.
        context = ("Vulkan context" if engines.backend_of(s.engine) == "vulkan" else
                   "Metal context" if on_apple(s) else "CUDA context")
        reserve = ((Block(context, LLAMACPP_CONTEXT_GIB),
                    Block("compute buffers", llamacpp_compute_bytes(s) / GiB)) if given is None
                   else (Block("reserve (overhead_gib)", given),))
        kv = s.mem_util * total - loaded - sum(b.gib for b in reserve)
        cells = llamacpp_cells(s)
        slots = 1 if s.max_seqs is None else int(s.max_seqs)
        # The slots share the cells (a unified cache); each card holds the layers it was given, or under a row split
        # every card a share of each matrix and the main card the whole cache (the card that sets what fits).
        holders = 1 if model.row_split(s) else g
        asked = slots * float(cache_bytes(s, cells / slots)) / holders / GiB
        return Memory(rule, s.engine, s.mem_util, s.mem_gib, total, loaded, reserve, kv, g,
                      kv_alloc_gib=min(asked, kv) if kv > 0 else kv, cells=cells, kv_asked_gib=asked,
                      kv_cards=holders)
    else:
        total = s.mem_gib
        over = 0.0 if given is None else given
        reserve = (Block("reserve (overhead_gib)", over),)
        kv = s.mem_util * total - loaded - over
    return Memory(rule, s.engine, s.mem_util, s.mem_gib, total, loaded, reserve, kv, g)


def _block_rounding(s: Scenario) -> int:
    return engines.kv_block_tokens(s.engine, bool(s.kv_latent))


def max_concurrency(s: Scenario, mem: Memory | None = None) -> float:
    """Sequences of ``ctx`` tokens the KV cache holds, as vLLM prints it ("Maximum concurrency for N tokens per
    request"): the whole blocks of :func:`kv_tokens` over the blocks one request of ``ctx`` tokens takes,
    ``ceil(ctx / b)`` (vllm/v1/core/kv_cache_utils.py ``get_max_concurrency_for_kv_cache_config``); unrounded where
    the engine counts single tokens (``b = 1``); 0 when nothing fits."""
    return kv_tokens(s, mem) / float(paged_context(s, s.ctx))


def kv_tokens(s: Scenario, mem: Memory | None = None) -> int:
    """Tokens the KV cache holds, as vLLM ("GPU KV cache size": whole blocks of 16 tokens) and SGLang
    (``max_total_num_tokens``, whole tokens) print it: ``floor(kv / Cg(ctx) * ctx / b) * b`` with ``b`` the engine's
    tokens per block (:func:`calc.engines.kv_block_tokens`, 1 where it pages single tokens; docs/method.md 8.2)."""
    mem = memory(s) if mem is None else mem
    raw = max(0.0, mem.allocated_bytes) / float(cache_bytes(s, s.ctx)) * s.ctx
    b = _block_rounding(s)
    # A hair of slack so a count that is a whole number of blocks in exact arithmetic is not floored one block down.
    return int(math.floor(raw / b + 1e-9) * b)


def free_bytes(s: Scenario) -> float:
    """Memory left for the KV cache over all cards, bytes (negative: the weights and reserve do not fit); under
    ``engine=roofline`` ``g*(mem_util*mem - overhead)*GiB - W`` (docs/method.md section 8)."""
    return memory(s).kv_cache_bytes


def paged_context(s: Scenario, n: ArrayLike) -> NDArray:
    """The cache slots a sequence of ``n`` tokens takes in the engine's pages: ``ceil(n / b) * b`` tokens with ``b``
    the engine's tokens per block (:func:`calc.engines.kv_block_tokens`; ``n`` itself where ``b = 1``)."""
    b = _block_rounding(s)
    n = np.asarray(n)
    return n if b == 1 else np.ceil(n / b) * b


def max_batch(s: Scenario, n: ArrayLike) -> NDArray:
    """Sequences whose caches fit at context ``n``: ``floor(max(0, free) / C(ceil(n/b)*b))`` in the engine's whole
    pages of ``b`` tokens (:func:`paged_context`; int64 array). For a cache that grows with every token this is
    vLLM's whole blocks over the blocks one sequence takes, ``floor(max_concurrency)``."""
    if isinstance(n, (int, np.integer)):  # a single context, asked for several times a report
        return _max_batch_at(s, int(n))
    return np.floor(max(0.0, free_bytes(s)) / cache_bytes(s, paged_context(s, n))).astype(np.int64)


@functools.lru_cache(maxsize=1024)
def _max_batch_at(s: Scenario, n: int) -> NDArray:
    """:func:`max_batch` at one context ``n`` (tokens), cached per scenario (read-only)."""
    out = np.floor(max(0.0, free_bytes(s)) / cache_bytes(s, paged_context(s, n))).astype(np.int64)
    out.setflags(write=False)
    return out


def seqs_cap(s: Scenario, mb: int) -> int:
    """``mb`` sequences capped at the engine's ``max_seqs`` (no cap when it has none; docs/method.md section 8)."""
    return mb if s.max_seqs is None else min(mb, int(s.max_seqs))


def auto_batch(s: Scenario, n: int | None = None) -> int:
    """The largest useful batch: ``max(1, min(max_batch, floor(be + 0.5), max_seqs))``, or
    ``max(1, min(max_batch, max_seqs))`` without a break-even (docs/method.md)."""
    n = s.ctx if n is None else n
    mb = seqs_cap(s, int(max_batch(s, n)))
    be = model.break_even(s, n)
    if be is None:
        return max(1, mb)
    return max(1, min(mb, int(np.floor(be + 0.5))))


def batch_used(s: Scenario, n: int | None = None) -> int:
    """The batch of the scenario at context ``n``: ``auto`` resolved, or the explicit integer."""
    return auto_batch(s, n) if s.batch == "auto" else int(s.batch)


def memory_caps_batch(s: Scenario, n: int | None = None) -> bool:
    """True when memory limits the batch before compute does: ``max_batch < be`` (always without ``be``)."""
    n = s.ctx if n is None else n
    be = model.break_even(s, n)
    return be is None or int(max_batch(s, n)) < be
