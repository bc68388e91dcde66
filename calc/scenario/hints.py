"""How the app's sliders move: the stops of each key's slider, from its row's ``slider`` field."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .keys import KEYS, KV_FORMATS, WEIGHT_FORMATS

#: Mantissas of the log slider's stops: about six a decade, each a round number.
_LOG_STOPS = (1, 1.5, 2, 3, 5, 7)


def _bits_of(value: Any, formats: Mapping[str, float]) -> float:
    return float(formats[value]) if value in formats else float(value)


def slider_stops(key: str, current: Any = None) -> list[Any]:
    """The stops of the app's slider for ``key``, in increasing order, with ``current`` among them.

    ``"log"``: 1, 1.5, 2, 3, 5, 7 times each power of ten in the slider's span; ``"pow2"``: 2^k and 1.5 * 2^k;
    ``"formats"``: the format names ordered by bits. Zero leads where the span starts at 0 (0 means none). A
    value outside the stops (a preset's 79.65 GiB, a typed 123,456 requests, bits such as "4.5") is inserted at
    its place, so a slider never moves a value it did not touch. Stops have the key's type (int keys give ints).
    Raises KeyError for a key without a slider.
    """
    spec = KEYS[key]
    if spec.slider is None:
        raise KeyError(f"{key} has no slider")
    scale, lo, hi = spec.slider
    if scale == "formats":
        formats = KV_FORMATS if spec.kind == "kv" else WEIGHT_FORMATS
        names = list(formats)
        if current is not None and str(current) not in names:
            names.append(str(current))
        return sorted(names, key=lambda n: (_bits_of(n, formats), n not in formats, n))
    cast = int if spec.kind == "int" else float
    stops: set[float] = {0.0} if spec.lo == 0 else set()  # 0 means none (no window, a dense model, ...)
    first, last = float(lo), float(hi)
    if scale == "log":
        for exp in range(math.floor(math.log10(first)), math.ceil(math.log10(last)) + 1):
            stops.update(float(f"{m}e{exp}") for m in _LOG_STOPS)
    else:
        for exp in range(max(0, math.floor(math.log2(first))), math.ceil(math.log2(last)) + 1):
            stops.update((2.0**exp, 1.5 * 2.0**exp))
    out = {cast(v) for v in stops if v == 0 or first <= v <= last}
    if current is not None:
        out.add(cast(current))
    return sorted(out)


#: Accepted range of every numeric key, both ends included: (type, lowest, highest).
