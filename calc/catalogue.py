"""Preset catalogue: model shapes, accelerator cards, API prices and cloud GPU quotes.

The figures live in CSV files next to this module (``calc/data/``); every row names its
public source and the date it was read (``source``, ``read_on``), and ``notes`` records each
choice made where sources disagree. Units:

- models: parameters in billions (``params_b``, ``active_b``, ``embed_b``); shapes as integer
  counts; ``window`` and ``max_ctx`` in tokens. Shapes come from Hugging Face ``config.json``
  copies (see each row's ``source``).
- cards: memory in GiB (2**30 bytes) as the driver reports it (``nvidia-smi`` total with ECC on,
  ``rocm-smi``/``hl-smi`` VRAM total: ``mem_mib`` / 1024), not the marketing label, which stays in
  the card's name; each card names the document that shows the figure (``mem_source``,
  ``mem_read_on``). Memory bandwidth in TB/s (1e12 B/s), dense peaks in TFLOP/s (TOPS for int8; never the "with
  sparsity" figures), interconnect in GB/s (1e9 B/s) one direction per card, rent in USD per
  card-hour. Peaks come from vendor datasheets or tables quoting them; rents from the
  cheapest on-demand quote in ``cloud_prices.csv`` (h100-sxm: the reference preset, 2.50).
- apis: USD per 1M input / output tokens, from the public litellm price list dated 2026-07-24.
  Rows flagged in the source, zero prices and prices outside 0.01..200 USD per 1M are rejected
  at load (and logged); see :func:`load_api_prices`. A row may carry a long-prompt tier, as the
  price list publishes it (``input_cost_per_token_above_200k_tokens`` and the like): a threshold
  in prompt tokens (``tier_above_tok``) and the prices of a request whose prompt exceeds it
  (``tier_api_in``, ``tier_api_out``), with their own source and read date.

Everything is read once and cached; the returned mappings are read-only, so a caller cannot
alter what the next caller sees (copy with ``dict(row)`` to get a mutable row).
This module uses only the standard library (pandas, for the cloud quotes table only, is imported when asked for).
"""

from __future__ import annotations

import csv
import datetime as _dt
import functools
import logging
import math
import re
import types
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from . import rules

if TYPE_CHECKING:
    import pandas as pd


__all__ = [
    "API_PRICE_MAX",
    "API_PRICE_MIN",
    "DATA_DIR",
    "LABEL_USED",
    "PRECISIONS",
    "CatalogueError",
    "apis",
    "cards",
    "cloud_prices",
    "load_api_prices",
    "load_cards",
    "load_models",
    "load_weight_formats",
    "memory_text",
    "models",
    "rejected_apis",
    "weight_formats",
]

log = logging.getLogger(__name__)

#: Folder holding the catalogue CSV files.
DATA_DIR = Path(__file__).resolve().parent / "data"

#: Accepted band for an API price, USD per 1M tokens (both ends included).
API_PRICE_MIN = 0.01
API_PRICE_MAX = 200.0
#: A provider quoting one price for this many open-weight model families or more is taken as a placeholder.
PLACEHOLDER_FAMILIES = 4

#: Precisions a card may have a dense peak for (keys of ``cards()[id]["peaks"]``).
PRECISIONS = ("bf16", "fp16", "fp8", "int8", "fp4")

_PRESET_ID_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")  # model and card ids
_API_ID_RE = re.compile(r"[a-z0-9][^\sA-Z,]*")  # litellm keys, lowercased

MODEL_COLUMNS = (
    "id", "name", "params_b", "active_b", "layers", "heads", "kv_heads", "head_dim", "hidden",
    "experts", "experts_active", "kv_latent", "window", "window_layers", "embed_b", "weights",
    "weights_experts", "max_ctx",
    "api_ref", "api_ref_note", "source", "read_on", "notes",
    "vocab", "linear_layers", "state_kib", "weights_attn", "weights_embed", "layers_full",
)
CARD_COLUMNS = (
    "id", "name", "vendor", "mem_gib", "mem_mib", "mem_source", "mem_read_on", "bw_tbs", "bf16_tflops",
    "fp16_tflops", "fp8_tflops",
    "int8_tops", "fp4_tflops", "link_gbs", "link_kind", "usd_hr", "usd_hr_source",
    "usd_hr_date", "source", "read_on", "notes",
)
API_COLUMNS = (
    "id", "provider", "model", "family", "kind", "api_in", "api_out", "api_cached", "source", "read_on", "flag",
    "tier_above_tok", "tier_api_in", "tier_api_out", "tier_source", "tier_read_on",
)
#: Columns of a long-prompt tier: all empty (no tier) or all given.
TIER_COLUMNS = ("tier_above_tok", "tier_api_in", "tier_api_out", "tier_source", "tier_read_on")
API_KINDS = ("open-weight", "closed")
#: What a card's notes say when no driver-reported memory figure was found and the label is used.
LABEL_USED = "driver figure not found; label used"
CLOUD_NUMERIC = ("gpus_per_instance", "usd_per_instance_hour", "usd_per_gpu_hour")


