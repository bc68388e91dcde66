"""The roofline model of decode: memory, step time, break-even batch and cost (docs/method.md).

Every function is pure and takes a resolved :class:`~calc.scenario.Scenario`. The scenario carries its engine
profile's figures (docs/method.md section 8): the fraction of peak bandwidth reached reading weights (``eff_bw``) and the
KV cache (``eff_kv``), the fraction of the dense peak reached by the arithmetic (``eff_flops``), the fixed time
per step (``step_us``), the share of memory the engine takes (``mem_util``) and its cap on sequences
(``max_seqs``); under ``engine=roofline`` these are docs/method.md exactly. Batch ``B`` and
context ``n`` arguments accept scalars or numpy arrays and broadcast against each other, so a sweep
over batch sizes, or over batch x duty cycle, is one array expression. Units are SI: bytes, seconds,
FLOP, USD; ``GiB = 2**30`` bytes, ``TB/s = 1e12`` bytes/s, ``TFLOP/s = 1e12`` FLOP/s.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import engines, rules
from .scenario import Scenario, packed_weights, weight_format_bits
from .units import BILLION, MILLION, SECONDS_PER_HOUR, TERA, US

GiB = 2**30


@dataclass(frozen=True)
class WeightPart:
    """One part of a checkpoint: ``params`` parameters stored at ``bits`` bits each; ``read`` is the share of them
    one decode step reads (the input-embedding table is looked up, not read), ``routed`` marks routed experts,
    whose share read grows with the batch (:func:`expert_coverage`)."""

    name: str
    params: float
    bits: float
    read: float
    routed: bool = False


def attention_params(s: Scenario) -> float:
    """Parameters of the attention projections over every attention layer (the linear-attention layers' own
    projections count with the rest of their block): ``(L - Llin) * hidden * d * (2*H + 2*Hkv)`` for q, k, v and o;
    with MLA ``(L - Llin) * (2*hidden*H*d + kv_latent*(hidden + 2*H*d))`` (the latent's down- and
    up-projections). Bounded by the dense part less the embedding parts (a custom shape may say less)."""
    Lattn = s.layers - s.linear_layers
    if s.kv_latent:
        per_layer = 2 * s.hidden * s.heads * s.head_dim + s.kv_latent * (s.hidden + 2 * s.heads * s.head_dim)
    else:
        per_layer = s.hidden * s.head_dim * (2 * s.heads + 2 * s.kv_heads)
    _, D = moe_split(s)
    return float(min(Lattn * per_layer, max(0.0, D - embedding_params(s))))


def embedding_params(s: Scenario) -> float:
    """Parameters of the embedding table and the LM head, ``Pe + V*hidden`` (the LM head is ``V*hidden``; a tied
    table has ``Pe = 0`` and is the LM head), bounded by the dense part."""
    _, D = moe_split(s)
    return float(min(embed_params(s) + s.vocab * s.hidden, D))


@functools.lru_cache(maxsize=256)  # a pure function of the (frozen) scenario, asked for a dozen times a report
def weight_parts(s: Scenario) -> tuple[WeightPart, ...]:
    """The checkpoint part by part (docs/method.md section 2.1): the embedding table and LM head at
    ``weights_embed``, the attention projections at ``weights_attn``, the routed experts at ``weights_experts``, the
    rest at ``weights``; ``layers_full`` whole blocks (of ``L``) at 16 bits. With every format the weight format and
    no whole block, ``W = (P - M)*bpw/8 + M*bpw_e/8`` as before."""
    M, D = moe_split(s)
    emb = embedding_params(s)
    attn = attention_params(s)
    rest = max(0.0, D - emb - attn)
    full = s.layers_full / s.layers
    bits = {"attn": weight_format_bits(s.weights_attn), "embed": weight_format_bits(s.weights_embed)}
    head_share = 1 - embed_params(s) / emb if emb else 1.0  # the input table is not read
    parts = [
        WeightPart("embeddings and LM head", emb, bits["embed"], head_share),
        WeightPart("attention projections", attn * (1 - full), bits["attn"], 1.0),
        WeightPart("other weights", rest * (1 - full), s.weight_bits, 1.0),
        WeightPart("routed experts", M * (1 - full), s.expert_weight_bits, 1.0, routed=True),
    ]
    if full:
        parts += [WeightPart("whole 16-bit blocks", (attn + rest) * full, 16.0, 1.0),
                  WeightPart("whole 16-bit blocks' experts", M * full, 16.0, 1.0, routed=True)]
    return tuple(p for p in parts if p.params > 0)


def weight_bytes(s: Scenario) -> float:
    """Bytes of weights resident in memory, the sum of :func:`weight_parts` ``params*bits/8`` (docs/method.md
    section 2.1; ``(P - M)*bpw/8 + M*bpw_e/8`` when every part is in the weight format)."""
    return float(sum(p.params * p.bits / 8 for p in weight_parts(s)))


def embed_params(s: Scenario) -> float:
    """Input-embedding parameters a decode step does not read, ``Pe = embed_b * 1e9`` (docs/method.md sections 2-5)."""
    return s.embed_b * BILLION


def kv_bytes_per_token(s: Scenario) -> float:
    """KV-cache bytes per token with every attention layer full: ``2*(L - Llin)*Hkv*d*kvb/8``, or with MLA
    ``(L - Llin)*kv_latent*kvb/8`` (docs/method.md sections 2-5; linear-attention layers cache no tokens)."""
    Lattn = s.layers - s.linear_layers
    if s.kv_latent:
        return Lattn * s.kv_latent * s.kv_bits / 8
    return 2 * Lattn * s.kv_heads * s.head_dim * s.kv_bits / 8


def token_layers(s: Scenario, n: ArrayLike) -> NDArray:
    """Token-layers cached per sequence at context ``n``: ``(L - Llin - Lw)*n + Lw*min(n, window)``."""
    n = np.asarray(n, dtype=float)
    full = s.layers - s.linear_layers
    if not (s.window and s.window_layers):
        return full * n
    return (full - s.window_layers) * n + s.window_layers * np.minimum(n, s.window)


def state_bytes(s: Scenario) -> float:
    """Bytes of recurrent state one sequence holds over the replica, ``Ls * state_kib * 1024`` with ``Ls`` the
    ``state_layers`` (the linear layers, and every layer of a model that runs a Mamba mixer beside its attention);
    kept at 16 bits whatever the KV format; split over the cards by heads, so not copied (docs/method.md 2.7)."""
    return s.state_layers * s.state_kib * 1024


def kv_heads_per_card(s: Scenario) -> int:
    """KV heads each card holds under tensor parallel: ``ceil(Hkv/g)``, at least one. Engines copy a head to
    several cards rather than split it (docs/method.md sections 2-5, v2); under MLA every card holds the whole latent."""
    if engines.splits_layers(s.engine):
        return s.kv_heads  # every head of its own layers
    return max(1, -(-s.kv_heads // s.gpus))


def kv_copy_factor(s: Scenario) -> float:
    """Cache a replica holds over the model's own cache: ``g*ceil(Hkv/g)/Hkv``, ``g`` under MLA; 1 on one card,
    whenever ``g`` divides ``Hkv``, and where the engine splits by whole layers (no head is copied)."""
    if engines.splits_layers(s.engine):
        return 1.0
    if s.kv_latent:
        return float(s.gpus)
    return s.gpus * kv_heads_per_card(s) / s.kv_heads


def cache_bytes_model(s: Scenario, n: ArrayLike) -> NDArray:
    """Cache bytes of one sequence at context ``n`` as the model defines it, ``C(n)``, with no copies: the KV
    cache of the attention layers plus the linear-attention layers' state (:func:`state_bytes`)."""
    per_token_layer = s.kv_latent * s.kv_bits / 8 if s.kv_latent else 2 * s.kv_heads * s.head_dim * s.kv_bits / 8
    return per_token_layer * token_layers(s, n) + state_bytes(s)


