"""Parsing a link: each raw value checked (pydantic), then every key resolved by one loop over the key table, then
the consistency rules; a broken rule drops the culprit and says so. :func:`parse` never raises for bad input;
:func:`load` is the strict form."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from .. import catalogue, rules
from ..engines import (
    ENGINE_NAMES,
    FORMAT_PREDATES,
    MODELLED_RESERVE,
    ROW_SPLIT_ENGINES,
    apple_rule,
    card_format_rule,
    card_rule,
    compute_rule,
    engine_weights,
    kv_rule,
    later_release,
    splits_layers,
    tp_rule,
)
from ..engines import profile as engine_profile
from .derive import AUTO, CUSTOM_LINK_GBS, Conflict, card_peak, formats_loaded, weights_refusal
from .fields import FieldError, LinkInputs, Parsed, Scenario, ScenarioError
from .keys import (
    CARD_FIGURES,
    CUSTOM,
    DEFAULT_CARD,
    DEFAULT_MODEL,
    DEFAULT_WEIGHTS,
    FROM_DEFAULT,
    KEY_TABLE,
    KEYS,
    MODEL_FIGURES,
    PRESET,
    Key,
    link_text,
    weight_format_bits,
)
from .link import split_link


def _shown(value: Any) -> str:
    text = link_text(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:60] + "…"


def _suggestion(key: str, value: Any) -> str:
    """For a preset id that is not in the catalogue, the nearest ids that are ("did you mean ..."); for a number
    written with thousands separators ("1,000"), the same number as a link writes it; else ""."""
    if KEYS[key].numeric and isinstance(value, str) and re.fullmatch(r"[+-]?\d{1,3}(_\d{3})+(\.\d*)?", value.strip()):
        return f"a link writes numbers without separators: {key}={value.strip().replace('_', '')}"
    if KEYS[key].numeric and isinstance(value, str) and "," in value:
        text = value.strip()
        if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?", text):  # 1,000 or 1,000.5: a thousands separator
            return f"a link writes numbers without separators: {key}={text.replace(',', '')} if the comma groups thousands"
        if re.fullmatch(r"[+-]?\d*,\d+", text):  # 2,50: a decimal comma
            return f"a link writes a decimal point: {key}={text.replace(',', '.')} if the comma is one"
        return ""
    tables = {"model": catalogue.models, "card": catalogue.cards, "api": catalogue.apis}
    if key not in tables or not isinstance(value, str):
        return ""
    text = value.strip().lower()[:200]
    ids = list(tables[key]()) + ([CUSTOM] if key != "api" else [])
    near = difflib.get_close_matches(text, ids, n=3, cutoff=0.5)
    if not near and key == "api":  # a model name without its provider: the rows that end with it
        near = [i for i in ids if text and i.endswith("/" + text)][:3]
    if near:
        return "did you mean " + " or ".join(repr(n) for n in near) + "?"
    listed = {"model": "models", "card": "cards", "api": "apis"}[key]
    return (f"none of the {len(ids):,} ids is close; the Models & cards page lists them, and so does "
            f"python -m calc --list {listed}")


def _check_inputs(raw: dict[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
    """Validate each raw value with pydantic; bad keys are reported and removed."""
    errors: list[FieldError] = []
    values = dict(raw)
    for _ in range(len(KEYS) + 1):
        try:
            inputs = LinkInputs.model_validate(values)
        except ValidationError as exc:
            bad = {str(e["loc"][0]) for e in exc.errors() if e.get("loc")}
            for key in sorted(bad):
                errors.append(FieldError(key, _shown(raw[key]), KEYS[key].accepted, _suggestion(key, raw[key])))
                values.pop(key, None)
            continue
        return inputs.model_dump(exclude_none=True), errors
    raise RuntimeError("link validation did not settle")  # pragma: no cover


class _Resolving:
    """One link being resolved: each key's value, worked out once, on demand, from its row (the
    :class:`derive.Resolving` the derivations read)."""

    def __init__(self, v: Mapping[str, Any], refused: frozenset[str] = frozenset()):
        self.v = v
        self._refused = refused
        self.values: dict[str, Any] = {}
        self._busy: set[str] = set()
        models, cards = catalogue.models(), catalogue.cards()
        model_id, card_id = v.get("model", KEYS["model"].default), v.get("card", KEYS["card"].default)
        self._rows: dict[str, Mapping[str, Any] | None] = {
            "model": models.get(model_id) if model_id != CUSTOM else None,
            "card": cards.get(card_id) if card_id != CUSTOM else None,
        }
        self._defaults = {"model": models[DEFAULT_MODEL], "card": cards[DEFAULT_CARD]}

    def given(self, key: str) -> bool:
        return key in self.v

    def refused(self, key: str) -> bool:
        """Whether the link gave ``key`` and its value was refused (it then takes its default)."""
        return key in self._refused

    def row(self, source: str) -> Mapping[str, Any] | None:
        if source == "engine":
            return engine_profile(self.get("engine"))
        if source == "api":
            return catalogue.apis()[self.get("api")]
        return self._rows[source]

    def base_row(self, source: str) -> Mapping[str, Any]:
        row = self.row(source)
        return row if row is not None else self._defaults[source]

    def get(self, key: str) -> Any:
        if key not in self.values:
            if key in self._busy:  # pragma: no cover - a table whose derivations go round in a circle
                raise RuntimeError(f"the default of {key} is worked out from itself")
            self._busy.add(key)
            try:
                self.values[key] = self._value(KEYS[key])
            finally:
                self._busy.discard(key)
        return self.values[key]

    def _value(self, k: Key) -> Any:
        """The key's row, read as docs/method.md section 1 says: the link's value; else the preset's figure (a
        custom model's or card's: the row's ``custom``), else the row's default; then its derivation, if any."""
        if k.key in self.v:
            base = self.v[k.key]
        elif k.preset:
            row = self.row(k.preset)
            if row is None:
                found = self._defaults[k.preset].get(k.field or k.key) if k.custom == FROM_DEFAULT else k.custom
            else:
                found = row.get(k.field or k.key)
            base = found if found is not None else (None if k.default == PRESET else k.default)
        else:
            base = k.default
        return k.derive(self, base) if k.derive is not None else base


def _card_rule(r: _Resolving) -> None:
    """A card preset must have units for the compute precision (checked first: the peak is read from them)."""
    if r.row("card") is not None:
        card_peak(r)  # even where the link gives tflops


def _engine_rule(r: _Resolving) -> None:
    """The engine must run on the card (engines.card_rule), load the weight format (derive.weights_refusal) and
    accept the tensor-parallel size (engines.tp_rule)."""
    card = r.row("card")
    rule = card_rule(r.get("engine"), card and card.get("vendor"), card and card.get("name"), r.get("card"),
                     r.get("arch"))
    if rule:
        raise Conflict(("engine",), rule)
    # A Mac's GPU runs llama.cpp only: the family is named as refused, so the engine the link chose stays and the
    # figures fall back to a custom card of no family (not to the default engine, which would not run there either).
    rule = apple_rule(r.get("engine"), r.get("arch"))
    if rule:
        raise Conflict(("arch",), rule)
    rule = weights_refusal(r.get("engine"), r.get("weights"))
    if rule:
        raise Conflict(("weights",), rule, accepted=formats_loaded(r.get("engine")))
    # A part of the checkpoint the link puts in its own format must load too (a preset's parts load by design).
    for part in ("weights_experts", "weights_attn", "weights_embed"):
        rule = r.given(part) and weights_refusal(r.get("engine"), r.get(part))
        if rule:
            raise Conflict((part,), rule.replace(f"{r.get(part)} weights", f"{r.get(part)} weights ({part})", 1),
                           accepted=formats_loaded(r.get("engine")))
    # A preset's own parts in a format the release family predates (gpt-oss's MXFP4 experts under vLLM V0): the
    # family cannot serve the checkpoint at all, so the engine is what the link must change.
    for part in ("weights_experts", "weights_attn", "weights_embed"):
        families, since = FORMAT_PREDATES.get(str(r.get(part)), ((), ""))
        if not r.given(part) and r.get("engine") in families:
            raise Conflict(("engine",), f"{ENGINE_NAMES[r.get('engine')]} cannot load this checkpoint's {r.get(part)} "
                                        f"weights ({part}): {since}; {later_release(r.get('engine'))}")
    if r.get("split") == "row" and r.get("engine") not in ROW_SPLIT_ENGINES:
        engine = r.get("engine")
        raise Conflict(("split",), f"split=row is priced under {', '.join(ROW_SPLIT_ENGINES)} only, whose rows measured "
                                   "the row split of the CUDA builds of 2023; "
                                   + (f"{ENGINE_NAMES[engine]}'s own row split is another implementation no row "
                                      "measured, so it is priced with whole layers per card"
                                      if splits_layers(engine) else f"{ENGINE_NAMES[engine]} splits by tensor parallel"))
    rule = tp_rule(r.get("engine"), r.get("heads"), r.get("kv_heads"), r.get("gpus"), bool(r.get("kv_latent")))
    if rule:
        raise Conflict(("gpus",), rule)
    # A format the link gives must run on the card's tensor cores (TensorRT-LLM's FP8 and NVFP4).
    for part in ("weights", "weights_experts", "weights_attn", "weights_embed"):
        rule = r.given(part) and card_format_rule(r.get("engine"), str(r.get(part)), card and card.get("peaks"),
                                                  card and card.get("name"))
        if rule:
            raise Conflict((part,), rule if part == "weights" else rule.replace(" weights", f" weights ({part})", 1))
    rule = compute_rule(r.get("compute"), weight_format_bits(r.get("weights")),
                        weight_format_bits(r.get("weights_experts")) if r.get("experts") else None)
    if rule:
        raise Conflict(("compute",), rule)
    rule = kv_rule(r.get("engine"), str(r.get("kv"))) or card_format_rule(
        r.get("engine"), str(r.get("kv")), card and card.get("peaks"), card and card.get("name"), "KV cache")
    if rule:
        raise Conflict(("kv",), rule)


def _resolve(v: dict[str, Any], warnings: list[str], refused: frozenset[str] = frozenset()) -> Scenario:
    """Fill every key from its row (one loop over :data:`KEY_TABLE`); raise :class:`Conflict` on a broken rule
    (calc/rules.py, then the card's and the engine's). ``refused``: the keys the link gave whose values were
    refused (they take their defaults)."""
    r = _Resolving(v, refused)
    _card_rule(r)
    values = {k.key: r.get(k.key) for k in KEY_TABLE}
    broken = rules.first_broken(values)
    if broken is not None:
        rule, reason = broken
        raise Conflict(rule.keys, reason, rule.name, rule)
    _engine_rule(r)
    follows = frozenset(k.key for k in KEY_TABLE if k.follows and v.get(k.key, k.default) == AUTO)
    return Scenario(**values, follows_traffic=follows)


#: A custom card's figures a link may leave out, with their units: each then takes the default card's.
_CUSTOM_CARD_FIGURES = (("mem_gib", "GiB"), ("bw_tbs", "TB/s"), ("tflops", "TFLOP/s"), ("usd_hr", "USD per card-hour"))


def _custom_card_note(s: Scenario) -> list[str]:
    """A custom card that holds the default card's figures (a link leaving them out takes them): a note names each
    with its value, and says when the CUDA total is the card's whole memory. Read from the scenario alone, so the
    complete link it writes gives the same note."""
    if s.card != "custom":
        return []
    default = catalogue.cards()[DEFAULT_CARD]
    theirs = {"mem_gib": default["mem_gib"], "bw_tbs": default["bw_tbs"], "tflops": default["peaks"].get(s.compute),
              "usd_hr": default["usd_hr"]}
    same = [f"{k}={getattr(s, k):.4g} {unit}" for k, unit in _CUSTOM_CARD_FIGURES
            if getattr(s, k) is not None and getattr(s, k) == theirs[k]]
    parts = []
    if same:
        parts.append(f"card=custom has the {default['name']}'s figures, which a link that leaves them out takes: "
                     f"{', '.join(same)}")
    if s.torch_gib == s.mem_gib:
        parts.append(f"torch_gib (the total CUDA reports) is the card's whole memory, {s.torch_gib:.4g} GiB")
    if s.link_gbs == CUSTOM_LINK_GBS and s.gpus > 1:  # the all-reduces run over it: PCIe, not the preset's NVLink
        parts.append(f"link_gbs={CUSTOM_LINK_GBS:g} GB/s is PCIe 5.0 x16, not the {default['name']}'s "
                     f"{default['link_gbs']:g} GB/s NVLink: set link_gbs for cards joined by a faster link")
    return ["; ".join(parts)] if parts else []


def _shape_note(s: Scenario) -> list[str]:
    """A custom model whose shape is unlike any decoder's (calc.rules.shape_note), where a figure reads the width:
    an engine that works out its activation reserve, or all-reduces over several cards."""
    if s.model != "custom" or (s.engine not in MODELLED_RESERVE and s.gpus == 1):
        return []
    note = rules.shape_note({k: getattr(s, k) for k in ("params_b", "active_b", "embed_b", "layers", "hidden")})
    return [note] if note else []


#: The words of the note :func:`_gguf_note` gives, by which a page knows it (it shows it until the next change).
GGUF_NOTE = "loads GGUF files, so the weights are priced as"


def _gguf_note(s: Scenario, given: frozenset[str]) -> list[str]:
    """Said where llama.cpp runs the GGUF counterpart of the model's or the default format (calc/engines.py
    ``engine_weights``) because the link chose no weights."""
    if "weights" in given:
        return []
    row = catalogue.models().get(s.model) or {}
    shipped = row.get("weights") or DEFAULT_WEIGHTS
    if engine_weights(s.engine, shipped) == shipped:
        return []
    return [f"{ENGINE_NAMES[s.engine]} {GGUF_NOTE} {s.weights}, the GGUF "
            f"counterpart of {shipped} (set weights to choose another GGUF type)"]


#: The words of the note :func:`_profile_peak_note` gives (a page shows it until the next change, as the GGUF one).
PROFILE_PEAK_NOTE = "is replaced by the day's profile"


def _profile_peak_note(s: Scenario, values: Mapping[str, Any]) -> list[str]:
    """Said where the link gives a peak factor that its day's profile replaces with its own (SPEC section 9: the
    profile's busiest hour over its mean hour), so the figures do not use the peak the link asked for."""
    asked = values.get("peak")
    if s.profile is None or asked is None or math.isclose(float(asked), s.peak, rel_tol=1e-9):
        return []
    return [f"peak={float(asked):g} {PROFILE_PEAK_NOTE} ({s.profile if len(s.profile) < 12 else '24 hourly weights'}), "
            f"whose busiest hour over its mean hour is {s.peak:.4g}: the figures use {s.peak:.4g} (clear profile to "
            "use a peak factor of your own)"]