class CatalogueError(ValueError):
    """A catalogue data file is malformed or inconsistent (names the file, line and column)."""


class _ReadOnlyDict(dict):
    """A ``dict`` that refuses changes, so cached rows cannot be altered by a caller.

    It still is a ``dict`` (``isinstance``, ``json.dumps``, ``dict(row)`` and ``{**row}`` work);
    ``dict(row)`` gives a mutable copy.
    """

    __slots__ = ()

    def _refuse(self, *args, **kwargs):
        raise TypeError("catalogue rows are read-only; copy with dict(row) to change one")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return (type(self), (dict(self),))

    def __reduce_ex__(self, protocol):
        return self.__reduce__()


# --------------------------------------------------------------------------- parsing helpers


class _Row:
    """One CSV row with typed accessors whose errors name the file, line and column."""

    def __init__(self, path: Path, line: int, data: dict):
        self.path, self.line, self.data = path, line, data

    def fail(self, column: str, message: str) -> CatalogueError:
        value = self.data.get(column, "")
        return CatalogueError(
            f"{self.path.name} line {self.line}, column {column!r} (value {value!r}): {message}"
        )

    def text(self, column: str, required: bool = True) -> str:
        value = (self.data.get(column) or "").strip()
        if required and not value:
            raise self.fail(column, "must not be empty")
        return value

    def number(self, column: str, *, optional: bool = False) -> float | None:
        raw = self.text(column, required=not optional)
        if raw == "":
            return None
        try:
            value = float(raw)
        except ValueError:
            raise self.fail(column, "is not a number") from None
        if not math.isfinite(value):
            raise self.fail(column, "must be finite")
        return value

    def positive(self, column: str, *, optional: bool = False) -> float | None:
        value = self.number(column, optional=optional)
        if value is not None and value <= 0:
            raise self.fail(column, "must be > 0 (leave the cell empty when unknown or absent)")
        return value

    def integer(self, column: str, minimum: int = 0) -> int:
        raw = self.text(column)
        if not re.fullmatch(r"[0-9]+", raw):
            raise self.fail(column, "is not a whole number")
        value = int(raw)
        if value < minimum:
            raise self.fail(column, f"must be >= {minimum}")
        return value

    def date(self, column: str) -> str:
        raw = self.text(column)
        try:
            _dt.date.fromisoformat(raw)
        except ValueError:
            raise self.fail(column, "is not a date YYYY-MM-DD") from None
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
            raise self.fail(column, "is not a date YYYY-MM-DD")
        return raw

    def ident(self, pattern: re.Pattern = _PRESET_ID_RE, column: str = "id") -> str:
        raw = self.text(column)
        if not pattern.fullmatch(raw):
            raise self.fail(column, "ids are lowercase, without spaces or commas")
        return raw