def cache_bytes(s: Scenario, n: ArrayLike) -> NDArray:
    """Cache bytes one sequence takes over the whole replica at context ``n``, with tensor-parallel copies of the
    KV heads: ``Cg(n) = 2*g*ceil(Hkv/g)*d*kvb/8 * Ltok(n) + S``, MLA ``g*kv_latent*kvb/8 * Ltok(n) + S`` with ``S``
    the linear-attention state (docs/method.md sections 2-5, v2).

    This is the figure memory and the bytes a step reads use (a step reads a sequence's state once); it equals
    :func:`cache_bytes_model` on one card.
    """
    return (cache_bytes_model(s, n) - state_bytes(s)) * kv_copy_factor(s) + state_bytes(s)


def kv_read_factor(s: Scenario) -> float:
    """How many times a decode step reads each cached KV head: ``1 + kv_reread*(Hq/Hc - 1)`` with ``Hq = H/g`` query
    heads and ``Hc = ceil(Hkv/g)`` KV heads per card (docs/method.md section 8). A kernel that runs one thread
    block per query head (TensorRT-LLM's masked multi-head attention before v0.7: ``grid(num_heads, batch)``)
    reads a KV head once for each query head it serves; GQA then saves memory but no bandwidth. 1 under MLA
    (the latent is shared by every head by construction) and for a model without GQA."""
    if s.kv_latent or not s.kv_reread:
        return 1.0
    q_per_kv = (s.heads / cache_cards(s)) / kv_heads_per_card(s)
    return 1.0 + s.kv_reread * max(0.0, q_per_kv - 1.0)


