"""Independent reference implementation of docs/method.md (engine profiles, the throughput
under full load documented in docs/method.md section 8, and the long-prompt API tier).

Used only by the tests to cross-check ``calc.report``. It is written from the docs/method.md text and the
team's resolution rules alone, shares no code with the ``calc`` package except the raw preset
figures of ``calc.catalogue`` and the raw rows of ``calc/data/engines.csv`` and ``engine_errors.csv``
(read here with the csv module), and uses plain Python floats. Each function is one docs/method.md formula;
the comment after it names the docs/method.md section it comes from.
"""

from __future__ import annotations

import csv
import functools
import math
from pathlib import Path

from calc import catalogue

DATA = Path(__file__).resolve().parent.parent / "calc" / "data"
#: docs/method.md section 2.1: llama.cpp's GGUF block formats.
GGUF_FORMATS = frozenset({"q8_0", "q4_0", "q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k", "iq4_xs"})
#: docs/method.md section 2.1: the integer weight formats, whose checkpoints keep the embeddings and LM head in bf16.
INTEGER_FORMATS = frozenset({"int8", "int4", "int4-g128", "int4-g64"})
#: docs/method.md section 5: the formats llama.cpp cannot load, and the GGUF type a conversion gives each.
GGUF_COUNTERPART = {"int4": "q4_k_m", "int4-g128": "q4_k_m", "int4-g64": "q4_k_m", "int8": "q8_0", "fp8": "q8_0"}
with open(DATA / "engine_families.csv", newline="") as _f:  # docs/method.md section 8 `engine`: every profile id
    ENGINES = tuple(row["engine"] for row in csv.DictReader(_f))
with open(DATA / "engine_families.csv", newline="") as _f:  # docs/method.md section 8.2: each profile's engine
    ENGINE_BASE = {row["engine"]: row["base"] for row in csv.DictReader(_f)}
#: docs/calibration.md section 6: SGLang's efficiencies are vLLM's (fitted on vLLM's rows), so its thin band widens
#: to vLLM's and vLLM's rows kept out of the fit count against it.
SHARES_EFFICIENCIES = {"sglang": "vllm"}
DEFAULT_ENGINE = "vllm"  # docs/method.md section 8
# docs/method.md section 8.2: the constants of vLLM's and SGLang's memory accounting.
VLLM_NON_TORCH_GIB = 0.2  # memory outside PyTorch's allocator that appears during the profiling run
# by release family: bytes per logit element of the sampler profile, CUDA-graph reserve (GiB), MXFP4 expert layout
VLLM_RELEASES = {"vllm-0.21": (14.0, 0.5, "triton"), "vllm-2025": (38.0, 0.0, "marlin")}
# docs/method.md section 8.2: vLLM's V0 releases allocate as v0.10 to v0.14 do.
VLLM_RELEASES["vllm-v0"] = VLLM_RELEASES["vllm-2025"]
# a link naming no release (engine=vllm) is charged the family whose accounting leaves the smaller cache
SGLANG_CONTEXT_GIB = 0.3
SGLANG_P2P_INIT_GIB = 2.0  # per card, tensor parallel over a fabric of at least 100 GB/s (NVLink, xGMI)
SGLANG_LOAD_EXTRA_GIB = 0.3  # per card, beside the checkpoint
TRTLLM_CONTEXT_GIB = 0.75  # docs/method.md 8.2: TensorRT-LLM 2024's CUDA context and libraries, per card
TRTLLM_RUNTIME_B, TRTLLM_DECODER_B = 9.25, 19.9  # bytes per sequence of max_batch_size and vocabulary token
# docs/method.md 8.2: the current TensorRT-LLM (its PyTorch backend) sizes the cache from a profiling run: activation
# bytes per token and hidden unit by cards (1, 2, more), NCCL GiB by cards, and the rest of its runtime, per card.
TRTLLM_PROFILED = ("trtllm",)
TRTLLM_TORCH_ACT = {1: 11.0, 2: 6.5}
TRTLLM_TORCH_ACT_MANY = 5.0
TRTLLM_TORCH_NCCL = {1: 0.0, 2: 0.333984375}
TRTLLM_TORCH_NCCL_MANY = 0.3828125
TRTLLM_TORCH_REST_GIB = 3.5
# docs/method.md 8.2: llama.cpp's CUDA context (GiB per card), its cells' padding, its physical batch, the f32 tensors
# of the hidden width its compute buffer holds beside the output head, beside the attention and at least; the
# builds without flash attention by default, and those whose server reserves logits per slot.
LLAMACPP_CONTEXT_GIB, LLAMACPP_PAD, LLAMACPP_UB = 0.3, 256, 512
LLAMACPP_WIDTHS = (1, 4, 15)
NO_FLASH = ("llamacpp-2024", "llamacpp-vulkan-2025")
SLOT_OUTPUTS = ("llamacpp", "llamacpp-vulkan")
DEFAULT_VOCAB = 131072  # docs/method.md section 1: a custom model with a tied table
# docs/method.md section 8 profile figures (tok_us and eff_link: the throughput under load, docs/method.md s8;
# layer_us: fixed time per layer per step; eff_dequant: share of eff_bw kept on packed weights;
# kv_reread: share of the per-query-head re-reads of each KV head a decode kernel pays; eager_us: time per layer
# added when the kernels are launched one by one, without CUDA graphs; eff_fp4: share of eff_flops kept at
# compute=fp4; eff_fp8: share of eff_flops a decode step keeps at compute=fp8; overlap: share of the shorter of a
# step's memory and arithmetic times hidden under the longer; expert_us: fixed time per routed expert per MoE layer per prefill chunk; eff_prefill: share of the
# dense peak a prefill's arithmetic reaches; layer_ghz: the card clock layer_us is stated at, 0 where the time
# per layer does not follow the clock).
PROFILE_KEYS = ("eff_bw", "eff_kv", "eff_flops", "step_us", "mem_util", "max_seqs", "overhead_gib", "tok_us",
                "eff_link", "layer_us", "eff_dequant", "kv_reread", "eager_us", "eff_fp4", "expert_us", "eff_prefill",
                "layer_ghz", "eff_fp8", "overlap")
# docs/method.md section 3.4: the llama.cpp builds of before May 2024 captured no CUDA graphs, and llama.cpp's CUDA
# backend captures one for a step of a single token only.
NO_GRAPHS = ("llamacpp-2024",)
# docs/method.md section 5: llama.cpp's row split, priced for the 2023-2024 builds only: per layer 420 us plus 117 us
# per card beyond the first, at a 1.41 GHz boost clock (a card of known clock_ghz takes them times 1.41/clock_ghz).
ROW_SPLIT_ENGINES = ("llamacpp-2024",)
ROW_LAYER_US, ROW_CARD_US, ROW_GHZ = 420.0, 117.0, 1.41
ONE_TOKEN_GRAPHS = ("llamacpp", "llamacpp-2024")


@functools.cache
def profiles() -> dict:
    """{engine: {figure: value}} straight from calc/data/engines.csv (max_seqs empty = no cap)."""
    out = {e: {} for e in ENGINES}
    with open(DATA / "engines.csv", newline="") as f:
        for row in csv.DictReader(f):
            v = row["value"].strip()
            value = None if v == "" else float(v)
            if row["figure"] == "max_seqs" and value is not None:
                value = int(value)
            out[row["engine"]][row["figure"]] = value
    return out