def parse(link: str | Mapping[str, Any] | None = None) -> Parsed:
    """Parse a link leniently: never raises for bad input.

    Args:
        link: a whole URL, a query string (with or without '?'), a mapping of key to value
            (str or number), or None for the defaults.

    Returns:
        :class:`Parsed` with the scenario used (each rejected key at its default), the rejected
        inputs as :class:`FieldError` values, and warnings (unknown keys, custom fallbacks, notes).
    """
    try:
        raw, warnings = split_link(link)
    except ScenarioError as exc:  # a link too large to read: every figure is the default, as in the app
        return Parsed(_resolve({}, []), tuple(exc.errors))
    values, errors = _check_inputs(raw)
    given = frozenset(values)
    for _ in range(len(KEYS)):
        resolve_warnings: list[str] = []
        try:
            scenario = _resolve(values, resolve_warnings, frozenset(k for k in raw if k in KEYS and k not in values))
        except Conflict as conflict:
            culprit, dropped = _culprit(conflict, values)
            if conflict.name and conflict.name != culprit and conflict.name in values \
                    and conflict.name not in {e.key for e in errors}:
                # The rule names a key of its own (docs/method.md sections 2-5) and the link gave it: name it.
                named, shown = conflict.name, _shown(raw[conflict.name])
                reason = f"{conflict.reason}; {culprit} falls back to its default"
            else:
                named, shown, reason = culprit, _shown(raw.get(culprit, values[culprit])), conflict.reason
            # The narrower range the rule allows beside the other inputs, where it says one for the key it names.
            here = conflict.accepted if named == culprit else None
            if len(dropped) > 1:
                reason += (f"; none of {', '.join(k for k in conflict.keys if k in values)} repairs it alone, so "
                           f"every figure the link gave for the {_group_name(culprit)} "
                           f"({', '.join(f'{k}={_shown(raw.get(k, values[k]))}' for k in dropped)}) falls back to its "
                           f"default together")
            errors.append(FieldError(named, shown, here or KEYS[named].accepted, reason, rule=True,
                                     here=here is not None))
            for key in dropped:
                values.pop(key)
            continue
        notes = (_custom_card_note(scenario) + _shape_note(scenario) + _gguf_note(scenario, given)
                 + _profile_peak_note(scenario, values))
        return Parsed(scenario, tuple(errors), tuple(warnings + resolve_warnings + notes), given)
    raise RuntimeError("scenario resolution did not settle")  # pragma: no cover