def _read_rows(path: Path, columns: tuple[str, ...]) -> list[_Row]:
    """Read a CSV file, checking its header holds every expected column."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            missing = [c for c in columns if c not in header]
            if missing:
                raise CatalogueError(f"{path.name}: missing column(s) {', '.join(missing)}")
            rows = []
            for data in reader:
                if None in data:
                    raise CatalogueError(
                        f"{path.name} line {reader.line_num}: more cells than header columns"
                    )
                if not any((v or "").strip() for v in data.values()):
                    continue
                rows.append(_Row(path, reader.line_num, data))
    except OSError as exc:
        raise CatalogueError(f"cannot read catalogue file {path}: {exc}") from exc
    if not rows:
        raise CatalogueError(f"{path.name}: no rows")
    return rows


def _check_unique(row: _Row, key: str, seen: set[str]) -> None:
    if key in seen:
        raise row.fail("id", "duplicate id")
    seen.add(key)


# --------------------------------------------------------------------------- API prices


def load_api_prices(path) -> tuple[dict, list[tuple[str, str]]]:
    """Read an API price file and split it into accepted and rejected rows.

    ``path``: a CSV with columns ``id, provider, model, family, kind, api_in, api_out, api_cached (the price of a
    cached input token where the list has one, else empty), source, read_on, flag`` and the long-prompt tier ``tier_above_tok, tier_api_in, tier_api_out,
    tier_source, tier_read_on`` (all empty when the row has no tier); prices in USD per 1M tokens
    (input, output); the threshold in prompt tokens.

    A row is rejected, with its reason, when its ``flag`` cell is not empty (the source marked it
    wrong), when its provider lists the same price for :data:`PLACEHOLDER_FAMILIES` or more open-weight model
    families (a placeholder copied across rows: hyperbolic's 0.12 / 0.30 for 3B to 405B models in the 2026-07-24
    list), when a price is zero (a placeholder, not a quote) or when a price lies outside
    ``API_PRICE_MIN``..``API_PRICE_MAX`` (0.01..200 USD per 1M, which catches prices off by
    orders of magnitude); the tier's prices are held to the same band. Each rejection is logged:
    at INFO when the source had flagged the row, at WARNING otherwise.

    Returns ``(accepted, rejected)``: ``accepted`` maps id -> dict with keys provider, model,
    family, kind, api_in, api_out, api_cached (None when the list has none), source, read_on, tier_above_tok (int, None without a tier),
    tier_api_in, tier_api_out (None without a tier), tier_source, tier_read_on ("" without a
    tier); ``rejected`` is a list of (id, reason).
    Raises :class:`CatalogueError` when the file itself is broken (missing column, duplicate or
    malformed id, a price that is not a number, an unknown kind, a bad date, a tier given in part).
    """
    accepted: dict[str, dict] = {}
    rejected: list[tuple[str, str]] = []
    seen: set[str] = set()
    for row in _read_rows(Path(path), API_COLUMNS):
        key = row.ident(_API_ID_RE)
        _check_unique(row, key, seen)
        kind = row.text("kind")
        if kind not in API_KINDS:
            raise row.fail("kind", f"must be one of {', '.join(API_KINDS)}")
        rec = {
            "provider": row.text("provider"),
            "model": row.text("model"),
            "family": row.text("family"),
            "kind": kind,
            "api_in": row.number("api_in"),
            "api_out": row.number("api_out"),
            "api_cached": row.number("api_cached", optional=True),
            "source": row.text("source"),
            "read_on": row.date("read_on"),
            **_tier(row),
        }
        flag = row.text("flag", required=False)
        reasons = []
        if flag:
            reasons.append(f"flagged in the source data: {flag}")
        priced = ("api_in", "api_out") + (("tier_api_in", "tier_api_out") if rec["tier_above_tok"] else ())
        for col in priced:
            price = rec[col]
            if price == 0:
                reasons.append(f"{col} is 0 USD per 1M tokens (a placeholder, not a quote)")
            elif not API_PRICE_MIN <= price <= API_PRICE_MAX:
                reasons.append(
                    f"{col} = {price:g} USD per 1M tokens is outside the accepted band "
                    f"{API_PRICE_MIN:g}..{API_PRICE_MAX:g}"
                )
        if reasons:
            reason = "; ".join(reasons)
            rejected.append((key, reason))
            level = logging.INFO if flag else logging.WARNING
            log.log(level, "API price row %r rejected: %s", key, reason)
        else:
            accepted[key] = rec
    # One provider's one price for many open-weight model families (3B to 405B alike) is a placeholder copied across
    # its rows, not a quote: no provider sells a 405B model's tokens at its 3B model's price.
    same: dict[tuple, list[str]] = {}
    for key, rec in accepted.items():
        if rec["kind"] == "open-weight":
            same.setdefault((rec["provider"], rec["api_in"], rec["api_out"]), []).append(key)
    for (provider, api_in, api_out), keys in same.items():
        families = sorted({accepted[k]["family"] for k in keys})
        if len(families) >= PLACEHOLDER_FAMILIES:
            reason = (f"{provider} lists one price, {api_in:g} / {api_out:g} USD per 1M, for {len(families)} model "
                      f"families ({', '.join(families)}): a placeholder copied across its rows, not a quote")
            for k in keys:
                del accepted[k]
                rejected.append((k, reason))
                log.info("API price row %r rejected: %s", k, reason)
    return accepted, rejected


def _tier(row: _Row) -> dict:
    """The long-prompt tier of a price row: every tier cell given, or none."""
    given = [c for c in TIER_COLUMNS if row.text(c, required=False)]
    if not given:
        return {"tier_above_tok": None, "tier_api_in": None, "tier_api_out": None,
                "tier_source": "", "tier_read_on": ""}
    if len(given) != len(TIER_COLUMNS):
        missing = next(c for c in TIER_COLUMNS if c not in given)
        raise row.fail(missing, f"a long-prompt tier needs every one of {', '.join(TIER_COLUMNS)}")
    return {
        "tier_above_tok": row.integer("tier_above_tok", 1),
        "tier_api_in": row.number("tier_api_in"),
        "tier_api_out": row.number("tier_api_out"),
        "tier_source": row.text("tier_source"),
        "tier_read_on": row.date("tier_read_on"),
    }


@functools.cache
def _api_table() -> tuple[Mapping[str, dict], tuple[tuple[str, str], ...]]:
    accepted, rejected = load_api_prices(DATA_DIR / "api_prices.csv")
    if not accepted:
        raise CatalogueError("api_prices.csv: every row was rejected")
    frozen = {k: _ReadOnlyDict(v) for k, v in accepted.items()}
    return types.MappingProxyType(frozen), tuple(rejected)


@functools.cache
def apis() -> Mapping[str, dict]:
    """API price presets that passed the checks: id -> row (read-only).

    id is the litellm key lowercased (e.g. ``"together_ai/openai/gpt-oss-120b"``). Each row has
    ``provider``, ``model``, ``family``, ``kind`` ("open-weight" or "closed"), ``api_in`` and
    ``api_out`` (USD per 1M input / output tokens), ``source`` and ``read_on`` (YYYY-MM-DD), and
    its long-prompt tier: ``tier_above_tok`` (prompt tokens; None when the row has no tier),
    ``tier_api_in`` and ``tier_api_out`` (USD per 1M, the prices of a whole request whose prompt
    exceeds the threshold), ``tier_source`` and ``tier_read_on``.
    Source: the public litellm price list dated 2026-07-24 (``calc/data/api_prices.csv``).
    """
    return _api_table()[0]


def api_ids_for(current: str | None) -> list[str]:
    """The API price ids in the order a picker offers them: the rows of ``current``'s model family first, then
    open-weight before closed, by family, each family's cheapest (input plus output price per 1M tokens) first."""
    rows = apis()
    family = rows[current]["family"] if current in rows else None
    return sorted(rows, key=lambda a: (rows[a]["family"] != family, rows[a]["kind"] != "open-weight",
                                       rows[a]["family"], rows[a]["api_in"] + rows[a]["api_out"]))