def cache_bytes_read(s: Scenario, n: ArrayLike) -> NDArray:
    """Cache bytes one decode step reads for one sequence at context ``n``: the KV part of :func:`cache_bytes`
    times :func:`kv_read_factor`, plus the linear-attention state once; equal to :func:`cache_bytes` when
    ``kv_reread`` is 0."""
    state = state_bytes(s)
    return (cache_bytes(s, n) - state) * kv_read_factor(s) + state


def attention_flops(s: Scenario, n: ArrayLike) -> NDArray:
    """Attention FLOPs per generated token over the cache: ``4*H*d*Ltok(n)``; MLA uses kv_latent for d."""
    width = s.kv_latent if s.kv_latent else s.head_dim
    return 4 * s.heads * width * token_layers(s, n)


@dataclass(frozen=True)
class Peaks:
    """Effective peaks over all cards (docs/method.md section 8): FLOP/s of the arithmetic, bytes/s reading weights and
    bytes/s reading the KV cache."""

    flops: float    # g * tflops * 1e12 * eff_flops (times eff_fp4 at compute=fp4, eff_fp8 at compute=fp8)
    weights: float  # g * bw_tbs * 1e12 * eff_bw * eff_card
    kv: float       # g * bw_tbs * 1e12 * eff_kv * eff_card
    prefill: float  # g * tflops * 1e12 * eff_prefill (times eff_fp4 at compute=fp4)


def splits_layers(s: Scenario) -> bool:
    """Whether the scenario's cards hold whole layers and take turns: an engine that splits by layers
    (:func:`calc.engines.splits_layers`) unless the link splits its matrices by rows (``split=row``)."""
    return engines.splits_layers(s.engine) and s.split != "row"


def row_split(s: Scenario) -> bool:
    """Whether the scenario splits every weight matrix by rows over several cards (llama.cpp's ``--split-mode row``,
    ``split=row``; docs/method.md section 5)."""
    return s.split == "row" and s.gpus > 1


def speed_cards(s: Scenario) -> int:
    """The cards whose peaks add up within one step: ``g`` under tensor parallel and a row split, 1 where the cards
    hold whole layers and take turns (:func:`splits_layers`; docs/method.md section 5)."""
    return 1 if splits_layers(s) else s.gpus


def cache_cards(s: Scenario) -> int:
    """The cards that read the KV cache at once: those of :func:`speed_cards`, but one under a row split, whose main
    card holds the whole cache (docs/method.md section 5)."""
    return 1 if row_split(s) else speed_cards(s)


