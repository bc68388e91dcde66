"""The pydantic models made from the key table: :data:`LinkInputs` (each raw link value, checked on its own) and
:data:`Scenario` (every key resolved), with the error values the parser returns."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from .. import catalogue
from .derive import AUTO
from .keys import (
    CUSTOM,
    KEY_TABLE,
    KEYS,
    KV_FORMATS,
    NONE_GIVEN,
    REASON_IDS,
    UNKNOWN,
    WEIGHT_FORMATS,
    Key,
    link_text,
    weight_format_bits,
)


def _bits(value: Any, formats: Mapping[str, float], key: str) -> str:
    """Normalise a precision given by name or as bits; returns the canonical link text."""
    text = str(value).strip().lower()
    if text in formats:
        return text
    bits = float(text)  # ValueError is turned into a field error by pydantic
    if not (math.isfinite(bits) and 1 <= bits <= 32):
        raise ValueError(f"{key} out of range")
    return link_text(bits)


def _number_type(k: Key) -> Any:
    """The pydantic type of a numeric key: its type and range from the table, finite only."""
    if k.kind == "float":
        return Annotated[float, Field(ge=k.lo, le=k.hi, allow_inf_nan=False)]
    return Annotated[int, Field(ge=k.lo, le=k.hi)]


def _input_type(k: Key) -> Any:
    """The type a link value of key ``k`` must have once its validator has normalised it."""
    if k.numeric and k.follows:
        return Literal["auto"] | _number_type(k)
    if k.numeric:
        return _number_type(k)
    if k.kind == "batch":
        return Literal["auto"] | _number_type(k)
    if k.kind == "choice":
        return Literal[k.choices]
    if k.kind == "flag":
        return Literal[0, 1]
    return str


def _lower(v: Any) -> Any:
    return v.strip().lower() if isinstance(v, str) else v


def _known(table: Any, what: str, custom: bool) -> Any:
    def check(v: str | None) -> str | None:
        if v is not None and not (custom and v == CUSTOM) and v not in table():
            raise ValueError(f"unknown {what}")
        return v
    return check


def _flag(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str) and v.strip() in ("0", "1"):
        return int(v.strip())
    if isinstance(v, (int, float)) and v in (0, 1):
        return int(v)
    raise ValueError("must be 0 or 1")


def _reasons(v: Any) -> Any:
    """A comma-separated list of reason ids in their canonical order (None for none); an unknown id is an error."""
    if v is None:
        return None
    ids = [part.strip().lower() for part in str(v).split(",") if part.strip()]
    unknown = [i for i in ids if i not in REASON_IDS]
    if unknown:
        raise ValueError("unknown reason")
    return ",".join(r for r in REASON_IDS if r in ids) or None


def _profile(v: Any) -> Any:
    """A named day's shape (lower case) or 24 hourly weights >= 0, not all 0, as canonical text; None for none."""
    if v is None:
        return None
    text = str(v).strip().lower()
    if text in ("", "none"):
        return None
    if text in catalogue.profiles():
        return text
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 24:
        raise ValueError("needs a shape name or 24 weights")
    weights = [float(p) for p in parts]  # ValueError: not a number
    if not all(math.isfinite(w) and w >= 0 for w in weights) or not any(weights):
        raise ValueError("weights must be numbers >= 0, not all 0")
    return ",".join(link_text(w) for w in weights)


def _integral(v: Any) -> Any:
    """A whole number written as a decimal or in exponent form ("2.0", "1e3") as that int; anything else as given
    (pydantic then names what the key takes), so every spelling of one count is read alike."""
    if isinstance(v, str):
        try:
            number = float(v)
        except ValueError:
            return v
        if math.isfinite(number) and number.is_integer() and "_" not in v:
            return int(number)
    return v


def _no_separators(v: Any) -> Any:
    """A number as a link writes it: Python would read "20_000" as 20000, a link never groups digits."""
    if isinstance(v, str) and "_" in v:
        raise ValueError("not a number")
    return v


def _empty_none(v: Any) -> Any:
    return None if isinstance(v, str) and v.strip().lower() in ("", "none") else v


def _validators() -> dict[str, Any]:
    """Per-kind normalisation of link values, before pydantic checks types and ranges."""
    by_kind: dict[str, list[str]] = {}
    for k in KEY_TABLE:
        by_kind.setdefault(k.kind, []).append(k.key)
    formats = {"weights": WEIGHT_FORMATS, "kv": KV_FORMATS}
    out = {
        "_lower": field_validator(*by_kind["id"], *by_kind["choice"], *by_kind["batch"],
                                  *[k.key for k in KEY_TABLE if k.follows], mode="before")(
            classmethod(lambda cls, v: _lower(v))),
        "_model": field_validator("model")(classmethod(lambda cls, v: _known(catalogue.models, "model", True)(v))),
        "_card": field_validator("card")(classmethod(lambda cls, v: _known(catalogue.cards, "card", True)(v))),
        "_api": field_validator("api")(classmethod(lambda cls, v: _known(catalogue.apis, "api", False)(v))),
        "_flag": field_validator(*by_kind["flag"], mode="before")(classmethod(lambda cls, v: _flag(v))),
        "_reasons": field_validator(*by_kind["reasons"], mode="before")(classmethod(lambda cls, v: _reasons(v))),
        "_profile": field_validator(*by_kind["profile"], mode="before")(classmethod(lambda cls, v: _profile(v))),
        # -0 is 0: a link's "-0" must never print as "-0.00 USD"
        "_zero": field_validator(*by_kind["float"], mode="after")(
            classmethod(lambda cls, v: v + 0.0 if isinstance(v, float) else v)),
        "_empty": field_validator(*[k.key for k in KEY_TABLE if k.empty == NONE_GIVEN
                                    and k.kind not in ("reasons", "profile")],
                                  mode="before")(
            classmethod(lambda cls, v: _empty_none(v))),
    }
    out["_digits"] = field_validator(*by_kind["float"], *by_kind["int"], *by_kind["batch"], mode="before")(
        classmethod(lambda cls, v: _no_separators(v)))
    out["_integral"] = field_validator(*by_kind["int"], *by_kind["batch"], mode="before")(
        classmethod(lambda cls, v: _integral(v)))
    for kind, names in formats.items():
        out[f"_{kind}"] = field_validator(*by_kind[kind], mode="before")(
            classmethod(lambda cls, v, names=names, kind=kind: None if v is None else _bits(v, names, kind)))
    return out


