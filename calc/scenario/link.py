"""Links as text: the limits of one link, and splitting a URL, a query string or a mapping into raw values."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .fields import FieldError, ScenarioError
from .keys import KEYS, UNKNOWN

MAX_LINK_FIELDS = 1000
MAX_LINK_CHARS = 100_000
#: The pseudo-key of an error about the link as a whole.
LINK = "link"
LINK_ACCEPTED = f"at most {MAX_LINK_FIELDS:,} fields and {MAX_LINK_CHARS:,} characters"


def link_too_long(fields: int, chars: int) -> FieldError | None:
    """The error for a query string of ``fields`` fields (``&``-separated) and ``chars`` characters that the
    app's server would ignore whole, or None when it is within the limits."""
    if fields <= MAX_LINK_FIELDS and chars <= MAX_LINK_CHARS:
        return None
    return FieldError(LINK, f"{fields:,} field{'' if fields == 1 else 's'}, {chars:,} characters", LINK_ACCEPTED,
                      "the app's server ignores a link this large whole, so every figure would be the default's; "
                      f"a complete link needs one field for each of the calculator's {len(KEYS):,} keys at most")


#: Unknown keys named one by one in the warnings; past this many they are counted in one line.
UNKNOWN_NAMED = 5


def near_key(key: str) -> str | None:
    """The link key a misspelt ``key`` most likely meant (``bacth`` -> ``batch``), or None where none is close
    (difflib's ratio of at least 0.75, case ignored)."""
    near = difflib.get_close_matches(key.strip().lower(), list(KEYS), n=1, cutoff=0.75)
    return near[0] if near else None


def unknown_note(key: str) -> str:
    """``'bacth' (did you mean 'batch'?)``: an unknown key as the warnings name it, with the key it most likely
    meant (:func:`near_key`) where one is close."""
    near = near_key(key)
    return repr(key) + (f" (did you mean {near!r}?)" if near else "")


def split_link(link: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """Split a whole URL, a query string or a mapping into {key: value} and warnings.

    Repeated keys keep their last value (with a warning); unknown keys are dropped and named in the
    warnings, each with the key it most likely meant (:func:`near_key`); a URL fragment is ignored.

    Raises:
        ScenarioError: the query string has more than :data:`MAX_LINK_FIELDS` fields or
            :data:`MAX_LINK_CHARS` characters (its one error's key is ``"link"``).
    """
    raw, warnings, _ = split_link_keys(link)
    return raw, warnings


def split_link_keys(link: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], list[str], list[str]]:
    """:func:`split_link`'s ``(raw, warnings)`` and the unknown keys it dropped, in the order given (each cut to 40
    characters).

    Raises:
        ScenarioError: as :func:`split_link`.
    """
    warnings: list[str] = []
    pairs: list[tuple[str, Any]]
    if link is None:
        pairs = []
    elif isinstance(link, Mapping):
        pairs = []
        for k, v in link.items():
            if isinstance(v, (list, tuple)):
                pairs.extend((str(k), x) for x in v)
            else:
                pairs.append((str(k), v))
    else:
        text = str(link).strip()
        head = text.split("?", 1)[0]
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", text):  # a whole URL
            text = urlsplit(text).query
        elif "?" in text and "=" not in head and "&" not in head:  # a path with its query: /cost?ctx=4096
            text = text.split("?", 1)[1]
        text = text.split("#", 1)[0].lstrip("?")
        if link_too_long(text.count("&") + 1, len(text)):
            raise ScenarioError([link_too_long(text.count("&") + 1, len(text))])
        pairs = parse_qsl(text, keep_blank_values=True)
    raw: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in pairs:
        key = key.strip()
        if key not in KEYS:
            shown = key if len(key) <= 40 else key[:40] + "…"
            if shown not in unknown:
                unknown.append(shown)
            note = ""
        elif key in raw:
            note = f"key {key!r} given more than once; the last value is used"
        else:
            note = ""
        if note and note not in warnings:
            warnings.append(note)
        if key in KEYS:
            raw[key] = value
    # A few unknown keys are named one by one; many in one line (a link of 45 stray keys is one note, not 45).
    if len(unknown) <= UNKNOWN_NAMED:
        warnings[:0] = [f"unknown key {unknown_note(k)} ignored" for k in unknown]
    else:
        named = ", ".join(repr(k) for k in unknown[:UNKNOWN_NAMED])
        warnings.insert(0, f"unknown keys ignored ({len(unknown):,}): {named} and {len(unknown) - UNKNOWN_NAMED:,} more")
    # Empty values mean "not given", except where empty has a meaning of its own (no latency target). An empty
    # value of a key without such a meaning is named, so that a link never falls back to a default in silence.
    empty = [k for k, v in raw.items() if isinstance(v, str) and v.strip() == "" and k != "tpot_ms"]
    for k in empty:
        if KEYS[k].empty is None:
            warnings.append(f"key {k!r} is empty: its default is used")
        elif KEYS[k].empty == UNKNOWN:  # a figure a preset may lack: empty takes the preset's, said as much
            warnings.append(f"key {k!r} is empty: the card preset's figure is used (none where the preset has none)")
        del raw[k]
    return raw, warnings, unknown