def arithmetic_share(s: Scenario, prefill: bool = False) -> float:
    """The share of the dense peak the arithmetic reaches: ``eff_flops`` in a decode step, ``eff_prefill`` in a
    prefill (``prefill``), times ``eff_fp4`` at ``compute=fp4`` (docs/method.md section 8: FP4 GEMMs scale their
    blocks and quantize their activations on the fly), and a decode step's times ``eff_fp8`` at ``compute=fp8`` (its
    FP8 GEMMs of one row per sequence; a prefill's fill their tiles)."""
    share = (s.eff_prefill if prefill else s.eff_flops) * (s.eff_fp4 if s.compute == "fp4" else 1.0)
    return share * (s.eff_fp8 if s.compute == "fp8" and not prefill else 1.0)


def peaks(s: Scenario) -> Peaks:
    """The effective peak of each part of a step: ``g * peak * eff_part`` (docs/method.md section 8), with ``g``
    the cards that work at once (:func:`speed_cards`), the arithmetic's share :func:`arithmetic_share` and the
    card family's share of the bandwidth figures ``eff_card`` (1 but for a family whose rows read slower)."""
    g = speed_cards(s)
    bw = s.bw_tbs * TERA * s.eff_card
    return Peaks(g * s.tflops * TERA * arithmetic_share(s), g * bw * s.eff_bw, cache_cards(s) * bw * s.eff_kv,
                 g * s.tflops * TERA * arithmetic_share(s, prefill=True))


def moe_split(s: Scenario) -> tuple[float, float]:
    """(M, D): routed-expert parameters ``M = (P - Pa)/(1 - k/E)`` and the rest ``D = P - M``.

    A dense model has ``M = 0``.
    """
    P = s.params_b * BILLION
    M = rules.routed_params(P, s.active_b * BILLION, s.experts, s.experts_active)
    return M, P - M


def expert_coverage(s: Scenario, B: ArrayLike) -> NDArray:
    """Fraction of each layer's experts a step of ``B`` tokens touches, ``1 - (1 - k/E)^B``
    (independent uniform routing, docs/method.md sections 2-5); 1 for a dense model."""
    B = np.asarray(B, dtype=float)
    if not s.experts:
        return np.ones_like(B)
    return 1 - np.power(1 - s.experts_active / s.experts, B)


def weight_bytes_read(s: Scenario, B: ArrayLike) -> NDArray:
    """Weight bytes one decode step of ``B`` sequences reads: every part of :func:`weight_parts` at its share read,
    routed experts at :func:`expert_coverage` (docs/method.md; ``(D - Pe)*bpw/8 + M*f(B)*bpw_e/8`` when every
    part is in the weight format). The input-embedding table is looked up, not read."""
    B = np.asarray(B, dtype=float)
    cov = expert_coverage(s, B)
    return sum(p.params * p.read * (cov if p.routed else 1.0) * p.bits / 8 for p in weight_parts(s)) + 0 * B


def read_packed(s: Scenario, bits: float) -> bool:
    """Whether weights of ``bits`` bits are read at ``eff_dequant``: below 8 bits, or packed in 8-bit blocks with
    their own scales (:func:`calc.scenario.packed_weights`, Q8_0) where ``dequant_q8`` is 1 (docs/method.md
    section 3.4)."""
    return bits < 8 or bool(s.dequant_q8 and packed_weights(bits))


def dequant_factor(s: Scenario, bits: float) -> float:
    """The share of ``eff_bw`` kept reading weights of ``bits`` bits: the profile's ``eff_dequant`` where the kernel
    unpacks them on the fly (:func:`read_packed`), else 1 (docs/method.md section 8)."""
    return s.eff_dequant if read_packed(s, bits) else 1.0


def _weight_seconds(s: Scenario, B: ArrayLike | None) -> NDArray:
    """Seconds to read the weights, each part at ``BW*q(bits)`` (``BW`` at ``eff_bw``, ``q`` = :func:`dequant_factor`;
    docs/method.md section 8): a decode step of ``B`` sequences, or every resident weight once (``B`` None)."""
    bw = peaks(s).weights
    if B is None:
        return np.asarray(sum(p.params * p.bits / 8 / (bw * dequant_factor(s, p.bits)) for p in weight_parts(s)))
    B = np.asarray(B, dtype=float)
    cov = expert_coverage(s, B)
    return sum(p.params * p.read * (cov if p.routed else 1.0) * p.bits / 8 / (bw * dequant_factor(s, p.bits))
               for p in weight_parts(s)) + 0 * B