def cached_input_price(row: Mapping) -> float:
    """USD per 1M cached prompt tokens of an API price row: the list's cached-input price, else its input price
    (a list without one bills a cached token as any other; docs/method.md section 9)."""
    return row["api_cached"] if row.get("api_cached") is not None else row["api_in"]


@functools.cache
def rejected_apis() -> tuple[tuple[str, str], ...]:
    """Rows of ``api_prices.csv`` refused at load, as (id, reason) pairs (see load_api_prices)."""
    return _api_table()[1]


# --------------------------------------------------------------------------- models


def load_models(path, api_ids=None) -> dict[str, dict]:
    """Read and check a model-shape file; returns id -> plain dict (not cached).

    Columns as in ``calc/data/models.csv``. Checks: positive sizes and counts,
    ``kv_heads <= heads``, ``active_b <= params_b``, ``embed_b < active_b``, MoE fields
    (``experts`` 0 or >= 2, ``1 <= experts_active < experts``, and the dense part less the
    embedding table not negative), ``window_layers <= layers`` with a window, and, when
    ``api_ids`` is given, that ``api_ref`` is one of them. Raises :class:`CatalogueError`
    naming the file, line and column of the first problem.
    """
    out: dict[str, dict] = {}
    seen: set[str] = set()
    for row in _read_rows(Path(path), MODEL_COLUMNS):
        key = row.ident()
        _check_unique(row, key, seen)
        m = {
            "name": row.text("name"),
            "params_b": row.positive("params_b"),
            "active_b": row.positive("active_b"),
            "layers": row.integer("layers", 1),
            "heads": row.integer("heads", 1),
            "kv_heads": row.integer("kv_heads", 1),
            "head_dim": row.integer("head_dim", 1),
            "hidden": row.integer("hidden", 1),
            "experts": row.integer("experts", 0),
            "experts_active": row.integer("experts_active", 0),
            "kv_latent": row.integer("kv_latent", 0),
            "window": row.integer("window", 0),
            "window_layers": row.integer("window_layers", 0),
            "embed_b": row.number("embed_b"),
            "vocab": row.integer("vocab", 1),
            "linear_layers": row.integer("linear_layers", 0),
            # Every linear layer of a preset holds its state; no preset runs a state beside attention (Falcon-H1).
            "state_layers": row.integer("linear_layers", 0),
            "state_kib": row.number("state_kib"),
            # The formats the checkpoint ships in, where it ships quantized; empty: the link's default. A
            # checkpoint may keep its attention projections, embeddings and some whole blocks in other formats.
            "weights": row.text("weights", required=False) or None,
            "weights_experts": row.text("weights_experts", required=False) or None,
            "weights_attn": row.text("weights_attn", required=False) or None,
            "weights_embed": row.text("weights_embed", required=False) or None,
            "layers_full": int(row.text("layers_full", required=False) or 0),
            "max_ctx": row.integer("max_ctx", 1),
            "api_ref": row.text("api_ref"),
            # Non-empty when the reference API row is another model's price standing in for this one.
            "api_ref_note": row.text("api_ref_note", required=False),
            "source": row.text("source"),
            "read_on": row.date("read_on"),
            "notes": row.text("notes", required=False),
        }
        # The rules every scenario obeys (calc/rules.py), then what a preset row must hold beyond them.
        if m["embed_b"] < 0:
            raise row.fail("embed_b", "must be >= 0")
        broken = rules.first_broken(m, keys=set(m))
        if broken is not None:
            rule, reason = broken
            raise row.fail(rule.name or rule.keys[0], reason)
        if m["experts"] == 0:
            if m["experts_active"] != 0:
                raise row.fail("experts_active", "must be 0 for a dense model (experts = 0)")
            if m["active_b"] != m["params_b"]:
                raise row.fail("active_b", "must equal params_b for a dense model")
        if m["state_kib"] < 0 or (m["linear_layers"] > 0) != (m["state_kib"] > 0):
            raise row.fail("state_kib", "must be > 0 exactly when linear_layers > 0")
        for col in ("weights", "weights_experts", "weights_attn", "weights_embed"):
            if m[col] is not None and m[col] not in weight_formats():
                raise row.fail(col, "is not a format of weight_formats.csv")
        if (m["weights"] is None) != (m["weights_experts"] is None):
            raise row.fail("weights_experts", "weights and weights_experts are both set or both empty")
        if (m["window"] == 0) != (m["window_layers"] == 0):
            raise row.fail("window_layers", "window and window_layers must both be 0 or both set")
        if api_ids is not None and m["api_ref"] not in api_ids:
            raise row.fail("api_ref", "is not an accepted id of api_prices.csv")
        out[key] = m
    return out