def _culprit(conflict: Conflict, values: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The given key to blame for a broken rule, and the given keys to drop so that it holds again.

    The rule's own keys come first: the first of them whose removal repairs the rule is dropped alone
    (``params_b=0.001`` on a given 80-layer shape: the count, not the shape). When the link gave several of them
    and none repairs it alone (70 billion parameters in one layer of width 3), they are wrong together: dropping
    them one by one would combine the rest with defaults into a model nobody asked for, so every figure the link
    gave for that model (or card) falls back together. When the link gave none of the rule's keys, the rule was
    broken by some other override of a preset's figures (``experts_active`` on an MoE preset makes its dense
    part negative): the first given key whose removal repairs the rule is the one to blame. The presets
    themselves obey every rule (a catalogue test), so dropping every given key always repairs it.
    """
    own = [k for k in conflict.keys if k in values]
    if own:
        alone = next((k for k in own if not _still_broken(conflict, {x: v for x, v in values.items() if x != k})),
                     None)
        if alone is not None:
            return alone, (alone,)
        group = next((g for g in (MODEL_FIGURES, CARD_FIGURES) if own[0] in g), ())
        together = tuple(k for k in group if k in values) if len(own) > 1 else ()
        return own[0], together or (own[0],)
    order = [k for k in (*MODEL_FIGURES, *CARD_FIGURES) if k in values] + \
            [k for k in values if k not in MODEL_FIGURES and k not in CARD_FIGURES]
    for key in order:
        if not _still_broken(conflict, {k: v for k, v in values.items() if k != key}):
            return key, (key,)
    if not order:  # nothing was given, so the catalogue itself broke a rule
        raise RuntimeError(f"catalogue row breaks a rule: {conflict.reason}")
    return order[0], (order[0],)


def _group_name(key: str) -> str:
    """'model' or 'card': whose figures ``key`` is one of."""
    return "model" if key in MODEL_FIGURES else "card"


def _still_broken(conflict: Conflict, trial: dict[str, Any]) -> bool:
    """Whether ``trial`` breaks the same rule as ``conflict``: the same rule of the table, or for the engines'
    rules the same words before any figure in brackets."""
    try:
        _resolve(trial, [])
    except Conflict as other:
        if conflict.rule is not None:
            return other.rule is conflict.rule
        return other.reason.split("(")[0] == conflict.reason.split("(")[0]
    return False


def load(link: str | Mapping[str, Any] | None = None) -> Parsed:
    """Parse a link strictly.

    Raises:
        ScenarioError: when any value is malformed, out of range or breaks a consistency rule;
            its ``errors`` name each key, the value given and the accepted range.
    """
    parsed = parse(link)
    if parsed.errors:
        raise ScenarioError(list(parsed.errors))
    return parsed



def preset_figures(s: Scenario, source: str) -> dict[str, Any]:
    """The figures the scenario's ``source`` preset (``"model"`` or ``"card"``) gives its shape keys, in the
    scenario's context (the card's peak at its compute precision); a figure worked out from another shape figure
    the scenario modifies follows that one (CUDA's total follows a typed memory). None where the preset gives none.
    Empty for a custom model or card."""
    if getattr(s, source) == CUSTOM:
        return {}
    shape = [k for k in KEY_TABLE if k.preset == source and k.shape]
    keep = {k.key: getattr(s, k.key) for k in KEY_TABLE
            if not (k.preset == source and k.shape) and k.key not in s.follows_traffic and getattr(s, k.key) is not None}
    out: dict[str, Any] = {}
    modified: set[str] = set()
    plain = _Resolving(keep)
    for k in shape:
        follows = {p: getattr(s, p) for p in k.after if p in modified}
        try:
            value = (_Resolving({**keep, **follows}) if follows else plain).get(k.key)
        except Conflict:
            value = None
        out[k.key] = value
        if value is not None and getattr(s, k.key) != value:
            modified.add(k.key)
    return out