def weight_read_seconds(s: Scenario, B: ArrayLike) -> NDArray:
    """Seconds one decode step of ``B`` sequences spends reading weights: each part of :func:`weight_bytes_read`
    at its own effective bandwidth ``BW*q(bits)`` with ``BW`` at ``eff_bw`` and ``q`` = :func:`dequant_factor`
    (docs/method.md section 8). Under roofline ``q = 1``: ``Wr(B)/BW``."""
    return _weight_seconds(s, B)


def resident_weight_seconds(s: Scenario) -> float:
    """Seconds to read every resident weight once (a prefill's floor): ``W`` part by part at ``eff_bw`` times
    :func:`dequant_factor` (docs/method.md sections 7 and 8); never less than :func:`weight_read_seconds`."""
    return float(_weight_seconds(s, None))


def fixed_step_seconds(s: Scenario, B: ArrayLike = 1) -> NDArray:
    """The engine's fixed time per step of ``B`` sequences (or tokens), ``(step_us + L*(layer_us + e*eager_us)*c)*1e-6``
    with ``c`` = :func:`layer_clock_factor`
    (docs/method.md section 3.4): ``e = 1`` where the step runs without a captured CUDA graph, so every layer also
    pays its kernels' launches: ``cuda_graphs=0``, or a step of more than one sequence on an engine that captures
    graphs for single-sequence steps only (:func:`calc.engines.graphs_for_one_sequence_only`: llama.cpp's CUDA
    backend). Broadcasts over ``B``; seconds."""
    B = np.asarray(B, dtype=float)
    launches = (s.cuda_graphs == 0) | (engines.graphs_for_one_sequence_only(s.engine) & (B > 1))
    return (s.step_us + s.layers * (s.layer_us + np.where(launches, s.eager_us, 0.0)) * layer_clock_factor(s)) * US


def layer_clock_factor(s: Scenario) -> float:
    """``layer_ghz / clock_ghz``: how much longer than the profile states a layer takes on this card, for an engine
    whose time per layer is a count of clock cycles (``layer_ghz`` > 0: llama.cpp's Vulkan backend); 1 where the
    engine's is not, or the card's clock is unknown (docs/method.md section 3.4)."""
    if not s.layer_ghz or not s.clock_ghz:
        return 1.0
    return s.layer_ghz / s.clock_ghz


def _flops_per_token(s: Scenario, n: ArrayLike) -> NDArray:
    return 2 * (s.active_b * BILLION - embed_params(s)) + s.attn * attention_flops(s, n)


def comm_seconds(s: Scenario, B: ArrayLike, link_eff: float = 1.0) -> NDArray:
    """Tensor-parallel all-reduce time per step: two ring all-reduces of ``B*hidden*2`` bytes per layer,
    ``2*L*(2*(g-1)/g * B*hidden*2/(link_gbs*1e9*link_eff) + link_us*1e-6)``; 0 on one card (docs/method.md sections 2-5).
    Where the engine splits by whole layers, one hand-over of ``B*hidden*2`` bytes at each of the ``g - 1``
    boundaries: ``(g-1)*(B*hidden*2/(link_gbs*1e9*link_eff) + link_us*1e-6)``. Under a row split (``split=row``) the
    all-reduces' bytes and, for the hand-overs around every matrix product, ``L*(ROW_SPLIT_LAYER_US +
    ROW_SPLIT_CARD_US*(g-1))*1e-6`` in place of the links' latency (:func:`row_split_seconds`).

    ``link_eff`` is the fraction of the link's bandwidth reached: 1 in the decode step of docs/method.md;
    the throughput under load passes the profile's ``eff_link`` (:func:`calc.traffic.load_step_seconds`).
    """
    B = np.asarray(B, dtype=float)
    if s.gpus <= 1:
        return np.zeros_like(B)
    g = s.gpus
    if splits_layers(s):  # the activations handed on once at each of the g - 1 boundaries
        return (g - 1) * (B * s.hidden * 2 / (s.link_gbs * BILLION * link_eff) + s.link_us * US)
    volume = 2 * (g - 1) / g * B * s.hidden * 2 / (s.link_gbs * BILLION * link_eff)
    if row_split(s):  # every product's hand-overs, synchronised with each card
        return 2 * s.layers * volume + row_split_seconds(s)
    return 2 * s.layers * (volume + s.link_us * US)