@functools.cache
def models() -> Mapping[str, dict]:
    """Model presets: id -> shape (read-only).

    Keys: name, params_b, active_b, embed_b (billions of parameters; ``active_b`` is the
    parameters used per token, including the embedding tables; ``embed_b`` the untied input
    embedding a decode step does not read, 0 when tied), layers, heads, kv_heads, head_dim,
    hidden, experts and experts_active (routed experts per MoE layer and per token; 0 = dense),
    kv_latent (MLA cached latent width, 0 = none), window and window_layers (sliding-window
    tokens and how many layers use it, 0 = none), max_ctx (tokens), api_ref (an id of
    :func:`apis`), source, read_on (YYYY-MM-DD), notes. Integers are ``int``.
    Source: Hugging Face config.json copies, see each row (``calc/data/models.csv``).
    """
    table = load_models(DATA_DIR / "models.csv", api_ids=apis())
    return types.MappingProxyType({k: _ReadOnlyDict(v) for k, v in table.items()})


# --------------------------------------------------------------------------- cards

_PEAK_COLUMNS = {
    "bf16": "bf16_tflops",
    "fp16": "fp16_tflops",
    "fp8": "fp8_tflops",
    "int8": "int8_tops",
    "fp4": "fp4_tflops",
}


def nearest_model(active_b: float) -> str:
    """The id of the catalogue model nearest in active parameters per token (billions) to ``active_b`` (by ratio;
    the smaller on a tie) among those priced by an API row of their own (no ``api_ref_note`` stand-in): a custom
    model's stand-in for the API row to compare with, so a 7B model is not priced against a 70B model's API. The
    active parameters set the arithmetic and the weight reads per token that a provider's price pays for."""
    own = [m for m, row in models().items() if not row.get("api_ref_note")]
    return min(own, key=lambda m: (abs(math.log(models()[m]["active_b"] / active_b)), models()[m]["active_b"]))


def load_cards(path) -> dict[str, dict]:
    """Read and check an accelerator-card file; returns id -> plain dict (not cached).

    Columns as in ``calc/data/cards.csv``. Memory, bandwidth and the bf16 peak must be > 0;
    memory needs its source and read date, and where the driver figure ``mem_mib`` is given,
    ``mem_gib`` must be exactly ``mem_mib / 1024`` (an empty ``mem_mib`` means no driver figure
    was found and the label is used, which ``notes`` must say);
    other peaks, ``link_gbs`` and ``usd_hr`` may be empty (None) but otherwise must be > 0
    (``usd_hr`` >= 0); a rent needs its ``usd_hr_source`` and ``usd_hr_date``. Raises
    :class:`CatalogueError` naming the file, line and column of the first problem.
    """
    out: dict[str, dict] = {}
    seen: set[str] = set()
    for row in _read_rows(Path(path), CARD_COLUMNS):
        key = row.ident()
        _check_unique(row, key, seen)
        peaks = {p: row.positive(col, optional=True) for p, col in _PEAK_COLUMNS.items()}
        if peaks["bf16"] is None:
            raise row.fail("bf16_tflops", "every card needs a dense bf16 peak")
        usd = row.number("usd_hr", optional=True)
        if usd is not None:
            if usd < 0:
                raise row.fail("usd_hr", "must be >= 0")
            usd_source = row.text("usd_hr_source")
            usd_date = row.date("usd_hr_date")
        else:
            usd_source = row.text("usd_hr_source", required=False)
            usd_date = row.text("usd_hr_date", required=False)
        mem_gib = row.positive("mem_gib")
        mem_mib = None
        if row.text("mem_mib", required=False):
            mem_mib = row.integer("mem_mib", 1)
            if not math.isclose(mem_gib, mem_mib / 1024, rel_tol=0, abs_tol=1e-9):
                raise row.fail("mem_gib", f"must be mem_mib / 1024 = {mem_mib / 1024!r} GiB (the driver figure)")
        elif LABEL_USED not in row.text("notes", required=False):
            raise row.fail("mem_mib", f"is empty: notes must say '{LABEL_USED}'")
        link = row.positive("link_gbs", optional=True)
        link_kind = row.text("link_kind", required=link is not None)
        out[key] = {
            "name": row.text("name"),
            "vendor": row.text("vendor"),
            "mem_gib": mem_gib,
            "mem_mib": mem_mib,
            "mem_source": row.text("mem_source"),
            "mem_read_on": row.date("mem_read_on"),
            "bw_tbs": row.positive("bw_tbs"),
            "peaks": peaks,
            "link_gbs": link,
            "link_kind": link_kind,
            "usd_hr": usd,
            "usd_hr_source": usd_source,
            "usd_hr_date": usd_date,
            "source": row.text("source"),
            "read_on": row.date("read_on"),
            "notes": row.text("notes", required=False),
            # The total CUDA reports (torch.cuda.mem_get_info), which vLLM and SGLang take their share of.
            "torch_gib": row.positive("torch_mem_gib", optional=True),
            "torch_source": row.text("torch_mem_source", required=False),
            # SPEC section 9: board power (datasheet) and a public purchase price, each with its source.
            "power_w": row.positive("power_w", optional=True),
            "power_source": row.text("power_source", required=False),
            "card_usd": row.positive("card_usd", optional=True),
            "card_usd_source": row.text("card_usd_source", required=False),
            "card_usd_date": row.text("card_usd_date", required=False),
        }
        if out[key]["torch_gib"] is not None and out[key]["torch_gib"] > mem_gib:
            raise row.fail("torch_mem_gib", f"must be <= mem_gib ({mem_gib:g})")
        out[key].update(_extra_figures(row, CARD_COLUMNS + _CARD_READ))
    return out