#: The raw inputs of one link, each optional and checked on its own (types and ranges from :data:`KEY_TABLE`).
LinkInputs = create_model(
    "LinkInputs",
    __config__=ConfigDict(extra="forbid", str_strip_whitespace=True, protected_namespaces=()),
    __validators__=_validators(),
    **{k.key: (_input_type(k) | None, None) for k in KEY_TABLE},
)


class _ScenarioBase(BaseModel):
    """What every resolved scenario can say about itself (the fields come from :data:`KEY_TABLE`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())
    #: Keys the link left to follow the traffic (``ctx``: prompt + output tokens; ``duty``: the implied duty,
    #: None in the scenario until the traffic is evaluated; SPEC section 10).
    follows_traffic: frozenset[str] = frozenset()

    @property
    def weight_bits(self) -> float:
        """Bits per weight, scales included."""
        return weight_format_bits(self.weights)

    @property
    def expert_weight_bits(self) -> float:
        """Bits per routed-expert weight, scales included (docs/method.md section 8)."""
        return weight_format_bits(self.weights_experts)

    @property
    def kv_bits(self) -> float:
        """Bits per cached key/value element."""
        return KV_FORMATS.get(self.kv) or float(self.kv)

    def to_params(self) -> dict[str, str]:
        """Every key as link text, in link order; absent optional values are left out; a key that follows the
        traffic prints ``auto`` (SPEC section 10), so the printed scenario is still a complete link."""
        out = {}
        for key in KEYS:
            value = AUTO if key in self.follows_traffic else getattr(self, key)
            if value is not None:
                out[key] = link_text(value)
        return out

    def to_query(self) -> str:
        """The complete link query string (no leading '?')."""
        return urlencode(self.to_params(), safe="-_.")

    def as_dict(self) -> dict[str, Any]:
        """Every key with its typed value (None where absent; ``"auto"`` where it follows the traffic), in link
        order."""
        return {key: AUTO if key in self.follows_traffic else getattr(self, key) for key in KEYS}


def _scenario_type(k: Key) -> Any:
    base = {"float": float, "int": int, "flag": int, "batch": int | Literal["auto"]}.get(k.kind, str)
    if k.key == "duty":
        return float | None  # auto: the implied duty, known once the traffic is evaluated
    return base | None if k.empty in (NONE_GIVEN, UNKNOWN) else base


#: A complete, resolved scenario: every link key with the value used (docs/method.md). Units as in
#: :data:`KEY_TABLE`; optional values are None when absent (``tpot_ms``) or unknown (``usd_hr`` of an unpriced card).
Scenario = create_model(
    "Scenario", __base__=_ScenarioBase, __module__="calc.scenario",
    **{k.key: (_scenario_type(k), ...) for k in KEY_TABLE},
)


@dataclass(frozen=True)
class FieldError:
    """A rejected input: the key, the value given, and what the key accepts. ``rule`` marks a value that is
    fine on its own but breaks a consistency rule with other keys (it might pass beside other values)."""

    key: str
    value: str
    accepted: str
    reason: str = ""
    rule: bool = False
    here: bool = False  # ``accepted`` is what the key takes beside the other inputs, not its whole range

    @property
    def message(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        shown = repr(self.value)  # quoted, with control characters escaped
        if len(shown) > 80:  # escapes can make a bounded value long again
            shown = shown[:79] + "…"
        if self.rule and self.here:  # the range the other inputs leave, which the value is not in
            return f"{self.key}={shown} is not accepted beside the other inputs{why}: with them, {self.key} takes {self.accepted}."
        if self.rule:  # the value is in range on its own: say so, not only the range it already meets
            return (f"{self.key}={shown} is not accepted beside the other inputs{why}; on its own, {self.key} "
                    f"takes {self.accepted}.")
        return f"{self.key}={shown} is not accepted{why}: {self.key} takes {self.accepted}."

    def __str__(self) -> str:
        return self.message


class ScenarioError(ValueError):
    """Raised by :func:`load` when a link has bad values; ``errors`` lists each :class:`FieldError`."""

    def __init__(self, errors: list[FieldError]):
        self.errors = list(errors)
        super().__init__("; ".join(e.message for e in self.errors))


@dataclass(frozen=True)
class Parsed:
    """The outcome of parsing a link: the scenario used, rejected inputs, and warnings."""

    scenario: Scenario
    errors: tuple[FieldError, ...] = ()
    warnings: tuple[str, ...] = ()
    given: frozenset[str] = field(default_factory=frozenset)


#: The most a link may hold, one limit for the app and the command line. Streamlit's server ignores a query
#: string of more than 1,000 fields, and its HTTP server refuses a request whose request line and headers pass
#: about 128 KB (HTTP 400, before the app runs); 100,000 characters leaves room for a browser's headers, so every