def row_split_seconds(s: Scenario) -> float:
    """The hand-overs of a row split in one decode step, seconds: ``L*(ROW_SPLIT_LAYER_US + ROW_SPLIT_CARD_US*(g-1))
    *1e-6`` at the clock of the cards they were worked out on (``ROW_SPLIT_GHZ``), times ``ROW_SPLIT_GHZ /
    clock_ghz`` on a card of known boost clock: short kernels and waits, a count of clock cycles (docs/method.md
    section 5; :data:`calc.engines.ROW_SPLIT_LAYER_US`). 0 unless :func:`row_split`."""
    if not row_split(s):
        return 0.0
    clock = engines.ROW_SPLIT_GHZ / s.clock_ghz if s.clock_ghz else 1.0
    return s.layers * (engines.ROW_SPLIT_LAYER_US + engines.ROW_SPLIT_CARD_US * (s.gpus - 1)) * clock * US


def overlapped_seconds(s: Scenario, memory_s: ArrayLike, compute_s: ArrayLike) -> NDArray:
    """A step's memory and arithmetic together: ``max(t_mem, t_cmp) + (1 - overlap) * min(t_mem, t_cmp)``, seconds,
    arrays broadcast. ``overlap`` = 1 is the roofline's ``max`` (docs/method.md section 3); below 1 a step whose two
    times are close pays part of both (docs/method.md section 8; fitted in docs/calibration.md section 3)."""
    memory_s, compute_s = np.asarray(memory_s, dtype=float), np.asarray(compute_s, dtype=float)
    both = np.maximum(memory_s, compute_s)
    if s.overlap >= 1:
        return both
    return both + (1.0 - s.overlap) * np.minimum(memory_s, compute_s)


@dataclass(frozen=True)
class StepParts:
    """The parts of one decode step, each in seconds (arrays broadcast over batch and context)."""

    weights_s: NDArray   # reading the weights a step touches
    cache_s: NDArray     # reading the KV cache (0 with attn=0)
    memory_s: NDArray    # weights_s + cache_s
    compute_s: NDArray   # matrix arithmetic at the effective peak
    comm_s: NDArray      # tensor-parallel all-reduces, not overlapped
    step_s: NDArray      # overlapped_seconds(memory_s, compute_s) + comm_s + fixed_s
    fixed_s: NDArray = 0.0  # the engine's fixed time per step, fixed_step_seconds (docs/method.md section 3.4)

    @property
    def compute_bound(self) -> NDArray:
        """True where arithmetic, not memory, sets the step."""
        return self.compute_s > self.memory_s


def step_parts(s: Scenario, B: ArrayLike, n: ArrayLike | None = None) -> StepParts:
    """Decode step of ``B`` sequences at context ``n`` (default ``s.ctx``), docs/method.md.

    ``t_mem = Wr(B)/(g*bw*eff_bw) + a*B*Cr(n)/(g*bw*eff_kv)`` (``Cr`` = :func:`cache_bytes_read`, ``Cg`` unless the
    engine re-reads KV heads), ``t_cmp = B*(2*(Pa - Pe) + a*Af(n))/F`` with ``F = g*tflops*eff_flops`` (times
    ``eff_fp4`` at ``compute=fp4``, ``eff_fp8`` at ``compute=fp8``),
    ``step = max(t_mem, t_cmp) + (1 - overlap)*min(t_mem, t_cmp) + t_comm(B) + t_fix`` (:func:`overlapped_seconds`,
    :func:`fixed_step_seconds`); packed weights are read at
    ``eff_dequant`` of ``eff_bw`` (:func:`weight_read_seconds`).
    """
    B = np.asarray(B, dtype=float)
    n = s.ctx if n is None else n
    pk = peaks(s)
    weights_s = weight_read_seconds(s, B)
    cache_s = s.attn * B * cache_bytes_read(s, n) / pk.kv
    memory_s = weights_s + cache_s
    compute_s = B * _flops_per_token(s, n) / pk.flops
    comm_s = comm_seconds(s, B)
    fixed_s = fixed_step_seconds(s, B)
    return StepParts(weights_s, cache_s, memory_s, compute_s, comm_s,
                     overlapped_seconds(s, memory_s, compute_s) + comm_s + fixed_s, fixed_s)