#: The card columns read by name besides :data:`CARD_COLUMNS` (each figure with its source).
_CARD_READ = ("torch_mem_gib", "torch_mem_source", "power_w", "power_source", "card_usd", "card_usd_source",
              "card_usd_date")


def _extra_figures(row: _Row, known: tuple[str, ...]) -> dict:
    """Any other figure column of a preset row, read as a positive number with its ``<column>_source`` (and an
    optional ``<column>_date``), so that a link key reading that figure from the preset needs only its key row and
    the data column. A column that is neither a figure with its source nor a figure's source or date is refused:
    no figure without a public source."""
    columns = [c for c in row.data if c not in known]
    figures = [c for c in columns if f"{c}_source" in row.data]
    out = {}
    for c in figures:
        value = row.positive(c, optional=True)
        out[c] = value
        out[f"{c}_source"] = row.text(f"{c}_source", required=value is not None)
    for c in columns:
        if c not in figures and not any(c in (f"{f}_source", f"{f}_date") for f in figures):
            raise row.fail(c, f"is neither a figure with its source column ({c}_source) nor a figure's source")
    return out


@functools.cache
def cards() -> Mapping[str, dict]:
    """Accelerator presets: id -> card (read-only).

    Keys: name (with the marketing memory label, e.g. "L40S 48 GB"), vendor, mem_gib (GiB per
    card as the driver reports it: ``mem_mib / 1024``; the label read as GiB where no driver figure
    was found), mem_mib (the driver's total in MiB, None where not found), mem_source and
    mem_read_on (the public document showing that figure, and when it was read), bw_tbs
    (memory bandwidth, TB/s = 1e12 B/s), peaks (dict bf16/fp16/fp8/int8/fp4 -> dense peak in
    TFLOP/s, TOPS for int8, None where the card has no such units or the figure is unknown;
    never a "with sparsity" figure), link_gbs (interconnect per card, one direction, GB/s;
    None if unknown), link_kind, usd_hr (USD per card-hour, None when no quote),
    usd_hr_source, usd_hr_date, source, read_on (YYYY-MM-DD), notes.
    Sources: vendor datasheets and tables quoting them, see each row (``calc/data/cards.csv``).
    """
    frozen = {}
    for key, card in load_cards(DATA_DIR / "cards.csv").items():
        frozen[key] = _ReadOnlyDict(card, peaks=_ReadOnlyDict(card["peaks"]))
    return types.MappingProxyType(frozen)


#: Cards joined by their fast link in a group other than one 8-card server (HGX, OAM and Gaudi baseboards hold 8):
#: H100 NVL pairs through a 2-way NVLink bridge; a GB200 NVL72 rack joins 72 GPUs over NVLink 5. Cards on PCIe have
#: no faster link to leave, so they are not listed (their link_gbs is the network's order already).
SCALE_UP = {"h100-nvl": 2, "gb200": 72}
#: Above this link speed (GB/s per card) a card's link is a scale-up fabric, faster than a network port.
FABRIC_GBS = 100


def scale_up_cards(card_id: str) -> int:
    """How many cards of ``card_id`` share the fast link the figures price (``link_gbs``): :data:`SCALE_UP`, else 8
    for a card on a fabric faster than :data:`FABRIC_GBS` (an 8-card baseboard), else no limit (a large number)."""
    card = cards().get(card_id) or {}
    if card_id in SCALE_UP:
        return SCALE_UP[card_id]
    return 8 if (card.get("link_gbs") or 0) > FABRIC_GBS else 1_000_000