@functools.cache
def error_bands(basis: str = "leave-one-source-out") -> dict:
    """{engine: [{metric, n, signed_median_pct, median_pct, p90_pct, max_pct, basis}]}: the rows of
    calc/data/engine_errors.csv on ``basis`` (docs/method.md section 8: the report's error band is cross-validated;
    docs/calibration.md section 5: "kept-out" is the shipped figures on the rows kept out of the fit)."""
    out = {e: [] for e in ENGINES}
    order = ("step_ms", "max_throughput_tok_s")
    with open(DATA / "engine_errors.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["basis"] != basis:
                continue
            out[row["engine"]].append({"metric": row["metric"], "n": int(row["n"]),
                                       "signed_median_pct": float(row["signed_median_pct"]),
                                       "median_pct": float(row["median_pct"]), "p90_pct": float(row["p90_pct"]),
                                       "max_pct": float(row["max_pct"]), "basis": row["basis"]})
    bands = {e: sorted(b, key=lambda x: order.index(x["metric"])) or None for e, b in out.items()}
    # docs/calibration.md section 5: a family without rows that shares every fitted figure carries its engine's
    prof = profiles()
    for e in ENGINES:
        b = ENGINE_BASE[e]
        if bands[e] is None and b != e and all(prof[e][k] == prof[b][k] for k in ("eff_bw", "eff_kv", "eff_flops",
                                                                                  "step_us", "tok_us", "eff_link")):
            bands[e] = bands[b]
    return bands

GIB = 2**30  # docs/method.md intro: GiB = 2**30 bytes

# docs/method.md section 1: weight formats, bits per weight with scales included.
WEIGHT_BITS = {
    "fp32": 32.0, "bf16": 16.0, "fp16": 16.0, "fp8": 8.0, "int8": 8.0, "int4": 4.0,
    "int4-g128": 4.25, "int4-g64": 4.5, "q8_0": 8.5, "q4_0": 4.5,
    # docs/method.md section 8: MX and NV block formats; GGUF K-quant mixes as whole-file bytes*8 over Llama-3.1-70B's
    # 70.554e9 weights (q2_k: llama.cpp's Llama-3.1-8B figure).
    "mxfp4": 4 + 8 / 32, "nvfp4": 4 + 8 / 16, "q2_k": 3.1593,
    "q3_k_m": round(34.27e9 * 8 / 70.554e9, 4), "q4_k_m": round(42.52e9 * 8 / 70.554e9, 4),
    "q5_k_m": round(49.95e9 * 8 / 70.554e9, 4), "q6_k": round(57.89e9 * 8 / 70.554e9, 4),
    "iq4_xs": round(37.90e9 * 8 / 70.554e9, 4),
}
# docs/method.md section 1: KV-cache element formats.
KV_BITS = {"fp16": 16.0, "bf16": 16.0, "fp8": 8.0, "int8": 8.0, "int4": 4.0}
COMPUTES = ("bf16", "fp16", "fp8", "int8", "fp4")  # docs/method.md sections 2-5 `compute`
DEFAULT_MODEL = "llama-3.1-70b"  # docs/method.md section 1 `model` default
DEFAULT_CARD = "h100-sxm"  # docs/method.md section 1 `card` default
CUSTOM_LINK_GBS = 64.0  # docs/method.md sections 2-5 `link_gbs` custom default (PCIe 5.0 x16)
# Contract: a card without a rent quote makes "every USD figure in the report" null. Read
# literally that includes the figures that do not use the rent (usd_per_mtok_upkeep,
# api_usd_month); set False to null only the figures that need usd_hr.
NULL_EVERY_USD_FIGURE = False

LINK_KEYS = (
    # docs/method.md section 1
    "model", "params_b", "active_b", "layers", "heads", "kv_heads", "head_dim", "card", "mem_gib",
    "bw_tbs", "tflops", "gpus", "weights", "weights_experts", "kv", "ctx", "batch", "eff", "overhead_gib", "usd_hr",
    "duty", "upkeep", "hours", "attn",
    # docs/method.md sections 2-5
    "hidden", "experts", "experts_active", "kv_latent", "window", "window_layers", "compute",
    "link_gbs", "link_us", "embed_b", "clock_ghz", "arch",
    # docs/method.md sections 2.1, 2.3 and 8.2: checkpoint parts, linear attention, the engine's memory
    "vocab", "linear_layers", "state_kib", "state_layers", "torch_gib", "weights_attn", "weights_embed", "layers_full",
    "max_batched_tokens", "cuda_graphs", "flash_attn", "dequant_q8", "split",
    # docs/method.md section 7
    "req_day", "in_tok", "out_tok", "peak", "tpot_ms", "api", "api_in", "api_out",
    # docs/method.md section 8
    "engine", *PROFILE_KEYS, "eff_card",
    # SPEC section 8 (levers; docs/method.md section 9)
    "spec_k", "spec_alpha", "spec_c", "prefix_hit", "api_cached", "discount",
    # SPEC section 9
    "card_usd", "server_frac", "years", "wacc", "residual", "power_w", "idle_frac", "pue", "usd_kwh", "colo_usd",
    "profile", "autoscale", "min_replicas", "buy_lot",
    # docs/method.md section 8.1: a finite benchmark run
    "run_prompts", "out_spread", "out_max",
)


# docs/method.md section 1: a card figure column of calc/data/cards.csv that carries its own `<column>_source`
# column, other than those named above, is a link key too: the link's positive number, else the card preset's
# figure (none for a custom card or an empty cell).
_CARD_FIGURES_BY_NAME = ("usd_hr", "card_usd")


def extra_card_keys() -> tuple[str, ...]:
    with open(DATA / "cards.csv", newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    return tuple(c for c in header if f"{c}_source" in header and c not in _CARD_FIGURES_BY_NAME)


def _card_cell(card_id: str, column: str) -> float | None:
    with open(DATA / "cards.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["id"] == card_id:
                text = (row.get(column) or "").strip()
                return float(text) if text else None
    return None


def link_keys() -> tuple[str, ...]:
    """Every link key the reference model reads: the fixed list and the card figure columns."""
    return LINK_KEYS + tuple(k for k in extra_card_keys() if k not in LINK_KEYS)


# --------------------------------------------------------------------------------------------
# Parsing: every accepted range of the docs/method.md section 1, s5 and s6 tables. Errors name the key.
# --------------------------------------------------------------------------------------------

def _bad(key, value, accepted):
    raise ValueError(f"{key}: {value!r} is not accepted ({accepted})")


def _float(key, value):
    if isinstance(value, bool):
        _bad(key, value, "a number")
    try:
        x = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        _bad(key, value, "a number")
    if not math.isfinite(x):
        _bad(key, value, "a finite number")
    return x


def _int(key, value):
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    x = _float(key, value)
    if not x.is_integer():
        _bad(key, value, "an integer")
    return int(x)


def _real(p, key, default, lo=None, lo_open=False, hi=None):
    """A real key with `lo <(=) x <= hi`; `default` when absent."""
    if key not in p:
        return default
    x = _float(key, p[key])
    if lo is not None and (x < lo or (lo_open and x == lo)):
        _bad(key, p[key], f"{'>' if lo_open else '>='} {lo}")
    if hi is not None and x > hi:
        _bad(key, p[key], f"<= {hi}")
    return x


def _integer(p, key, default, lo, hi=None):
    if key not in p:
        return default
    x = _int(key, p[key])
    if x < lo or (hi is not None and x > hi):
        _bad(key, p[key], f"integer {lo}..{hi if hi is not None else ''}")
    return x


def _choice(p, key, default, choices):
    v = p.get(key, default)
    if not isinstance(v, str) or v.strip() not in choices:
        _bad(key, v, "one of " + ", ".join(sorted(choices)))
    return v.strip()


def _bits(p, key, default, table):
    """docs/method.md section 1 `weights`/`kv`: a format name, or bits per element 1..32."""
    v = p.get(key, default)
    if isinstance(v, str) and v.strip().lower() in table:
        return v.strip().lower(), table[v.strip().lower()]
    x = _float(key, v)
    if not 1 <= x <= 32:
        _bad(key, v, "a format name or bits 1..32")
    return v, x


# --------------------------------------------------------------------------------------------
# Resolution: presets, defaults (team contract "Scenario resolution rules"), consistency (docs/method.md sections 2-5).
# --------------------------------------------------------------------------------------------

def resolve(params) -> dict:
    """Every link key with the value used (user units); raises ValueError naming the key."""
    p = dict(params)
    models, cards, apis = catalogue.models(), catalogue.cards(), catalogue.apis()
    s = {}

    # Model shape (docs/method.md section 1, s5; contract: custom takes llama-3.1-70b's shape keys).
    s["model"] = _choice(p, "model", DEFAULT_MODEL, set(models) | {"custom"})
    custom = s["model"] == "custom"
    base = models[DEFAULT_MODEL if custom else s["model"]]
    s["params_b"] = _real(p, "params_b", float(base["params_b"]), 0, lo_open=True)
    s["layers"] = _integer(p, "layers", int(base["layers"]), 1)
    s["kv_heads"] = _integer(p, "kv_heads", int(base["kv_heads"]), 1)
    s["head_dim"] = _integer(p, "head_dim", int(base["head_dim"]), 1)
    heads_default = s["kv_heads"] if (custom and "kv_heads" in p) else int(base["heads"])
    s["heads"] = _integer(p, "heads", heads_default, 1)
    hidden_default = s["heads"] * s["head_dim"] if custom else int(base["hidden"])
    s["hidden"] = _integer(p, "hidden", hidden_default, 1)

    def shape(key):  # custom: 0 ("absent"); preset: preset's
        return 0 if custom else base[key]

    s["experts"] = _integer(p, "experts", int(shape("experts")), 0)
    if s["experts"] == 1:
        _bad("experts", p["experts"], "integer >= 2, or 0 for dense")
    s["experts_active"] = _integer(p, "experts_active", int(shape("experts_active")), 0)
    s["kv_latent"] = _integer(p, "kv_latent", int(shape("kv_latent")), 0)
    s["window"] = _integer(p, "window", int(shape("window")), 0)
    s["window_layers"] = _integer(p, "window_layers", int(shape("window_layers")), 0)
    s["embed_b"] = _real(p, "embed_b", float(shape("embed_b")), 0)
    # docs/method.md section 1: vocab from the preset, else the untied table's rows, else the default.
    derived_vocab = round(s["embed_b"] * 1e9 / s["hidden"]) if s["embed_b"] > 0 else DEFAULT_VOCAB
    s["vocab"] = _integer(p, "vocab", derived_vocab if custom else int(base["vocab"]), 1)
    s["linear_layers"] = _integer(p, "linear_layers", int(shape("linear_layers")), 0)
    # docs/method.md section 2.7: the layers holding a state are the linear layers unless the link says more
    s["state_layers"] = _integer(p, "state_layers", s["linear_layers"], 0)
    if "state_kib" in p:
        s["state_kib"] = _real(p, "state_kib", None, 0)
    elif not custom and base["linear_layers"] and "hidden" not in p:
        s["state_kib"] = float(base["state_kib"])
    else:
        s["state_kib"] = s["hidden"] / 2 if s["state_layers"] else 0.0  # 2*hidden*128 16-bit values
    # contract: active_b default = the preset's active_b for an MoE preset, else params_b
    # (docs/method.md section 1 "= params_b"; a custom MoE has no preset figure to take).
    moe_preset = not custom and s["experts"] > 0
    active_default = float(base["active_b"]) if moe_preset else s["params_b"]
    s["active_b"] = _real(p, "active_b", active_default, 0, lo_open=True)

    # Card (docs/method.md section 1, s5; contract: custom takes h100-sxm's figures, link 64 GB/s).
    s["card"] = _choice(p, "card", DEFAULT_CARD, set(cards) | {"custom"})
    card = cards[DEFAULT_CARD if s["card"] == "custom" else s["card"]]
    s["compute"] = _choice(p, "compute", "bf16", set(COMPUTES))
    s["mem_gib"] = _real(p, "mem_gib", float(card["mem_gib"]), 0, lo_open=True)
    # docs/method.md section 8.2: the total CUDA reports, the preset's where the link keeps its memory.
    torch_default = card.get("torch_gib") if s["card"] != "custom" and "mem_gib" not in p else None
    torch_default = s["mem_gib"] if torch_default is None else min(float(torch_default), s["mem_gib"])
    s["torch_gib"] = _real(p, "torch_gib", torch_default, 0, lo_open=True)
    if s["torch_gib"] > s["mem_gib"]:
        _bad("torch_gib", s["torch_gib"], "<= mem_gib")
    s["bw_tbs"] = _real(p, "bw_tbs", float(card["bw_tbs"]), 0, lo_open=True)
    # docs/method.md sections 2-5: tflops defaults to the card's dense peak at `compute`; a (preset) card without
    # that precision is an error naming `compute`. A custom card given `tflops` has it.
    peak = card["peaks"].get(s["compute"])
    if peak is None and (s["card"] != "custom" or "tflops" not in p):
        _bad("compute", s["compute"], "a precision this card has units for")
    s["tflops"] = _real(p, "tflops", None if peak is None else float(peak), 0, lo_open=True)
    usd = card["usd_hr"]
    s["usd_hr"] = _real(p, "usd_hr", None if usd is None else float(usd), 0)
    link = CUSTOM_LINK_GBS if s["card"] == "custom" else card["link_gbs"]
    s["link_gbs"] = _real(p, "link_gbs", None if link is None else float(link), 0, lo_open=True)
    s["link_us"] = _real(p, "link_us", 10.0, 0)

    # Run settings (docs/method.md section 1).
    s["gpus"] = _integer(p, "gpus", 1, 1)
    # docs/method.md section 8: a preset may ship its own formats; experts take `weights` when only that is given.
    # docs/method.md section 5: llama.cpp loads GGUF files, so a default it cannot load is its GGUF counterpart.
    gguf = ENGINE_BASE.get(str(p.get("engine", DEFAULT_ENGINE)).strip()) == "llamacpp"

    def loads(fmt):
        return GGUF_COUNTERPART.get(fmt, fmt) if gguf else fmt
    shipped = not custom and base.get("weights")
    s["weights"], s["_bpw"] = _bits(p, "weights", loads(base["weights"] if shipped else "int4-g128"), WEIGHT_BITS)
    ships = shipped and s["weights"] == base["weights"]  # the preset's own format kept (and loaded by the engine)
    experts_default = loads(base["weights_experts"]) if ships else s["weights"]
    s["weights_experts"], s["_bpw_e"] = _bits(p, "weights_experts", experts_default, WEIGHT_BITS)
    # docs/method.md section 2.1: the other parts a checkpoint keeps apart follow the same rule.
    # docs/method.md section 2.1: an integer checkpoint (GPTQ, AWQ, W8A8) keeps its embeddings and LM head in bf16.
    plain = {"weights_attn": s["weights"],
             "weights_embed": "bf16" if s["weights"] in INTEGER_FORMATS else s["weights"]}
    for key, col in (("weights_attn", "_bpw_a"), ("weights_embed", "_bpw_emb")):
        shipped_part = base[key] if ships else None
        s[key], s[col] = _bits(p, key, loads(shipped_part) if shipped_part else plain[key], WEIGHT_BITS)
    s["layers_full"] = _integer(p, "layers_full", int(base["layers_full"]) if ships else 0, 0)
    s["kv"], s["_kvb"] = _bits(p, "kv", "fp16", KV_BITS)
    # SPEC section 10: ctx=auto (the default) is a request of the traffic, in_tok + out_tok (set once those are read)
    s["_ctx_auto"] = str(p.get("ctx", "auto")).strip().lower() == "auto"
    s["ctx"] = None if s["_ctx_auto"] else _integer(p, "ctx", None, 1)
    if str(p.get("batch", "auto")).strip() == "auto":
        s["batch"] = "auto"
    else:
        s["batch"] = _integer(p, "batch", None, 1)
    s["eff"] = _real(p, "eff", 0.7, 0, lo_open=True, hi=1)
    # docs/method.md section 8: the engine profile. Each efficiency: its own key, else the link's eff, else the profile's;
    # overhead_gib and every other figure: the link's, else the profile's.
    s["engine"] = _choice(p, "engine", DEFAULT_ENGINE, set(ENGINES))
    prof = profiles()[s["engine"]]
    for key in ("eff_bw", "eff_kv", "eff_flops"):
        s[key] = _real(p, key, s["eff"] if "eff" in p else prof[key], 0, lo_open=True, hi=1)
    # docs/method.md section 8: the card family (a preset's own from card_arch.csv, refused if the link names another;
    # a custom card's from the link, else unknown) and its share of both bandwidth figures (card_families.csv): the
    # link's, else 1 for the roofline, else the family's under the profiles it names (1 for an unknown family or
    # another profile); it multiplies eff_bw and eff_kv whether the profile's or the link's.
    families = _card_families()
    own = _card_arch().get(s["card"], "").lower() or None
    arch = _choice({k: str(v).strip().lower() for k, v in p.items() if k == "arch"}, "arch", own or "unknown",
                   set(families) | {"unknown"})
    if own is not None and arch != own:
        _bad("arch", p["arch"], f"{own}, the card's own family")
    s["arch"] = arch
    _, share, under = families.get(arch, (None, 1.0, ()))
    s["eff_card"] = _real(p, "eff_card", 1.0 if s["engine"] == "roofline" or (under and s["engine"] not in under)
                          else share, 0, lo_open=True, hi=1)
    # docs/method.md section 8: a link that gives eff_flops or eff sets the arithmetic's share at every precision
    s["eff_fp4"] = _real(p, "eff_fp4", 1.0 if ("eff_flops" in p or "eff" in p) else prof["eff_fp4"], 0, lo_open=True,
                         hi=1)
    s["eff_fp8"] = _real(p, "eff_fp8", 1.0 if ("eff_flops" in p or "eff" in p) else prof["eff_fp8"], 0, lo_open=True,
                         hi=1)
    # docs/method.md section 8: a link that gives eff_flops or eff prices the step at the roofline's max (overlap 1)
    s["overlap"] = _real(p, "overlap", 1.0 if ("eff_flops" in p or "eff" in p) else prof["overlap"], 0, hi=1)
    # docs/method.md section 8: a link that gives eff_flops (else eff) sets the prefill's share too
    s["eff_prefill"] = _real(p, "eff_prefill", s["eff_flops"] if "eff_flops" in p else
                             (s["eff"] if "eff" in p else prof["eff_prefill"]), 0, lo_open=True, hi=1)
    # docs/calibration.md section 7: a link that pins step_us pins expert_us too (0 unless given)
    s["expert_us"] = _real(p, "expert_us", 0.0 if "step_us" in p else prof["expert_us"], 0)
    s["step_us"] = _real(p, "step_us", prof["step_us"], 0)
    s["mem_util"] = _real(p, "mem_util", prof["mem_util"], 0, lo_open=True, hi=1)
    s["max_seqs"] = _integer(p, "max_seqs", prof["max_seqs"], 1, 65536)
    s["overhead_gib"] = _real(p, "overhead_gib", prof["overhead_gib"], 0)  # None: the engine's own accounting
    s["cuda_graphs"] = _integer(p, "cuda_graphs", 0 if s["engine"] in NO_GRAPHS else 1, 0, 1)
    # docs/method.md section 8.2: the tokens one step may hold, by engine (vLLM's by card).
    eng = ENGINE_BASE[s["engine"]]
    if eng == "vllm":
        tokens_default = 8192 if s["torch_gib"] >= 70 and "a100" not in s["card"] else 2048
    else:
        tokens_default = LLAMACPP_UB if eng == "llamacpp" else 8192
    s["max_batched_tokens"] = _integer(p, "max_batched_tokens", tokens_default, 1)
    s["flash_attn"] = _integer(p, "flash_attn", 0 if s["engine"] in NO_FLASH else 1, 0, 1)
    # docs/method.md section 5: llama.cpp's --split-mode, whole layers by default; rows priced for the 2023-2024 builds
    s["split"] = _choice(p, "split", "layer", ("layer", "row"))
    # docs/method.md section 8.2: vLLM's default by card (its V0 family's profile fixes 256)
    if eng == "vllm" and "max_seqs" not in p and profiles()[s["engine"]]["max_seqs"] is None:
        s["max_seqs"] = min(1024 if s["torch_gib"] >= 70 and "a100" not in s["card"] else 256, s["max_batched_tokens"])
    s["tok_us"] = _real(p, "tok_us", prof["tok_us"], 0)
    s["eff_link"] = _real(p, "eff_link", prof["eff_link"], 0, lo_open=True, hi=1)
    s["layer_us"] = _real(p, "layer_us", prof["layer_us"], 0)
    s["eff_dequant"] = _real(p, "eff_dequant", prof["eff_dequant"], 0, lo_open=True, hi=1)
    # docs/calibration.md section 7: Q8_0 blocks are read at eff_dequant, except beside a link's own eff_dequant
    s["dequant_q8"] = _integer(p, "dequant_q8", 0 if "eff_dequant" in p else 1, 0, 1)
    s["kv_reread"] = _real(p, "kv_reread", prof["kv_reread"], 0, hi=1)
    # a link that gives layer_us and not eager_us pins the whole time per layer (docs/calibration.md section 7)
    s["eager_us"] = _real(p, "eager_us", 0.0 if "layer_us" in p else prof["eager_us"], 0)
    # docs/method.md section 3.4: a link's own layer_us pins the time per layer, so it does not follow the clock
    s["layer_ghz"] = _real(p, "layer_ghz", 0.0 if "layer_us" in p else prof["layer_ghz"], 0, hi=10)
    # SPEC section 10: duty=auto (the default) is the traffic's implied duty, known once the traffic is evaluated
    s["_duty_auto"] = str(p.get("duty", "auto")).strip().lower() == "auto"
    s["duty"] = None if s["_duty_auto"] else _real(p, "duty", None, 0, lo_open=True, hi=1)
    s["upkeep"] = _real(p, "upkeep", 4000.0, 0)
    s["hours"] = _real(p, "hours", 720.0, 0, lo_open=True)
    s["attn"] = _integer(p, "attn", 1, 0, 1)

    # Traffic and API (docs/method.md section 7; contract: api default = the model preset's api_ref).
    s["req_day"] = _real(p, "req_day", 10000.0, 0, lo_open=True)
    s["in_tok"] = _integer(p, "in_tok", 1000, 0)
    s["out_tok"] = _integer(p, "out_tok", 300, 1)
    if s["_ctx_auto"]:
        s["ctx"] = max(1, s["in_tok"] + s["out_tok"])
    s["peak"] = _real(p, "peak", 3.0, 1)
    s["tpot_ms"] = _real(p, "tpot_ms", None, 0, lo_open=True)
    # docs/method.md section 1: a custom model takes the row of the catalogue model nearest its active parameters (by
    # ratio, the smaller on a tie) among the models priced by a row of their own.
    if custom:
        own = [m for m in models.values() if not m.get("api_ref_note")]
        near = min(own, key=lambda m: (abs(math.log(float(m["active_b"]) / s["active_b"])), float(m["active_b"])))
        api_default = near["api_ref"]
    else:
        api_default = base["api_ref"]
    s["api"] = _choice(p, "api", api_default, set(apis))
    s["api_in"] = _real(p, "api_in", float(apis[s["api"]]["api_in"]), 0)
    s["api_out"] = _real(p, "api_out", float(apis[s["api"]]["api_out"]), 0)

    # SPEC section 8: levers. api_cached: the link's, else the api row's cached price, else api_in.
    s["spec_k"] = _integer(p, "spec_k", 0, 0, 64)
    s["spec_alpha"] = _real(p, "spec_alpha", 0.7, 0, hi=0.999)
    s["spec_c"] = _real(p, "spec_c", 0.05, 0)
    s["prefix_hit"] = _real(p, "prefix_hit", 0.0, 0, hi=1)
    row_cached = apis[s["api"]].get("api_cached")
    s["api_cached"] = _real(p, "api_cached", float(row_cached) if row_cached is not None else s["api_in"], 0)
    s["discount"] = _real(p, "discount", 0.0, 0, hi=0.99)

    # SPEC section 9: owning, the day's profile, autoscaling.
    preset_card = s["card"] != "custom"
    s["card_usd"] = _real(p, "card_usd", card.get("card_usd") if preset_card else None, 0, lo_open=True)
    s["power_w"] = _real(p, "power_w", card.get("power_w") if preset_card else None, 0, lo_open=True)
    s["server_frac"] = _real(p, "server_frac", 0.4, 0)
    s["years"] = _real(p, "years", 4.0, 0, lo_open=True)
    s["wacc"] = _real(p, "wacc", 0.08, 0, hi=0.99)
    s["residual"] = _real(p, "residual", 0.1, 0, hi=0.99)
    s["idle_frac"] = _real(p, "idle_frac", 0.25, 0, hi=1)
    s["pue"] = _real(p, "pue", 1.4, 1)
    s["usd_kwh"] = _real(p, "usd_kwh", 0.12, 0)
    s["colo_usd"] = _real(p, "colo_usd", 0.0, 0)
    # docs/method.md section 3.4: the card's boost clock (GHz), unknown for a custom card unless the link gives it
    s["clock_ghz"] = _real(p, "clock_ghz", _card_cell(s["card"], "clock_ghz") if preset_card else None, 0.1, hi=10)
    for column in extra_card_keys():
        if column not in s:
            s[column] = _real(p, column, _card_cell(s["card"], column) if preset_card else None, 0, lo_open=True)
    s["autoscale"] = _integer(p, "autoscale", 0, 0, 1)
    s["min_replicas"] = _integer(p, "min_replicas", 1, 0)
    # docs/method.md section 7.8: an owned fleet is bought in whole units: a card on a fabric faster than 100 GB/s
    # comes on a baseboard of 8 (an H100 NVL on a bridged pair, a GB200 in a rack of 72); a PCIe or custom card alone.
    lot = 1
    if preset_card:
        lot = {"h100-nvl": 2, "gb200": 72}.get(s["card"], 8 if float(card["link_gbs"] or 0) > 100 else 1)
    s["buy_lot"] = _integer(p, "buy_lot", lot, 1, 1000)
    s["run_prompts"] = _integer(p, "run_prompts", 0, 0, 100_000)
    s["out_spread"] = _choice(p, "out_spread", "none", ("none", "exp"))
    s["out_max"] = _integer(p, "out_max", 0, 0, 10_000_000)
    if s["out_max"] and s["out_max"] < s["out_tok"]:  # docs/method.md 8.1: the longest reply is at least the mean
        _bad("out_max", s["out_max"], "0 or >= out_tok")
    s["_weights"] = None
    s["why"] = str(p.get("why", "") or "")
    prof = str(p.get("profile", "") or "").strip().lower()
    s["profile"] = prof if prof and prof != "none" else None
    if prof and prof != "none":
        named = catalogue.profiles()
        w = list(named[prof]) if prof in named else [_float("profile", x) for x in prof.split(",")]
        if len(w) != 24 or min(w) < 0 or not any(w):
            _bad("profile", p["profile"], "a shape name or 24 weights >= 0, not all 0")
        s["_weights"] = w
        s["peak"] = max(w) / (sum(w) / 24)  # SPEC section 9: the profile's peak replaces the peak key

    # docs/method.md sections 2-5 consistency rules, each naming its key.
    if s["kv_heads"] > s["heads"] or s["heads"] % s["kv_heads"]:
        _bad("kv_heads", s["kv_heads"], "a divisor of heads")
    if s["window_layers"] > s["layers"]:
        _bad("window_layers", s["window_layers"], "0..layers")
    if s["linear_layers"] + (s["window_layers"] if s["window"] else 0) > s["layers"]:  # named by the key given
        key = next((k for k in ("linear_layers", "window_layers", "layers") if k in p), "linear_layers")
        _bad(key, s[key], "linear_layers + window_layers <= layers")
    if not s["linear_layers"] <= s["state_layers"] <= s["layers"]:
        _bad("state_layers", s["state_layers"], "linear_layers..layers")
    if s["state_layers"] and s["state_kib"] < 1:
        key = "state_kib" if "state_kib" in p else "state_layers" if "state_layers" in p else "linear_layers"
        _bad(key, s[key], "state_kib >= 1 with layers holding a state")
    if s["layers_full"] > s["layers"]:
        _bad("layers_full", s["layers_full"], "0..layers")
    # docs/method.md section 5: engines that split heads refuse a size that does not divide them.
    g = s["gpus"]
    if g > 1 and ENGINE_BASE[s["engine"]] in ("vllm", "sglang", "trtllm"):
        if s["heads"] % g:
            _bad("gpus", g, "a divisor of the attention heads")
        if not s["kv_latent"] and s["kv_heads"] % g and g % s["kv_heads"]:
            _bad("gpus", g, "a divisor or a multiple of the KV heads")
    # docs/method.md section 5: TensorRT-LLM runs on NVIDIA cards and loads no GGUF file; llama.cpp has no Gaudi
    # backend.
    vendor = None if s["card"] == "custom" else card["vendor"]
    if ENGINE_BASE[s["engine"]] == "trtllm" and vendor not in (None, "NVIDIA"):
        _bad("engine", s["engine"], "an engine that runs on the card")
    if ENGINE_BASE[s["engine"]] == "llamacpp" and vendor == "Intel":
        _bad("engine", s["engine"], "an engine that runs on the card")
    # docs/method.md section 5: on a Mac's GPU (arch=apple) only llama.cpp runs (its Metal backend).
    if s["arch"] == "apple" and ENGINE_BASE[s["engine"]] not in ("llamacpp", "roofline"):
        _bad("arch", s["arch"], "a family the engine runs on")
    if s["split"] == "row" and s["engine"] not in ROW_SPLIT_ENGINES:
        _bad("split", s["split"], "row only under the llama.cpp builds of 2023-2024")
    # docs/method.md section 5: TensorRT-LLM before v0.17 and vLLM's V0 releases (CUDA 12.8 wheels came with v0.9.0)
    # have no Blackwell kernels.
    if s["engine"] in ("trtllm-v05", "trtllm-2023", "trtllm-2024", "vllm-v0") and s["card"] != "custom" and \
            _card_arch().get(s["card"], "").startswith("Blackwell"):
        _bad("engine", s["engine"], "a release that runs on the card")
    if ENGINE_BASE[s["engine"]] == "trtllm" and s["weights"] in GGUF_FORMATS:
        _bad("weights", s["weights"], "a format TensorRT-LLM loads")
    # docs/method.md section 5: MXFP4 checkpoints came with gpt-oss (2025-08-05), after these families' last release.
    mxfp4_predated = ("vllm-v0", "trtllm-v05", "trtllm-2023", "trtllm-2024", "trtllm-2025", "llamacpp-2024")
    if s["engine"] in mxfp4_predated and s["weights"] == "mxfp4":
        _bad("weights", s["weights"], "a format the release family loads")
    if ENGINE_BASE[s["engine"]] == "llamacpp" and s["weights"] in GGUF_COUNTERPART:
        _bad("weights", s["weights"], "a format llama.cpp loads")
    # docs/method.md section 5: a part the link puts in its own format must load too.
    for part in ("weights_experts", "weights_attn", "weights_embed"):
        if part in p and ENGINE_BASE[s["engine"]] == "trtllm" and s[part] in GGUF_FORMATS:
            _bad(part, s[part], "a format TensorRT-LLM loads")
        if part in p and ENGINE_BASE[s["engine"]] == "llamacpp" and s[part] in GGUF_COUNTERPART:
            _bad(part, s[part], "a format llama.cpp loads")
        if part in p and s["engine"] in mxfp4_predated and s[part] == "mxfp4":
            _bad(part, s[part], "a format the release family loads")
        if part not in p and s["engine"] in mxfp4_predated and s[part] == "mxfp4":  # a preset's own part
            _bad("engine", s["engine"], "a release that loads the checkpoint")
    # docs/method.md section 5: TensorRT-LLM's FP8 weights need FP8 tensor cores, its NVFP4 weights FP4 ones (a
    # preset card's peaks say which it has; a custom card's are not known).
    if ENGINE_BASE[s["engine"]] == "trtllm" and s["card"] != "custom":
        for part in ("weights", "weights_experts", "weights_attn", "weights_embed"):
            need = {"fp8": "fp8", "nvfp4": "fp4"}.get(s[part]) if part in p else None
            if need and card["peaks"].get(need) is None:
                _bad(part, s[part], "a format whose tensor cores the card has")
    # docs/method.md section 5: the matrix units read the stored weights, so compute is never narrower than them
    # (either part of an MoE model will do); scales do not count.
    stored = math.floor(s["_bpw"] + 1e-9)
    if s["experts"]:
        stored = min(stored, math.floor(s["_bpw_e"] + 1e-9))
    if {"bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "fp4": 4}[s["compute"]] < min(stored, 16):
        _bad("compute", s["compute"], "no narrower than the stored weights")
    # docs/method.md section 5: the KV-cache formats each engine holds, by name.
    kv_names = {"vllm": ("fp16", "bf16", "fp8"), "sglang": ("fp16", "bf16", "fp8"),
                "trtllm": ("fp16", "bf16", "fp8", "int8"), "llamacpp": ("fp16", "bf16", "int8", "int4")}
    eng = ENGINE_BASE[s["engine"]]
    if eng in kv_names and s["kv"] in KV_BITS and s["kv"] not in kv_names[eng]:  # a bit count is taken as given
        _bad("kv", s["kv"], "a format the engine holds its cache in")
    # docs/method.md section 5: TensorRT-LLM's FP8 KV cache needs FP8 units as its FP8 weights do.
    if eng == "trtllm" and s["card"] != "custom" and s["kv"] == "fp8" and card["peaks"].get("fp8") is None:
        _bad("kv", s["kv"], "a format whose tensor cores the card has")
    if s["experts"] and not 1 <= s["experts_active"] < s["experts"]:  # (k unused when dense)
        _bad("experts_active", s["experts_active"], "1 <= experts_active < experts")
    if s["active_b"] > s["params_b"]:
        _bad("active_b", s["active_b"], "<= params_b")
    if not s["embed_b"] < s["active_b"]:
        _bad("embed_b", s["embed_b"], "< active_b")
    if s["experts"]:
        _, D = moe_split(s["params_b"] * 1e9, s["active_b"] * 1e9, s["experts"], s["experts_active"])
        if D - s["embed_b"] * 1e9 < 0:
            _bad("active_b", s["active_b"], "dense part less embeddings must be >= 0")
    # docs/method.md section 1: a shape that can hold the parameters, 1e-4 to 1e7 hidden^2 a layer.
    per_layer_h2 = s["layers"] * s["hidden"] ** 2 / 1e9
    if not (s["active_b"] - s["embed_b"] >= 1e-4 * per_layer_h2 and s["params_b"] - s["embed_b"] <= 1e7 * per_layer_h2):
        key = next((k for k in ("hidden", "layers", "params_b", "active_b") if k in p), "hidden")
        _bad(key, s[key], "a shape that holds the parameters")
    if s["gpus"] > 1 and s["link_gbs"] is None:
        _bad("link_gbs", None, "> 0 (the card has no link figure)")
    return s


# --------------------------------------------------------------------------------------------
# Formulas (docs/method.md sections 2-4 and s5). `m` holds the scenario in SI units, see `_si`.
# --------------------------------------------------------------------------------------------

def page_tokens(engine: str, latent: float) -> int:
    """docs/method.md section 8.2: the tokens of one KV-cache block the engine prints its counts in (1: none)."""
    if ENGINE_BASE[engine] == "vllm":
        return 64 if latent else 16
    return {"trtllm": 32, "trtllm-2025": 32, "trtllm-2024": 64, "trtllm-2023": 64, "trtllm-v05": 64}.get(engine, 1)


def printed_tokens(m, free: float, n: int) -> tuple[float, float]:
    """docs/method.md section 8.2: (kv_tokens, max_concurrency) in whole blocks of the engine's page (whole tokens
    where it pages single tokens, as SGLang counts them)."""
    tokens = max(0.0, free) / cache_bytes(m, n) * n
    b = m["page"]
    if b == 1:
        tokens = math.floor(tokens + 1e-9)
        return tokens, tokens / n
    tokens = math.floor(tokens / b + 1e-9) * b
    return tokens, tokens / (math.ceil(n / b) * b)  # the blocks over the blocks one request takes


def _si(s) -> dict:
    """docs/method.md sections 2-4 symbols: P, Pa, Pe, g, bpw, kvb, L, H, Hkv, d, a, plus F and BW."""
    g = s["gpus"]
    # docs/method.md section 5: llama.cpp splits by whole layers; its cards take turns, so one card's peaks count.
    # Split by rows, every card reads its share of each matrix at once, and the main card reads the whole cache.
    heads_whole = ENGINE_BASE[s["engine"]] == "llamacpp"
    rsplit = s["split"] == "row" and g > 1
    lsplit = heads_whole and not rsplit
    gs = 1 if lsplit else g
    gkv = 1 if rsplit else gs
    m = dict(
        P=s["params_b"] * 1e9, Pa=s["active_b"] * 1e9, Pe=s["embed_b"] * 1e9, g=g, lsplit=lsplit,
        rsplit=rsplit, heads_whole=heads_whole, kvc=1 if rsplit else g, apple=s["arch"] == "apple",
        # docs/method.md section 5: a row split's hand-overs, a count of cycles at ROW_GHZ
        row_s=(s["layers"] * (ROW_LAYER_US + ROW_CARD_US * (g - 1))
               * (ROW_GHZ / s["clock_ghz"] if s["clock_ghz"] else 1.0) * 1e-6) if rsplit else 0.0,
        bpw=s["_bpw"], bpw_e=s["_bpw_e"], kvb=s["_kvb"], L=s["layers"], H=s["heads"], Hkv=s["kv_heads"],
        d=s["head_dim"], a=s["attn"], E=s["experts"], k=s["experts_active"], lat=s["kv_latent"],
        win=s["window"], Lw=s["window_layers"] if s["window"] else 0, hidden=s["hidden"],
        # docs/method.md sections 2-4 effective peaks, s7 one per part; s8: times eff_fp4 at compute=fp4, and a
        # decode step's times eff_fp8 at compute=fp8
        F=gs * s["tflops"] * 1e12 * s["eff_flops"] * (s["eff_fp4"] if s["compute"] == "fp4" else 1.0)
        * (s["eff_fp8"] if s["compute"] == "fp8" else 1.0),
        # docs/method.md section 8: a prefill's arithmetic at eff_prefill (times eff_fp4 at compute=fp4)
        Fpf=gs * s["tflops"] * 1e12 * s["eff_prefill"] * (s["eff_fp4"] if s["compute"] == "fp4" else 1.0),
        expert_s=s["expert_us"] * 1e-6,
        # docs/method.md section 8: reading weights, reading the KV cache (both times the card family's eff_card)
        BW=gs * s["bw_tbs"] * 1e12 * s["eff_card"] * s["eff_bw"],
        BWkv=gkv * s["bw_tbs"] * 1e12 * s["eff_card"] * s["eff_kv"],
        link=(s["link_gbs"] or 0.0) * 1e9, link_s=s["link_us"] * 1e-6,
        mem=s["mem_gib"], over=s["overhead_gib"], util=s["mem_util"], torch=s["torch_gib"],
        V=s["vocab"], Llin=s["linear_layers"], state=s["state_layers"] * s["state_kib"] * 1024,
        bpw_a=s["_bpw_a"], bpw_emb=s["_bpw_emb"], Lf=s["layers_full"], T=s["max_batched_tokens"],
        fa=s["flash_attn"], slot_outputs=s["engine"] in SLOT_OUTPUTS, ctx=s["ctx"],
        graphs=s["cuda_graphs"], rule=ENGINE_BASE[s["engine"]], dq=s["eff_dequant"], dq8=s["dequant_q8"],
        profiled=s["engine"] in TRTLLM_PROFILED,
        reread=s["kv_reread"], page=page_tokens(s["engine"], s["kv_latent"]),
        release=VLLM_RELEASES.get(s["engine"], VLLM_RELEASES["vllm-0.21"]),
        mxfp4=s["weights_experts"] == "mxfp4",
        # docs/method.md s3.4: per step and per layer; fixed_s(m, B) adds the launches without a CUDA graph
        step_us=s["step_us"], layer_us=s["layer_us"], eager_us=s["eager_us"],
        # docs/method.md s3.4: a clock-bound time per layer, stated at layer_ghz, on a card of clock_ghz
        clock=(s["layer_ghz"] / s["clock_ghz"]) if s["layer_ghz"] and s["clock_ghz"] else 1.0,
        one_token_graphs=s["engine"] in ONE_TOKEN_GRAPHS,
        seqs=s["max_seqs"], tok_s=s["tok_us"] * 1e-6, eff_link=s["eff_link"], overlap=s["overlap"],
        hit=s["prefix_hit"], spec_k=s["spec_k"], alpha=s["spec_alpha"], spec_c=s["spec_c"],
    )
    if s["engine"] == "vllm":  # no release named: the family that leaves less cache (the later on a tie)
        m["release"] = min(VLLM_RELEASES.values(), key=lambda r: (kv_gib_per_card({**m, "release": r}), r[2] != "triton"))
    return m


def parts(m):
    """docs/method.md section 2.1: (params, bits, params read per step, routed) for each part of the checkpoint."""
    if m["E"]:
        M, D = moe_split(m["P"], m["Pa"], m["E"], m["k"])
    else:
        M, D = 0.0, m["P"]
    emb = min(m["Pe"] + m["V"] * m["hidden"], D)  # the input table and the LM head
    if m["lat"]:
        per_layer = 2 * m["hidden"] * m["H"] * m["d"] + m["lat"] * (m["hidden"] + 2 * m["H"] * m["d"])
    else:
        per_layer = m["hidden"] * m["d"] * (2 * m["H"] + 2 * m["Hkv"])  # q, k, v, o
    attn = min((m["L"] - m["Llin"]) * per_layer, max(0.0, D - emb))
    rest = max(0.0, D - emb - attn)
    f = m["Lf"] / m["L"]  # whole blocks at 16 bits
    return [(emb, m["bpw_emb"], emb - m["Pe"], False), (attn * (1 - f), m["bpw_a"], attn * (1 - f), False),
            (rest * (1 - f), m["bpw"], rest * (1 - f), False), (M * (1 - f), m["bpw_e"], M * (1 - f), True),
            ((attn + rest) * f, 16.0, (attn + rest) * f, False), (M * f, 16.0, M * f, True)]


def weight_bytes(m):
    return sum(n * b / 8 for n, b, _, _ in parts(m))  # docs/method.md section 2.1: W, part by part


def loaded_bytes(m):
    """docs/method.md section 8.2: W plus what vLLM's MXFP4 kernels add to routed experts (Marlin pads, Triton
    keeps the scales twice)."""
    W = weight_bytes(m)
    if m["rule"] == "sglang":
        return W + m["g"] * SGLANG_LOAD_EXTRA_GIB * GIB
    if m["rule"] == "llamacpp":  # the input table stays in host memory
        return W - min(m["Pe"], parts(m)[0][0]) * m["bpw_emb"] / 8
    if not (m["mxfp4"] and m["E"] and m["rule"] == "vllm"):
        return W
    M, _ = moe_split(m["P"], m["Pa"], m["E"], m["k"])
    if M <= 0:  # docs/method.md section 8.2: no routed expert weights, nothing padded
        return W
    if m["release"][2] == "triton":
        return W + M / 32  # one more byte of scale per 32 expert weights
    inter = M / (m["E"] * m["L"] * 3 * m["hidden"])  # one expert's intermediate size
    grow = math.ceil(inter / 128) * 128 * math.ceil(m["hidden"] / 256) * 256 / (inter * m["hidden"])
    return W + M * m["bpw_e"] / 8 * (grow - 1)


def ltok(m, n):
    # docs/method.md sections 2.2-2.3: Ltok(n), linear-attention layers cache no tokens
    return (m["L"] - m["Llin"] - m["Lw"]) * n + m["Lw"] * min(n, m["win"])


def kv_bytes_per_token(m):
    La = m["L"] - m["Llin"]  # docs/method.md section 2.3: attention layers only
    if m["lat"]:
        return La * m["lat"] * m["kvb"] / 8  # docs/method.md sections 2-5: MLA L*kv_latent*kvb/8
    return 2 * La * m["Hkv"] * m["d"] * m["kvb"] / 8  # docs/method.md sections 2-4/s5: 2*L*Hkv*d*kvb/8


def cache_bytes(m, n):
    """docs/method.md sections 2-5 v2: Cg(n), the cluster total with tensor-parallel copies of the KV heads (MLA: of the latent)."""
    g = m["g"]
    # docs/method.md section 2.3: plus the linear-attention state, split by heads (not copied)
    if m["heads_whole"]:  # docs/method.md section 5: every card holds every head of its own layers, nothing copied
        per_token = m["lat"] * m["kvb"] / 8 if m["lat"] else 2 * m["Hkv"] * m["d"] * m["kvb"] / 8
        return per_token * ltok(m, n) + m["state"]
    if m["lat"]:
        return g * m["lat"] * m["kvb"] / 8 * ltok(m, n) + m["state"]  # docs/method.md sections 2-5: MLA Cg(n)
    per_card = max(1, math.ceil(m["Hkv"] / g))
    return 2 * g * per_card * m["d"] * m["kvb"] / 8 * ltok(m, n) + m["state"]  # docs/method.md sections 2-5: Cg(n)


def cache_read_bytes(m, n):
    """docs/method.md section 8: the cache bytes a decode step reads per sequence. A kernel with one thread block per
    query head reads each KV head once per query head on its card: (H/g)/ceil(Hkv/g) times, at kv_reread of the
    extra; never under MLA; the linear-attention state once."""
    if m["lat"] or not m["reread"]:
        return cache_bytes(m, n)
    g = 1 if m["heads_whole"] else m["g"]
    per_card = max(1, math.ceil(m["Hkv"] / g))
    times = 1 + m["reread"] * max(0.0, m["H"] / g / per_card - 1)
    return (cache_bytes(m, n) - m["state"]) * times + m["state"]


def forward_activation(m):
    """docs/method.md section 8.2: one forward pass over max_batched_tokens tokens, bytes per card."""
    if m["E"]:
        M, D = moe_split(m["P"], m["Pa"], m["E"], m["k"])
    else:
        M, D = 0.0, m["P"]
    mlp = min(max(0.0, (D - m["V"] * m["hidden"] - m["Pe"]) / m["L"] / (3 * m["hidden"])), 16 * m["hidden"])
    if m["E"]:
        mlp += m["k"] * M / (m["E"] * m["L"] * 3 * m["hidden"])
    return m["T"] * 2 * (4 * m["hidden"] + ((m["H"] + 2 * m["Hkv"]) * m["d"] + 2 * mlp) / m["g"])


def vllm_activation(m):
    """docs/method.md section 8.2: the larger of the dummy forward pass and the dummy sampler run, bytes per card."""
    forward = forward_activation(m)
    rows = min(m["seqs"] if m["seqs"] is not None else m["T"], m["T"])
    return max(forward, rows * m["V"] * m["release"][0])  # logits all-gathered: the whole vocabulary per card


def llamacpp_cells(m):
    """docs/method.md section 8.2: n_ctx, max_seqs slots of ctx tokens padded to 256 cells."""
    slots = m["seqs"] or 1
    return math.ceil(slots * m["ctx"] / LLAMACPP_PAD) * LLAMACPP_PAD


def llamacpp_compute(m):
    """docs/method.md section 8.2: llama.cpp's compute buffer on the card with the output layer, bytes."""
    cells = llamacpp_cells(m)
    ub = min(m["T"], cells)
    n_out = min(m["seqs"] or 1, ub) if m["slot_outputs"] else ub
    w_out, w_attn, w_floor = LLAMACPP_WIDTHS
    out = 4 * n_out * m["V"] + 4 * w_out * ub * m["hidden"]
    scores = 2 * ub * cells if m["fa"] else 4 * ub * cells * (m["H"] + 1)
    return max(out, scores + 4 * w_attn * ub * m["hidden"], 4 * w_floor * ub * m["hidden"])


def kv_alloc_gib_per_card(m):
    """docs/method.md section 8.2: the KV cache the engine allocates per card: llama.cpp its cells (at most its
    room), every other engine its whole room."""
    room = kv_gib_per_card(m)
    if m["rule"] != "llamacpp" or room <= 0:
        return room
    slots = m["seqs"] or 1
    return min(room, slots * cache_bytes(m, llamacpp_cells(m) / slots) / m["kvc"] / GIB)


def kv_gib_per_card(m):
    """docs/method.md section 8.2: the KV cache each engine's rule leaves on one card, GiB (negative: short)."""
    w = loaded_bytes(m) / m["g"] / GIB
    over, u = m["over"], m["util"]
    if m["rule"] == "vllm":
        if over is None:
            over = VLLM_NON_TORCH_GIB + vllm_activation(m) / GIB + m["release"][1] * m["graphs"]
        return u * m["torch"] - w - over
    if m["rule"] == "sglang":
        if over is None:
            over = SGLANG_CONTEXT_GIB + SGLANG_P2P_INIT_GIB * (m["g"] > 1 and m["link"] >= 100e9)
        return u * (m["torch"] - over) - w
    if m["rule"] == "trtllm":
        if over is None and m["profiled"]:  # the PyTorch backend: its profiling run's peak beside the weights
            over = (2 * m["T"] * m["hidden"] * TRTLLM_TORCH_ACT.get(m["g"], TRTLLM_TORCH_ACT_MANY) / GIB
                    + TRTLLM_TORCH_NCCL.get(m["g"], TRTLLM_TORCH_NCCL_MANY) + TRTLLM_TORCH_REST_GIB)
            return u * (m["torch"] - w - over)
        if over is None:  # the 2024 executor: CUDA context, execution context, runtime buffers, decoder
            sv = m["seqs"] * m["V"]
            over = TRTLLM_CONTEXT_GIB + (forward_activation(m) + sv * (2 + TRTLLM_RUNTIME_B + TRTLLM_DECODER_B)) / GIB
            return u * (m["torch"] - w - over)
        return u * (m["mem"] - w - over)
    if m["rule"] == "llamacpp" and over is None:
        over = LLAMACPP_CONTEXT_GIB + llamacpp_compute(m) / GIB
    if m["rule"] == "llamacpp" and m["apple"]:  # docs/method.md section 8.2: Metal's working set of unified memory
        return u * m["mem"] * (2 / 3 if m["mem"] <= 32 else 0.75) - over - w
    return u * m["mem"] - over - w


def free_bytes(m):
    return m["kvc"] * kv_gib_per_card(m) * GIB  # docs/method.md section 8.2: free, all cards (the main one: rows)


def max_batch(m, n):
    # docs/method.md sections 2-4/s5: max_batch; s8.2: a sequence takes whole pages of the engine's blocks
    padded = math.ceil(n / m["page"]) * m["page"]
    return math.floor(max(0.0, free_bytes(m)) / cache_bytes(m, padded))


def attn_flops(m, n):
    width = m["lat"] if m["lat"] else m["d"]
    return 4 * m["H"] * width * ltok(m, n)  # docs/method.md sections 2-5: Af = 4*H*d*Ltok (MLA: kv_latent)


def moe_split(P, Pa, E, k):
    M = (P - Pa) / (1 - k / E)  # docs/method.md sections 2-5: routed-expert parameters
    return M, P - M  # D = P - M


def packed(bits) -> bool:
    """docs/method.md s8: weights the kernel unpacks, stored below 8 bits or in a width of no whole bytes (scaled
    blocks: Q8_0's 34 bytes per 32 weights)."""
    return bits < 8 or min(bits % 8, 8 - bits % 8) >= 1e-6


def _bw(m, bits):
    # docs/method.md s3.4: below 8 bits, and Q8_0's scaled blocks where dequant_q8 is 1, at eff_dequant of eff_bw
    return m["BW"] * (m["dq"] if bits < 8 or (m["dq8"] and packed(bits)) else 1.0)


def read_seconds(m, B):
    """docs/method.md section 2.1/3.2: every part's bytes read at its own bandwidth; routed experts at f(B)."""
    f = 1 - (1 - m["k"] / m["E"]) ** B if m["E"] else 1.0
    return sum(r * (f if routed else 1.0) * b / 8 / _bw(m, b) for _, b, r, routed in parts(m))


def resident_seconds(m):
    """docs/method.md s7/s8: every resident weight read once, part by part."""
    return sum(n * b / 8 / _bw(m, b) for n, b, _, _ in parts(m))


def t_mem(m, B, n):
    return read_seconds(m, B) + m["a"] * B * cache_read_bytes(m, n) / m["BWkv"]  # docs/method.md section 8


def t_cmp(m, B, n):
    return B * (2 * (m["Pa"] - m["Pe"]) + m["a"] * attn_flops(m, n)) / m["F"]  # docs/method.md sections 2-5


def t_comm(m, B, link_eff=1.0):
    """docs/method.md sections 2-5: two ring all-reduces of B*hidden*2 bytes per layer; only when g > 1. ``link_eff``: the share of
    the link reached (1 in docs/method.md sections 2-5/s7's step; eff_link under load, docs/method.md s8)."""
    g = m["g"]
    if g == 1:
        return 0.0
    if m["lsplit"]:  # docs/method.md section 5: the activations handed on at each of the g - 1 layer boundaries
        return (g - 1) * (B * m["hidden"] * 2 / (m["link"] * link_eff) + m["link_s"])
    if m["rsplit"]:  # docs/method.md section 5: the all-reduces' bytes, and the row split's hand-overs for latency
        return 2 * m["L"] * 2 * (g - 1) / g * B * m["hidden"] * 2 / (m["link"] * link_eff) + m["row_s"]
    return 2 * m["L"] * (2 * (g - 1) / g * B * m["hidden"] * 2 / (m["link"] * link_eff) + m["link_s"])


def fixed_s(m, B):
    """docs/method.md section 3.4: step_us + L*layer_us, plus L*eager_us where the step runs without a CUDA graph
    (cuda_graphs=0, or llama.cpp's CUDA backend at more than one token a step), the per-layer part times
    layer_ghz/clock_ghz where both are known."""
    launches = m["graphs"] == 0 or (m["one_token_graphs"] and B > 1)
    return (m["step_us"] + m["L"] * (m["layer_us"] + (m["eager_us"] if launches else 0.0)) * m["clock"]) * 1e-6


def both(m, mem, cmp):
    """docs/method.md section 8: the longer of memory and arithmetic, plus the share (1 - overlap) of the shorter
    that the kernels do not hide."""
    return max(mem, cmp) + (1 - m["overlap"]) * min(mem, cmp)


def step(m, B, n):
    return both(m, t_mem(m, B, n), t_cmp(m, B, n)) + t_comm(m, B) + fixed_s(m, B)  # docs/method.md section 8: + t_comm + t_fix


def break_even(m, n):
    """docs/method.md sections 2-4 closed form (dense, W read as Wr) or the s5 MoE root; None when there is none."""
    slope = (2 * (m["Pa"] - m["Pe"]) + m["a"] * attn_flops(m, n)) / m["F"] \
        - m["a"] * cache_read_bytes(m, n) / m["BWkv"]
    if slope <= 0:
        return None  # docs/method.md sections 2-4: denominator not positive -> null
    if not m["E"]:
        return read_seconds(m, 1) / slope  # docs/method.md sections 2-4: be = (Wr/BW) / (...)
    gap = lambda B: t_cmp(m, B, n) - t_mem(m, B, n)  # noqa: E731  docs/method.md sections 2-5: root of t_cmp = t_mem
    lo, hi = 0.0, 1.0
    while gap(hi) <= 0:
        hi *= 2
    for _ in range(400):  # bisection to a relative 1e-12
        if hi - lo <= 1e-12 * hi:
            break
        mid = (lo + hi) / 2
        if gap(mid) > 0:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def capped(m, count):
    return count if m["seqs"] is None else min(count, m["seqs"])  # docs/method.md section 8: max_seqs caps the batch


def auto_batch(m, n):
    be = break_even(m, n)
    mb = capped(m, max_batch(m, n))
    if be is None:
        return max(1, mb)  # docs/method.md sections 2-4: batch=auto without a break-even
    return max(1, min(mb, math.floor(be + 0.5)))  # docs/method.md sections 2-4: batch=auto


# --------------------------------------------------------------------------------------------
# docs/method.md section 7: traffic.
# --------------------------------------------------------------------------------------------

def serving_batch(m, s, n):
    """docs/method.md section 7: Bs, and whether the tpot_ms target is met."""
    mb = capped(m, max_batch(m, n))  # docs/method.md section 8: the serving batch is capped at max_seqs too
    used = auto_batch(m, n) if s["batch"] == "auto" else s["batch"]
    cap = max(1, min(used, mb))
    tpot = s["tpot_ms"]
    if tpot is None:
        return cap, True
    ok = lambda B: step(m, B, n) * 1e3 <= tpot  # noqa: E731
    if not ok(1):
        return 1, False
    lo, hi = 1, cap  # step grows with B, so search the largest integer batch that meets it
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo, True


def prefill_flops(m, in_tok):
    width = m["lat"] if m["lat"] else m["d"]  # docs/method.md section 7: MLA uses kv_latent for d
    h = m["hit"]  # SPEC section 8: the prefix cache's share of the prompt
    return 2 * (m["Pa"] - m["Pe"]) * in_tok * (1 - h) + m["a"] * 2 * (m["L"] - m["Llin"]) * m["H"] * width * in_tok**2 * (1 - h**2)


def expert_prefill(m, in_tok, idle):
    """docs/method.md section 8: an MoE prefill's fixed time per expert, per layer, per chunk of up to T tokens. Under
    load a request pays its p/T share of full chunks; idle, its own ceil(p/T) chunks of p tokens (p: the prompt less
    the cached prefix)."""
    if not m["E"] or not m["expert_s"]:
        return 0.0
    p = in_tok * (1 - m["hit"])
    tokens = min(p, m["T"]) if idle else m["T"]
    chunks = math.ceil(p / m["T"]) if idle else p / m["T"]
    touched = m["E"] * (1 - (1 - m["k"] / m["E"]) ** tokens)
    return chunks * m["L"] * touched * m["expert_s"]


def ttft_ms(m, in_tok):
    # docs/method.md section 7 (contract: W resident, comm = t_comm at B = in_tok); docs/method.md section 8: plus one step_us
    return max(prefill_flops(m, in_tok) / m["Fpf"] + expert_prefill(m, in_tok, True), resident_seconds(m)) * 1e3 \
        + t_comm(m, in_tok) * 1e3 + fixed_s(m, in_tok) * 1e3


# docs/method.md s8: throughput under full load. B sequences in flight, each holding in + out/2 tokens on average;
# per step the all-reduces at eff_link and tok_us per sequence are added; each prefill takes Fp/Fpf plus its prompt's
# all-reduces on its own.

def load_step(m, B, s):
    nbar = s["in_tok"] + s["out_tok"] / 2
    return both(m, t_mem(m, B, nbar), t_cmp(m, B, nbar)) + t_comm(m, B, m["eff_link"]) + fixed_s(m, B) + B * m["tok_s"]


def load_prefill(m, s):
    """Fp/Fpf plus the bytes of the prompt's all-reduces at eff_link (no latency term)."""
    if m["g"] == 1:
        prompt_comm = 0.0
    elif m["lsplit"]:  # docs/method.md section 5: the prompt's activations handed on at each layer boundary
        prompt_comm = (m["g"] - 1) * s["in_tok"] * m["hidden"] * 2 / (m["link"] * m["eff_link"])
    else:
        g = m["g"]
        prompt_comm = 2 * m["L"] * 2 * (g - 1) / g * s["in_tok"] * m["hidden"] * 2 / (m["link"] * m["eff_link"])
    return prefill_flops(m, s["in_tok"]) / m["Fpf"] + expert_prefill(m, s["in_tok"], False) + prompt_comm


def load_throughput(m, B, s):
    out = s["out_tok"]
    return B * out / (out * load_step(m, B, s) + B * load_prefill(m, s))


def throughput_batch(m, s):
    return capped(m, max_batch(m, s["in_tok"] + s["out_tok"]))


# docs/method.md section 8.1, a finite benchmark run: N requests at once, replies of lengths L_i, served first come,
# first served by B_f places; the run's tokens over its steps and its prefills.

def run_lengths(s):
    n, out, cap = s["run_prompts"], s["out_tok"], s["out_max"]
    if s["out_spread"] == "none":
        return [out] * n
    phi = (math.sqrt(5) - 1) / 2
    raw = [-math.log(1 - math.fmod((i + 1) * phi, 1.0)) for i in range(n)]
    # No out_max: the replies stop where the model's trained context, beside the prompt, ends (custom: no end).
    preset = catalogue.models().get(s["model"])
    room = (preset["max_ctx"] or 0) - s["in_tok"] if preset else 0
    limit = cap if cap else (room if room >= out else math.inf)
    target = min(out, limit)

    def mean_at(c):
        return sum(min(c * r, limit) for r in raw) / n
    lo, hi = 0.0, 64 * target / (sum(raw) / n)
    for _ in range(200):
        mid = (lo + hi) / 2
        if mean_at(mid) < target:
            lo = mid
        else:
            hi = mid
    return [max(1, round(min(hi * r, limit))) for r in raw]


def run_throughput(m, s):
    places = throughput_batch(m, s)
    if not s["run_prompts"] or places < 1:
        return None
    lengths = run_lengths(s)
    waiting = list(lengths)
    flying: list[int] = []  # tokens each sequence in flight has still to emit
    seconds = 0.0
    while waiting or flying:
        while waiting and len(flying) < places:
            flying.append(waiting.pop(0))
            seconds += load_prefill(m, s)
        k = min(flying)  # steps until the next sequence ends, all at the same batch
        seconds += k * load_step(m, len(flying), s)
        flying = [x - k for x in flying if x > k]
    return sum(lengths) / seconds


def c_api(s):
    """docs/method.md section 7 API cost of one request; docs/method.md section 8: a prompt above the row's long-prompt threshold bills the
    whole request at the tier's prices (contract: the tier comes from the catalogue row even when the link
    sets api_in/api_out)."""
    row = catalogue.apis()[s["api"]]
    p_in, p_out = s["api_in"], s["api_out"]
    if row["tier_above_tok"] is not None and s["in_tok"] > row["tier_above_tok"]:
        p_in, p_out = row["tier_api_in"], row["tier_api_out"]
    h = s["prefix_hit"]  # SPEC section 8: h*in_tok billed at api_cached, the rest at the input price
    return ((1 - h) * s["in_tok"] * p_in + h * s["in_tok"] * s["api_cached"] + s["out_tok"] * p_out) / 1e6


def rent(s):
    """SPEC section 8: discount multiplies every rent figure by (1 - discount)."""
    return s["usd_hr"] * (1 - s["discount"])


def spec_round(m, B, n):
    """SPEC section 8: one round of speculative decoding at batch B, context n: (t_v + t_d, tau)."""
    k = m["spec_k"]
    t_v = both(m, read_seconds(m, (k + 1) * B) + m["a"] * B * cache_read_bytes(m, n) / m["BWkv"],
               (k + 1) * t_cmp(m, B, n)) + t_comm(m, (k + 1) * B) + fixed_s(m, (k + 1) * B)
    t_d = k * m["spec_c"] * step(m, B, n)
    tau = (1 - m["alpha"] ** (k + 1)) / (1 - m["alpha"])
    return t_v + t_d, tau


def break_even_req_day(s, s_req):
    """docs/method.md section 7 break-even load, or None."""
    c_api_ = c_api(s)
    k = c_api_ * s["hours"] / 24
    c_rep = s["gpus"] * rent(s) * s["hours"]
    x_cap = 86400 / (s["peak"] * s_req)
    if k * x_cap <= c_rep:
        return None
    r = max(1, math.ceil(s["upkeep"] / (k * x_cap - c_rep)))
    return max((r - 1) * x_cap, (r * c_rep + s["upkeep"]) / k)


def traffic(m, s) -> dict:
    n = s["in_tok"] + s["out_tok"]  # docs/method.md section 7: n = in_tok + out_tok
    hours = s["hours"]
    R = s["req_day"] * hours / 24  # docs/method.md section 7: requests per month
    Bs, meets = serving_batch(m, s, n)
    tok_s = Bs / step(m, Bs, n)
    if s["engine"] == "roofline":
        s_req = (s["out_tok"] / tok_s + prefill_flops(m, s["in_tok"]) / m["Fpf"]  # docs/method.md section 7: s_req
                 + expert_prefill(m, s["in_tok"], False))
    else:
        s_req = s["out_tok"] / load_throughput(m, Bs, s)  # docs/method.md section 8: from the engine's throughput model
    B_thr = throughput_batch(m, s)
    thr = load_throughput(m, B_thr, s) if B_thr > 0 else None
    u = R * s_req / (hours * 3600)  # docs/method.md section 7: busy fraction
    out = dict(
        serving_batch=Bs, serving_tok_s=s["out_tok"] / s_req,  # docs/method.md section 7.4: out_tok / s_req
        serving_tpot_ms=step(m, Bs, n) * 1e3,  # docs/method.md section 7: the decode step at the serving batch
        meets_tpot=meets, ttft_ms=ttft_ms(m, s["in_tok"]),
        requests_month=R, tokens_in_month=R * s["in_tok"], tokens_out_month=R * s["out_tok"],
        busy_fraction=u, replicas=None, duty_traffic=None, self_host_usd_month=None,
        api_usd_month=None, verdict=None, break_even_req_day=None,
        max_throughput_tok_s=thr, throughput_batch=B_thr if thr is not None else None,
        run_throughput_tok_s=run_throughput(m, s),
    )
    priced = s["usd_hr"] is not None
    if priced or not NULL_EVERY_USD_FIGURE:  # contract: without a rent price USD figures are null
        out["api_usd_month"] = R * c_api(s)  # docs/method.md section 7 (Tin*api_in + Tout*api_out)/1e6, s7 tier
    if max_batch(m, n) == 0:
        out["verdict"] = "does not fit"  # docs/method.md section 7: self-hosting figures stay null
        # docs/method.md section 7: and what serving would take (a latency met by nothing that runs is no figure)
        out.update({k: None for k in ("serving_batch", "serving_tok_s", "serving_tpot_ms", "meets_tpot", "ttft_ms")})
        out.update({k: None for k in PROCUREMENT_KEYS})  # SPEC section 9: nothing of section 9 either
        out["best"] = None if "residency" in str(s.get("why") or "") or beyond_context(s) else "api"
        out["best_at_band_ends"], out["best_marginal"] = None, False
        return out
    replicas = max(1, math.ceil(u * s["peak"] - 1e-9))  # docs/method.md section 7
    out["replicas"] = replicas
    out["duty_traffic"] = u / replicas
    if priced:
        out["self_host_usd_month"] = replicas * s["gpus"] * rent(s) * hours + s["upkeep"]
        out["verdict"] = "self-host" if out["self_host_usd_month"] < out["api_usd_month"] else "api"
        out["break_even_req_day"] = break_even_req_day(s, s_req)
    out.update(band(m, s, u, priced, out))
    out.update(procurement(s, s_req, replicas, u / replicas, out))
    # docs/calibration.md section 6 and SPEC section 9: the best option with the capacity at either end of the band.
    out["best_at_band_ends"], out["best_marginal"] = None, False
    if out["capacity_band_pct"] is not None and out["best"] is not None:
        w = 1 + out["capacity_band_pct"] / 100
        ends = []
        for f in (1 / w, w):
            u_f = R * s_req * f / (hours * 3600)
            reps_f = max(1, math.ceil(u_f * s["peak"] - 1e-9))
            out_f = dict(out, self_host_usd_month=reps_f * s["gpus"] * rent(s) * hours + s["upkeep"] if priced else None)
            ends.append(procurement(s, s_req * f, reps_f, u_f / reps_f, out_f)["best"])
        out["best_at_band_ends"] = ends
        out["best_marginal"] = any(b != out["best"] for b in ends)
    return out


PROCUREMENT_KEYS = ("rent_usd_month", "own_usd_month", "own_capex_usd", "own_capital_usd_month", "own_power_usd_month",
                    "own_cards_bought",
                    "payback_months_rent", "payback_months_api", "hybrid_replicas", "hybrid_usd_month",
                    "hybrid_api_share", "hybrid_own_replicas", "hybrid_own_usd_month")


def procurement(s, s_req, replicas, duty, out) -> dict:
    """SPEC section 9, written from its text: rent (autoscaled with a profile), own, payback, hybrid, best."""
    res = {k: None for k in PROCUREMENT_KEYS}
    g, hours, upkeep = s["gpus"], s["hours"], s["upkeep"]
    priced = s["usd_hr"] is not None
    c = 3600 / s_req  # requests one replica serves in an hour
    w = s["_weights"]
    r_h = None if w is None else [s["req_day"] * x / sum(w) for x in w]
    res["rent_usd_month"] = out["self_host_usd_month"]
    if priced and r_h is not None and s["autoscale"]:
        A = sum(min(replicas, max(s["min_replicas"], math.ceil(r / c - 1e-9))) for r in r_h)
        res["rent_usd_month"] = A * (hours / 24) * g * rent(s) + upkeep
    K = E = None
    if s["card_usd"] is not None and s["power_w"] is not None:
        C = s["card_usd"] * (1 + s["server_frac"])
        S = s["residual"] * C
        i, n = s["wacc"], s["years"]
        crf = 1 / n if i == 0 else i * (1 + i) ** n / math.expm1(n * math.log1p(i))  # (1+i)^n - 1, tiny i too
        K = (C - S * (1 + i) ** (-n)) * crf / 12
        E = s["power_w"] / 1000 * (s["idle_frac"] + (1 - s["idle_frac"]) * duty) * s["pue"] * s["usd_kwh"] * hours
        E0 = s["power_w"] / 1000 * s["idle_frac"] * s["pue"] * s["usd_kwh"] * hours  # a spare card, idle all month
        used = replicas * g
        bought = -(-used // s["buy_lot"]) * s["buy_lot"]
        res["own_cards_bought"] = bought
        res["own_usd_month"] = bought * (K + s["colo_usd"]) + used * E + (bought - used) * E0 + upkeep
        res["own_capex_usd"] = bought * C
        res["own_capital_usd_month"] = bought * K
        res["own_power_usd_month"] = used * E + (bought - used) * E0
        running = res["own_usd_month"] - res["own_capital_usd_month"]
        if res["rent_usd_month"] is not None and res["rent_usd_month"] - running > 0:
            res["payback_months_rent"] = res["own_capex_usd"] / (res["rent_usd_month"] - running)
        if out["api_usd_month"] - running > 0:
            res["payback_months_api"] = res["own_capex_usd"] / (out["api_usd_month"] - running)
    if r_h is not None:
        per_req = c_api(s)

        def fleet(N):
            served = [min(r, N * c) for r in r_h]
            over = sum(r_h) - sum(served)
            return sum(served), over, (hours / 24) * over * per_req

        if priced:
            def running(N):  # replica-hours a day of a rented fleet of N: all day, or autoscaled and capped at N
                if not s["autoscale"]:
                    return 24 * N
                return sum(min(N, max(s["min_replicas"], math.ceil(r / c - 1e-9))) for r in r_h)

            totals = [running(N) * (hours / 24) * g * rent(s) + (upkeep if N >= 1 else 0) + fleet(N)[2]
                      for N in range(replicas + 1)]
            best_n = totals.index(min(totals))
            res["hybrid_replicas"], res["hybrid_usd_month"] = best_n, totals[best_n]
            res["hybrid_api_share"] = fleet(best_n)[1] / sum(r_h)
        if K is not None:
            totals = []
            for N in range(replicas + 1):
                served, _, api_part = fleet(N)
                d_n = served / (24 * N * c) if N else 0.0
                E_n = s["power_w"] / 1000 * (s["idle_frac"] + (1 - s["idle_frac"]) * d_n) * s["pue"] * s["usd_kwh"] * hours
                bought_n = -(-(N * g) // s["buy_lot"]) * s["buy_lot"]
                totals.append(bought_n * (K + s["colo_usd"]) + N * g * E_n + (bought_n - N * g) * E0
                              + (upkeep if N >= 1 else 0) + api_part)
            best_n = totals.index(min(totals))
            res["hybrid_own_replicas"], res["hybrid_own_usd_month"] = best_n, totals[best_n]
    bills = [("api", out["api_usd_month"]), ("rent", res["rent_usd_month"]), ("own", res["own_usd_month"]),
             ("hybrid", res["hybrid_usd_month"] if res["hybrid_replicas"] not in (None, 0, replicas) else None),
             ("hybrid_own", res["hybrid_own_usd_month"] if res["hybrid_own_replicas"] not in (None, 0, replicas)
              else None)]
    residency = "residency" in str(s.get("why") or "")
    allowed = [(v, i, o) for i, (o, v) in enumerate(bills) if v is not None and (not residency or o in ("rent", "own"))]
    res["best"] = min(allowed)[2] if allowed and not beyond_context(s) else None
    return res


def beyond_context(s) -> bool:
    """docs/method.md section 9 (Best): a request longer than the model preset's trained context (``max_ctx``) is
    served by no option, so none is the best (a custom model has no known context)."""
    preset = catalogue.models().get(s["model"])
    return bool(preset and preset["max_ctx"]) and s["in_tok"] + s["out_tok"] > preset["max_ctx"]


@functools.cache
def _card_arch() -> dict:
    with open(DATA / "card_arch.csv", newline="") as f:
        return {row["card"]: row["arch"] for row in csv.DictReader(f)}


@functools.cache
def _card_families() -> dict:
    """{family in lower case: (family as the file spells it, eff_card, the profiles it covers; empty: all)} from
    calc/data/card_families.csv (docs/method.md section 3.1)."""
    with open(DATA / "card_families.csv", newline="", encoding="utf-8") as f:
        return {r["family"].lower(): (r["family"], float(r["eff_card"]), tuple(r["engines"].split()))
                for r in csv.DictReader(f)}


def region(s) -> tuple:
    """docs/calibration.md section 6: engine x card family (a custom card's from its arch) x model kind x cards per
    replica x packed weights."""
    arch = (_card_families().get(s["arch"], ("unknown",))[0] if s["card"] == "custom"
            else _card_arch().get(s["card"], "unknown"))
    kind = "hybrid" if s.get("state_layers") else "MLA" if s.get("kv_latent") else \
        ("MoE" if s.get("experts") else "dense")
    engine = s["engine"]
    if error_bands()[engine] is not None and not _own_rows(engine):  # a family that shares its engine's figures
        engine = ENGINE_BASE[engine]
    return engine, arch, kind, int(s["gpus"]), packed(s["_bpw"])


@functools.cache
def _own_rows(engine) -> bool:
    with open(DATA / "measurements.csv", newline="") as f:
        return any(row["engine"] == engine for row in csv.DictReader(f))


@functools.cache
def measured_regions() -> frozenset:
    from urllib.parse import parse_qsl
    out = set()
    with open(DATA / "measurements.csv", newline="") as f:
        for row in csv.DictReader(f):
            r = region(resolve(dict(parse_qsl(row["link"], keep_blank_values=True))))
            if r[1] != "unknown":
                out.add(r)
    return frozenset(out)


@functools.cache
def region_bands() -> dict:
    """docs/calibration.md section 6: {(region, metric): (rows, p90)}, the 90th percentile of the absolute
    leave-one-source-out error (calc/data/engine_cv.csv's predictions) of the published rows of each measured
    region, to a hundredth of a per cent as the calibration writes it."""
    from urllib.parse import parse_qsl

    import numpy as np
    with open(DATA / "engine_cv.csv", newline="") as f:
        cv = {row["id"]: row for row in csv.DictReader(f)}
    errs: dict = {}
    with open(DATA / "measurements.csv", newline="") as f:
        for row in csv.DictReader(f):
            c = cv.get(row["id"])
            if c is None or not c["predicted_cv"]:
                continue
            r = region(resolve(dict(parse_qsl(row["link"], keep_blank_values=True))))
            if r[1] != "unknown":
                errs.setdefault((r, row["metric"]), []).append(
                    abs(float(c["predicted_cv"]) / float(c["measured"]) - 1) * 100)
    return {k: (len(v), round(float(np.percentile(v, 90)), 2)) for k, v in errs.items()}


def band(m, s, u, priced, out) -> dict:
    """docs/calibration.md section 6: the self-hosting bill at capacity (1 + b) and 1 / (1 + b) times the model's,
    b the 90th percentile of the leave-one-source-out error of full-load throughput (the step where none), or the
    engine's widest band outside every measured region."""
    bands = error_bands()[s["engine"]] or []
    if not bands:  # an engine nobody measured takes the widest band of any engine
        every = [b for e, bs in error_bands().items() if e != "roofline" for b in (bs or [])]
        bands = [max(every, key=lambda b: (b["p90_pct"], b["median_pct"]))] if every else []
    measured = region(s) in measured_regions()
    res = dict(capacity_measured=measured, capacity_band_pct=None, capacity_band_from=None,
               capacity_band_region_rows=None, replicas_at_band_ends=None, self_host_usd_month_low=None,
               self_host_usd_month_high=None, verdict_marginal=False, break_even_req_day_low=None,
               break_even_req_day_high=None, capacity_kept_out_pct=None, self_host_usd_month_kept_out=None)
    if not bands:
        return res
    by = {b["metric"]: b for b in bands}
    pick = (by.get("max_throughput_tok_s") or by["step_ms"]) if measured else max(bands, key=lambda b: b["p90_pct"])
    if pick["n"] < 10:  # a band of fewer than 10 rows takes the widest of its engine's release families of 10 or more
        # docs/calibration.md section 6: or the band of the engine whose efficiencies it shares (SGLang: vLLM's).
        shares = SHARES_EFFICIENCIES.get(s["engine"])
        wider = sorted((b["p90_pct"], e) for e in ENGINES if e != s["engine"]
                       and (ENGINE_BASE[e] == ENGINE_BASE[s["engine"]] or e == shares) for b in error_bands()[e] or []
                       if b["metric"] == pick["metric"] and (b["n"] >= 10 or e == shares)
                       and b["p90_pct"] > pick["p90_pct"])
        if wider:
            pick = dict(pick, p90_pct=wider[-1][0])
            res["capacity_band_from"] = wider[-1][1]
    # docs/calibration.md section 6: the rows of the scenario's own region (10 or more) where they reach further.
    rows, p90 = region_bands().get((region(s), pick["metric"]), (0, 0.0)) if measured else (0, 0.0)
    if rows >= 10 and round(p90) > round(pick["p90_pct"]):  # wider as bands are written, in whole per cent
        pick = dict(pick, p90_pct=p90)
        res["capacity_band_from"], res["capacity_band_region_rows"] = None, rows
    # ... and a set-up no row measured takes the engine's widest, of its measures and of its regions alike.
    widest = max((p for (reg, _), (n, p) in region_bands().items() if reg[0] == region(s)[0] and n >= 10),
                 default=0.0)
    if not measured and round(widest) > round(pick["p90_pct"]):
        pick = dict(pick, p90_pct=widest)
        res["capacity_band_from"] = None
    res["capacity_band_pct"] = pick["p90_pct"]
    w_end = 1 + pick["p90_pct"] / 100  # docs/calibration.md section 6: the replicas at either end of the band
    res["replicas_at_band_ends"] = [max(1, math.ceil(u * f * s["peak"] - 1e-9)) for f in (1 / w_end, w_end)]
    # docs/calibration.md section 5: the rows kept out of the fit, where their signed median error of the figure
    # that sizes the replicas (throughput, else the step) flatters beyond the band, and the bill at that error.
    kept = {b["metric"]: b for b in (error_bands("kept-out")[s["engine"]]
                                     or error_bands("kept-out").get(SHARES_EFFICIENCIES.get(s["engine"], ""))
                                     or [])}
    worse = kept.get("max_throughput_tok_s") or kept.get("step_ms")
    if worse is not None and worse["signed_median_pct"] > pick["p90_pct"]:
        res["capacity_kept_out_pct"] = worse["signed_median_pct"]
        if priced and out["self_host_usd_month"] is not None:
            res["self_host_usd_month_kept_out"] = (
                max(1, math.ceil(u * (1 + worse["signed_median_pct"] / 100) * s["peak"] - 1e-9)) * s["gpus"]
                * rent(s) * s["hours"] + s["upkeep"])
    if priced and out["self_host_usd_month"] is not None:
        w = 1 + pick["p90_pct"] / 100
        bills = [max(1, math.ceil(u * f * s["peak"] - 1e-9)) * s["gpus"] * rent(s) * s["hours"] + s["upkeep"]
                 for f in (1 / w, w)]
        res["self_host_usd_month_low"], res["self_host_usd_month_high"] = bills
        # docs/calibration.md section 6: up to the bill at the kept-out rows' error where that lies beyond the band.
        top = max(bills[1], res.get("self_host_usd_month_kept_out") or bills[1])
        res["verdict_marginal"] = (out["verdict"] in ("self-host", "api")
                                   and bills[0] <= out["api_usd_month"] <= top)
        # The break-even volume with each request's busy time at 1/(1 + b) and (1 + b) times the model's.
        s_req = s["out_tok"] / out["serving_tok_s"]
        res["break_even_req_day_low"], res["break_even_req_day_high"] = (
            break_even_req_day(s, s_req * f) for f in (1 / w, w))
    return res


# --------------------------------------------------------------------------------------------
# The report: docs/method.md section 1 keys, comm_ms (s5) and the s6 keys.
# --------------------------------------------------------------------------------------------

def reference_report(params) -> dict:
    s = resolve(params)
    m = _si(s)
    n = s["ctx"]
    be = break_even(m, n)
    mb = max_batch(m, n)
    B = auto_batch(m, n) if s["batch"] == "auto" else s["batch"]
    st = step(m, B, n)
    tok_s = B / st
    free = free_bytes(m)
    alloc = m["kvc"] * kv_alloc_gib_per_card(m) * GIB  # docs/method.md section 8.2: the cache the engine allocates
    printed = printed_tokens(m, alloc, n)
    r = dict(
        weights_gib=weight_bytes(m) / GIB,
        kv_bytes_per_token=kv_bytes_per_token(m),
        kv_gib_per_sequence=cache_bytes(m, n) / GIB,
        free_gib=free / GIB,
        fits=free > 0,  # docs/method.md sections 2-4
        max_batch=mb,
        # docs/method.md section 8.2: figures worded as the engines print them.
        weights_loaded_gib=loaded_bytes(m) / m["g"] / GIB,
        kv_cache_gib=max(0.0, alloc) / GIB,
        kv_cache_gib_per_card=max(0.0, alloc) / GIB / m["kvc"],
        kv_tokens=printed[0],
        max_concurrency=printed[1],
        break_even_batch=be,
        batch=B,
        step_ms=st * 1e3,
        tok_s=tok_s,
        tok_s_per_seq=1 / st,
        usd_per_mtok_rent=None, usd_per_mtok_upkeep=None, usd_per_mtok=None, monthly_usd=None,
        memory_caps_batch=be is None or mb < be,  # docs/method.md sections 2-4
        comm_ms=t_comm(m, B) * 1e3,  # docs/method.md sections 2-5
    )
    tr = traffic(m, s)
    g, usd, duty, hours, upkeep = s["gpus"], s["usd_hr"], s["duty"], s["hours"], s["upkeep"]
    if duty is None:  # SPEC section 10: the implied duty per replica, 1 where nothing fits
        duty = 1.0 if tr["duty_traffic"] is None else min(1.0, max(tr["duty_traffic"], 1e-9))
    r["duty_used"] = duty
    r["ctx_used"] = n
    # docs/method.md section 6: the upkeep is one sum for the fleet; at duty=auto the traffic's replicas share it
    r_u = tr["replicas"] if s["duty"] is None and tr["replicas"] else 1
    r["upkeep_replicas"] = r_u
    usd = None if usd is None else rent(s)  # SPEC section 8: the discount applies to every rent figure
    if usd is not None or not NULL_EVERY_USD_FIGURE:
        r["usd_per_mtok_upkeep"] = upkeep / (r_u * tok_s * 3600 * hours * duty) * 1e6  # docs/method.md section 6
    if usd is not None:
        r["usd_per_mtok_rent"] = g * usd / (3600 * tok_s * duty) * 1e6  # docs/method.md sections 2-4
        r["usd_per_mtok"] = r["usd_per_mtok_rent"] + r["usd_per_mtok_upkeep"]  # docs/method.md sections 2-4: the sum
        r["monthly_usd"] = g * usd * hours + upkeep  # docs/method.md sections 2-4
    r.update(tr)
    t_round, tau = spec_round(m, B, n)  # SPEC section 8, at the scenario's batch and context
    r["spec_tok_s"] = B * tau / t_round
    r["spec_tpot_ms"] = t_round / tau * 1e3
    r["spec_speedup"] = r["spec_tok_s"] / tok_s
    # docs/method.md section 8: the engine, each figure used and where it came from, and the measured error band.
    r["engine"] = s["engine"]
    # A figure reads "profile" when it equals the profile's (a printed scenario repeats them), else "link".
    prof = profiles()[s["engine"]]
    own = dict(prof)
    if ENGINE_BASE[s["engine"]] == "vllm" and prof["max_seqs"] is None:  # method.md 8.2: vLLM's default by card
        own["max_seqs"] = min(1024 if s["torch_gib"] >= 70 and "a100" not in s["card"] else 256, s["max_batched_tokens"])
    r["engine_profile"] = {k: {"value": s[k], "from": "profile" if s[k] == own[k] else "link"} for k in PROFILE_KEYS}
    r["error_band"] = error_bands()[s["engine"]]
    r["error_band_kept_out"] = (error_bands("kept-out")[s["engine"]]
                                or error_bands("kept-out").get(SHARES_EFFICIENCIES.get(s["engine"], "")))
    unknown = sorted(k for k in params if k not in link_keys())
    r["warnings"] = [f"unknown key ignored: {k}" for k in unknown]
    if s["usd_hr"] is None:
        r["warnings"].append("no rent price for this card: USD figures are null")
    r["scenario"] = {k: s[k] for k in link_keys()}
    for k in ("ctx", "duty"):  # SPEC section 10: the printed scenario keeps auto
        if s[f"_{k}_auto"]:
            r["scenario"][k] = "auto"
    return r