def accepted_per_round(k: int, alpha: float) -> float:
    """Tokens a sequence keeps per speculative round: ``tau = (1 - alpha**(k+1))/(1 - alpha)`` (the accepted
    drafts plus the target's own token; Leviathan et al. 2023, "Fast Inference from Transformers via Speculative
    Decoding"). ``k`` drafts, acceptance ``alpha`` in [0, 1)."""
    return (1 - alpha ** (k + 1)) / (1 - alpha)


@dataclass(frozen=True)
class Speculative:
    """Speculative decoding at batch ``B`` and context ``n`` (docs/method.md section 9); seconds and tokens/s."""

    verify_s: NDArray    # t_v: the target checks k + 1 tokens per sequence in one pass
    draft_s: NDArray     # t_d = k*c*step(B)
    tokens: float        # tau, tokens kept per sequence per round
    tok_s: NDArray       # B*tau/(t_v + t_d)
    tpot_s: NDArray      # (t_v + t_d)/tau


def speculative(s: Scenario, B: ArrayLike, n: ArrayLike | None = None) -> Speculative:
    """One speculative round of ``k = spec_k`` drafts for ``B`` sequences at context ``n`` (default ``s.ctx``).

    ``t_v = M(Wr((k+1)*B)/(g*bw*eff_bw) + a*B*Cg(n)/(g*bw*eff_kv), (k+1)*t_cmp(B)) + t_comm((k+1)*B)
    + t_fix`` (``M``: :func:`overlapped_seconds`, the roofline's max at ``overlap`` 1; :func:`fixed_step_seconds`; the cache is read once for the k + 1 tokens; an MoE touches the experts of
    all of them),
    ``t_d = k*spec_c*step(B)``, ``tau`` from :func:`accepted_per_round`. With ``k = 0`` every figure is the plain
    step's. Arrays broadcast over ``B`` and ``n``.
    """
    B = np.asarray(B, dtype=float)
    n = s.ctx if n is None else n
    k = int(s.spec_k)
    plain = step_parts(s, B, n)
    if k == 0:  # no drafts: the round is the plain step (the general form below gives the same, read again)
        zero = np.zeros_like(plain.step_s)
        return Speculative(plain.step_s, zero, 1.0, B / plain.step_s, plain.step_s)
    memory_s = weight_read_seconds(s, (k + 1) * B) + plain.cache_s
    verify_s = (overlapped_seconds(s, memory_s, (k + 1) * plain.compute_s) + comm_seconds(s, (k + 1) * B)
                + fixed_step_seconds(s, (k + 1) * B))
    draft_s = k * s.spec_c * plain.step_s
    tau = accepted_per_round(k, s.spec_alpha)
    round_s = verify_s + draft_s
    return Speculative(verify_s, draft_s, tau, B * tau / round_s, round_s / tau)


def step_seconds(s: Scenario, B: ArrayLike, n: ArrayLike | None = None) -> NDArray:
    """Decode step time in seconds (see :func:`step_parts`)."""
    return step_parts(s, B, n).step_s