def buy_lot(card_id: str) -> int:
    """Cards of ``card_id`` bought as one unit (SPEC section 9's owned fleet is bought in whole units): the cards one
    baseboard holds where the card is sold on one (:func:`scale_up_cards`: 8 for an SXM or OAM card on an 8-card
    baseboard such as NVIDIA's HGX H100 8-GPU, 72 for a GB200 NVL72 rack, 2 for an H100 NVL bridged pair), else 1
    (a PCIe card, sold one by one, and a custom card)."""
    cards_joined = scale_up_cards(card_id)
    return cards_joined if card_id in cards() and cards_joined < 1_000_000 else 1


def memory_text(card: Mapping) -> str:
    """A card's memory for people: "44.99 GiB (46,068 MiB)" from the driver's figure, or
    "256 GiB (label; driver figure not found)" where the label is used."""
    if card["mem_mib"] is None:
        return f"{card['mem_gib']:g} GiB (label; driver figure not found)"
    return f"{card['mem_gib']:.2f} GiB ({card['mem_mib']:,} MiB)"


# --------------------------------------------------------------------------- cloud quotes


@functools.cache
def _cloud_frame() -> pd.DataFrame:
    import pandas as pd  # only this table needs it: `import calc` stays light

    path = DATA_DIR / "cloud_prices.csv"
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError) as exc:
        raise CatalogueError(f"cannot read {path.name}: {exc}") from exc
    missing = [c for c in (*CLOUD_NUMERIC, "provider", "gpu", "pricing_type", "card_id")
               if c not in frame.columns]
    if missing:
        raise CatalogueError(f"{path.name}: missing column(s) {', '.join(missing)}")
    for col in CLOUD_NUMERIC:
        text = frame[col].str.strip()
        values = pd.to_numeric(text.where(text != ""), errors="coerce")
        bad = values.isna() & (text != "")
        if bad.any():
            line = int(bad.idxmax()) + 2
            raise CatalogueError(f"{path.name} line {line}, column {col!r}: not a number")
        frame[col] = values
    known = set(cards())
    unknown = sorted(set(frame["card_id"]) - known - {""})
    if unknown:
        raise CatalogueError(f"{path.name}: card_id not in cards.csv: {', '.join(unknown)}")
    return frame


def cloud_prices() -> pd.DataFrame:
    """Cloud GPU quotes for display: one row per offer seen (a fresh copy on each call).

    Columns as in the shared quote table (provider, product_or_instance, gpu,
    gpus_per_instance, usd_per_instance_hour, usd_per_gpu_hour in USD per hour, pricing_type,
    region, date_seen, source, notes) plus ``card_id``, the id in :func:`cards` ("" when the
    GPU is not in the catalogue). Prices are NaN where the source gave none. Includes spot,
    marketplace and capacity-block rows; the card presets use only on-demand quotes.
    """
    return _cloud_frame().copy()


# --------------------------------------------------------------------------- weight formats

FORMAT_COLUMNS = ("name", "bits", "kind", "source", "read_on", "notes")


def load_weight_formats(path) -> dict[str, dict]:
    """Read and check a weight-format file; returns name -> {bits, kind, source, read_on, notes}.

    ``bits`` is the effective bits per weight, scales included, 1..32. Raises :class:`CatalogueError`
    naming the file, line and column of the first problem.
    """
    out: dict[str, dict] = {}
    seen: set[str] = set()
    for row in _read_rows(Path(path), FORMAT_COLUMNS):
        name = row.ident(column="name")
        _check_unique(row, name, seen)
        bits = row.positive("bits")
        if not 1 <= bits <= 32:
            raise row.fail("bits", "must be from 1 to 32")
        out[name] = {"bits": bits, "kind": row.text("kind"), "source": row.text("source"),
                     "read_on": row.date("read_on"), "notes": row.text("notes", required=False)}
    return out


@functools.cache
def weight_formats() -> Mapping[str, dict]:
    """Named weight formats: name -> {bits (per weight, scales included), kind, source, read_on, notes}.

    Source: ``calc/data/weight_formats.csv`` (block layouts from format specifications; GGUF K-quant
    mixes from published file sizes, since a K-quant file mixes tensor types).
    """
    table = load_weight_formats(DATA_DIR / "weight_formats.csv")
    return types.MappingProxyType({k: _ReadOnlyDict(v) for k, v in table.items()})


@functools.cache
def on_demand_quotes(card_id: str) -> tuple[float, ...]:
    """The on-demand USD per card-hour quotes for ``card_id`` in ``cloud_prices.csv``, lowest first (spot,
    marketplace and reserved prices left out); empty when there is none."""
    with (DATA_DIR / "cloud_prices.csv").open(newline="", encoding="utf-8") as f:
        return tuple(sorted(float(r["usd_per_gpu_hour"]) for r in csv.DictReader(f)
                            if r.get("card_id") == card_id and r.get("pricing_type", "").strip() == "on-demand"
                            and (r.get("usd_per_gpu_hour") or "").strip()))


def on_demand_rents(card_id: str) -> tuple[float, float, int] | None:
    """(lowest, highest, count) of :func:`on_demand_quotes` for ``card_id``, or None when there is none."""
    quotes = on_demand_quotes(card_id)
    return (quotes[0], quotes[-1], len(quotes)) if quotes else None