def break_even_batch(s: Scenario, n: ArrayLike | None = None) -> NDArray:
    """Batch at which compute time equals memory time, as float array over ``n`` (NaN: none exists).

    Dense: ``be = (Wr/BW_w) / ((2*(Pa - Pe) + a*Af)/F - a*Cg(n)/BW_kv)`` when the denominator is positive
    (docs/method.md, each part at its own effective peak). MoE: the root of ``t_cmp(B) = t_mem(B)`` for
    real ``B > 0``; ``t_cmp - t_mem`` is convex in ``B`` and non-positive at 0, so the root is unique when the
    slope at infinity is positive, and found by bisection to a relative 1e-13 (docs/method.md sections 2-5).
    """
    n = np.asarray(s.ctx if n is None else n, dtype=float)
    pk = peaks(s)
    F, BWkv = pk.flops, pk.kv
    slope = _flops_per_token(s, n) / F - s.attn * cache_bytes_read(s, n) / BWkv  # d(t_cmp - t_mem)/dB at B -> inf
    positive = slope > 0
    safe_slope = np.where(positive, slope, 1.0)
    if not s.experts:
        be = weight_read_seconds(s, 1.0) / safe_slope
        return np.where(positive, be, np.nan)

    def gap(B: NDArray) -> NDArray:
        return B * _flops_per_token(s, n) / F - weight_read_seconds(s, B) - s.attn * B * cache_bytes_read(s, n) / BWkv

    lo = np.zeros_like(n)
    # gap(B) >= B*slope - (every resident weight read once) > 0 here, so the root lies below.
    hi = 2 * resident_weight_seconds(s) / safe_slope + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        up = gap(mid) > 0
        hi = np.where(up, mid, hi)
        lo = np.where(up, lo, mid)
        if np.all(hi - lo <= 1e-13 * hi):
            break
    return np.where(positive, 0.5 * (lo + hi), np.nan)


def none_if_nan(x: ArrayLike) -> float | None:
    """A scalar figure as a float, or None where it cannot exist (NaN)."""
    value = float(x)
    return None if np.isnan(value) else value


@functools.lru_cache(maxsize=256)
def break_even(s: Scenario, n: int | None = None) -> float | None:
    """Scalar break-even batch at context ``n`` (default ``s.ctx``), or None when the step never
    becomes compute-bound."""
    return none_if_nan(break_even_batch(s, s.ctx if n is None else n))


def rent_usd_hr(s: Scenario) -> float:
    """The rent paid per card-hour: the quote less the commitment discount, ``usd_hr*(1 - discount)``
    (docs/method.md section 9); NaN when the card has no price."""
    return np.nan if s.usd_hr is None else s.usd_hr * (1 - s.discount)


def cost_per_mtok(s: Scenario, tok_s: ArrayLike, duty: ArrayLike, replicas: ArrayLike = 1) -> tuple[NDArray, NDArray]:
    """(rent, upkeep) in USD per million tokens at throughput ``tok_s`` (tokens/s) and busy fraction ``duty`` of
    each of ``replicas`` replicas.

    ``rent = g*usd_hr/(3600*tok_s*duty)*1e6``; ``upkeep = upkeep/(replicas*tok_s*3600*hours*duty)*1e6``: the
    upkeep is one sum for all cards together (SPEC section 1), so the replicas of a fleet share it (docs/method.md
    sections 2 and 6; one replica carries it all, as in SPEC section 2, when ``replicas`` is 1). Arrays broadcast.
    Rent is NaN when the card has no price (``usd_hr`` None).
    """
    tok_s = np.asarray(tok_s, dtype=float)
    duty = np.asarray(duty, dtype=float)
    rent = s.gpus * rent_usd_hr(s) / (SECONDS_PER_HOUR * tok_s * duty) * MILLION
    upkeep = s.upkeep / (np.asarray(replicas, dtype=float) * tok_s * SECONDS_PER_HOUR * s.hours * duty) * MILLION
    return rent, upkeep


def monthly_rent_usd(s: Scenario, replicas: ArrayLike = 1) -> NDArray:
    """Monthly rent of ``replicas`` replicas, busy or not: ``replicas*g*usd_hr*hours`` (NaN when unpriced)."""
    return np.asarray(replicas, dtype=float) * s.gpus * rent_usd_hr(s) * s.hours


def monthly_usd(s: Scenario, replicas: ArrayLike = 1) -> NDArray:
    """Monthly cost of ``replicas`` replicas: rent plus upkeep, ``replicas*g*usd_hr*hours + upkeep``."""
    return monthly_rent_usd(s, replicas) + s.upkeep