#: The shape figures a config must share with a preset to be that preset.
_SHAPE = ("layers", "heads", "kv_heads", "head_dim", "hidden", "experts", "experts_active", "kv_latent", "window",
          "window_layers")


#: The checkpoint formats a preset may ship and a config.json import may read (SPEC: weights per part).
FORMAT_KEYS = ("weights", "weights_experts", "weights_attn", "weights_embed", "layers_full")


def match_model(shape: Mapping) -> str | None:
    """The id of the model preset with the same shape as ``shape`` (link keys, as a config.json import gives
    them): every shape figure equal and the parameter counts within 0.1 %; None when no preset has it. Of several
    presets of one shape (Llama 3.1 405B and Meta's FP8 release of it), the one whose shipped formats are the
    config's is chosen, else the first."""
    same = [mid for mid, m in models().items()
            if all(shape.get(k, 0) == m[k] for k in _SHAPE) and all(
                math.isclose(float(shape.get(k, 0.0)), m[k], rel_tol=1e-3, abs_tol=1e-6)
                for k in ("params_b", "active_b", "embed_b"))]
    for mid in same:
        if format_differences(shape, mid) == {}:
            return mid
    return same[0] if same else None


def format_differences(shape: Mapping, mid: str) -> dict:
    """The checkpoint formats ``shape`` states that preset ``mid`` does not ship (``{}``: it ships them all, or
    the shape states none). A part the preset ships no format for follows the link's weights, not 16 bits, so a
    part the shape states stays stated: a config.json that keeps its LM head in bf16 beside FP8 weights keeps it
    when its shape is a preset's."""
    m = models()[mid]
    out = {}
    for k in FORMAT_KEYS:
        if k in shape and (m[k] is None or str(shape[k]) != str(m[k])):
            out[k] = shape[k]
    return out


QUALITY_COLUMNS = ("format", "model", "metric", "baseline", "quantized", "delta", "unit", "source", "read_on", "note")


@functools.cache
def first_address(source: str) -> str | None:
    """The first web address in a source text (``https://...`` up to the first space), or None: the link a
    table opens while the whole text stays in its CSV. Punctuation that closes the sentence around it
    (``.,;:)``) is not part of the address."""
    start = source.find("https://")
    return source[start:].split()[0].rstrip(".,;:)") if start >= 0 else None


def quality() -> Mapping[str, list[dict]]:
    """Published quality costs of formats against 16-bit (``quality.csv``): format id (a weight format, or
    ``kv:<format>`` for a KV-cache format) -> its rows, each with ``model``, ``metric``, ``baseline``,
    ``quantized``, ``delta`` (floats or None), ``unit``, ``source``, ``read_on``, ``note``, and for display
    ``delta_text`` ("+0.1754 ppl"), ``summary`` ("<metric>: <delta_text> on <model>") and ``source_short`` (the
    source up to its first space). A format absent from
    the file has nothing published in it. Raises :class:`CatalogueError` for a malformed file."""
    out: dict[str, list[dict]] = {}
    path = DATA_DIR / "quality.csv"
    if not path.exists():
        return out
    for row in _read_rows(path, QUALITY_COLUMNS):
        fmt = row.text("format")
        rec = {"model": row.text("model"), "metric": row.text("metric"),
               "baseline": row.number("baseline", optional=True), "quantized": row.number("quantized", optional=True),
               "delta": row.number("delta", optional=True), "unit": row.text("unit"), "source": row.text("source"),
               "read_on": row.date("read_on"), "note": row.text("note", required=False)}
        if rec["unit"] == "% recovery" and rec["quantized"] is not None:  # a share of the 16-bit score
            rec["delta_text"] = f"{rec['quantized']:g} % of the 16-bit score"
        elif rec["unit"] == "% points" and rec["delta"] is not None:
            rec["delta_text"] = f"{rec['delta']:+g} points"
        else:
            rec["delta_text"] = ("" if rec["delta"] is None else f"{rec['delta']:+g} {rec['unit']}").strip()
        rec["source_short"] = rec["source"].split(" ")[0]
        rec["summary"] = f"{rec['metric']}: {rec['delta_text']} on {rec['model']}"
        out.setdefault(fmt, []).append(rec)
    return out


@functools.cache
def profiles() -> Mapping[str, tuple[float, ...]]:
    """Named shapes of a day's traffic (``profiles.csv``): name -> 24 hourly weights, hour 0 first. They are
    shapes for a link to name, not measurements (docs/method.md section 7.8)."""
    out: dict[str, tuple[float, ...]] = {}
    with (DATA_DIR / "profiles.csv").open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            weights = tuple(float(x) for x in row["weights"].split(","))
            if len(weights) != 24 or min(weights) < 0 or not any(weights):
                raise CatalogueError(f"profiles.csv: {row['name']} needs 24 weights >= 0, not all 0")
            out[row["name"].strip()] = weights
    return types.MappingProxyType(out)
