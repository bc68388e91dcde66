"""The quantization lab: what rounding weights to fewer bits does, and where the damage lands.

Per-group affine quantization (docs/method.md section 10.4): a row of weights is cut into groups of ``group``
weights; each group keeps its minimum and maximum (two 16-bit numbers) and stores every weight as the nearest of
``2**bits`` evenly spaced levels between them. Stored bits per weight are therefore ``bits + 32/group`` (4-bit at
group 128 is 4.25), the figure the weight formats of the catalogue use.

The experiment is the one of the project's source notes, reproducible to the last digit: a generator seeded 0
draws a ``n x n`` matrix of N(0, 0.02²) weights (float32), then the positions of ``outliers`` weights that are
multiplied by ``outlier_scale`` in a copy, then an input vector ``x`` of N(0, 1). For each bit width the relative
error of the product, ``|x @ Q(W) - x @ W| / |x @ W|``, is measured on both matrices; per group, the mean absolute
error over the mean absolute weight shows that the outliers' damage stays in the few groups that hold one.

Every function is pure numpy; arrays are float32 as in the reference tables, so the figures match them exactly.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

#: The reference settings: a 4096 x 4096 matrix, 4,096 outliers (0.02 %) at 20x, groups of 128, seed 0.
NOTES = {"n": 4096, "outliers": 4096, "outlier_scale": 20.0, "group": 128, "seed": 0}
#: Bits compared in the reference error table.
NOTES_BITS = (8, 4, 3, 2)
#: Bits of the two numbers each group keeps (its minimum and maximum, 16 bits each).
GROUP_OVERHEAD_BITS = 32


def stored_bits(bits: int, group: int) -> float:
    """Bits per weight including each group's minimum and maximum: ``bits + 32/group``."""
    return bits + GROUP_OVERHEAD_BITS / group


def check_group(group: int, weights: int, given: str = "", where: str = "") -> None:
    """Raise ValueError unless ``group`` is a whole divisor (at least 2) of ``weights``; ``given`` follows the value
    in the message (" (the default)") and ``where`` ends it (" (--size 64)")."""
    if group < 2 or weights % group:
        raise ValueError(f"group={group}{given} is not accepted: group takes a whole divisor (at least 2) of the "
                         f"matrix's {weights:,} weights{where}")


def check_outliers(outliers: int, weights: int, given: str = "", where: str = "") -> None:
    """Raise ValueError unless ``outliers`` is from 0 to ``weights``; ``given`` and ``where`` as in
    :func:`check_group` (``where`` follows "is not accepted")."""
    if not 0 <= outliers <= weights:
        raise ValueError(f"outliers={outliers}{given} is not accepted{where}: outliers takes an integer from 0 to "
                         f"{weights:,}")


def quantize(w: np.ndarray, bits: int, group: int) -> np.ndarray:
    """``w`` rounded to ``2**bits`` levels per group of ``group`` consecutive weights (row-major), and
    reconstructed as a kernel would read it. ``w.size`` must be a multiple of ``group``; raises ValueError if not,
    or if ``bits`` is not in 1..16."""
    if not 1 <= bits <= 16:
        raise ValueError(f"bits={bits} is not accepted: bits takes an integer from 1 to 16")
    check_group(group, w.size)
    groups = w.reshape(-1, group)
    low = groups.min(axis=1, keepdims=True)
    step = (groups.max(axis=1, keepdims=True) - low) / (2**bits - 1)
    step = np.where(step == 0, 1, step)  # a constant group: every weight is its minimum
    levels = np.rint((groups - low) / step)
    return (levels * step + low).reshape(w.shape)


#: Rows of the matrix drawn and quantized at a time: the temporaries of a 4096 x 4096 matrix stay a few MiB, not hundreds.
BLOCK_ROWS = 256


@dataclass(frozen=True)
class Lab:
    """The experiment's inputs: the well-behaved matrix, the copy with outliers, where the outliers are (flat
    indices) and the input vector."""

    weights: np.ndarray
    with_outliers: np.ndarray
    outlier_at: np.ndarray
    x: np.ndarray


@lru_cache(maxsize=1)
def lab(n: int = NOTES["n"], outliers: int = NOTES["outliers"], outlier_scale: float = NOTES["outlier_scale"],
        seed: int = NOTES["seed"]) -> Lab:
    """Draw the experiment (in the reference order: weights, outlier positions, input). Cached: the arrays are
    read-only; one draw at a time (two 4096 x 4096 matrices are 128 MiB). Raises ValueError for an outlier count
    outside 0..n*n."""
    check_outliers(outliers, n * n)
    rng = np.random.default_rng(seed)
    weights = np.empty((n, n), dtype=np.float32)
    for r in range(0, n, BLOCK_ROWS):  # drawn a block of rows at a time: the same stream, no 128 MiB float64 copy
        block = rng.standard_normal((min(BLOCK_ROWS, n - r), n))
        block *= 0.02
        weights[r:r + BLOCK_ROWS] = block
    at = rng.choice(weights.size, outliers, replace=False)
    loud = weights.copy()
    loud.flat[at] *= outlier_scale
    x = rng.standard_normal(n).astype(np.float32)
    for a in (weights, loud, at, x):
        a.setflags(write=False)
    return Lab(weights, loud, at, x)


def _row_blocks(w: np.ndarray, group: int) -> list[slice]:
    """Row ranges of ``w`` that each hold whole groups of ``group`` consecutive (row-major) weights, so that
    quantizing them one at a time groups the weights as quantizing the whole matrix does; one range when no such
    split exists."""
    rows, cols = w.shape
    if (BLOCK_ROWS * cols) % group:
        return [slice(0, rows)]
    return [slice(r, min(r + BLOCK_ROWS, rows)) for r in range(0, rows, BLOCK_ROWS)]


def _product_error(w: np.ndarray, x: np.ndarray, bits: int, group: int) -> float:
    exact = x @ w
    approx = sum(x[b] @ quantize(w[b], bits, group) for b in _row_blocks(w, group))
    return float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))


def error_table(bits: tuple[int, ...] = NOTES_BITS, group: int = NOTES["group"], **setup) -> pd.DataFrame:
    """Relative error of ``x @ W`` after quantization, by bit width: columns ``bits``, ``bits_per_weight``
    (stored, :func:`stored_bits`), ``well_behaved`` and ``with_outliers``. ``setup`` goes to :func:`lab`."""
    e = lab(**setup)
    return pd.DataFrame([{"bits": b, "bits_per_weight": stored_bits(b, group),
                          "well_behaved": _product_error(e.weights, e.x, b, group),
                          "with_outliers": _product_error(e.with_outliers, e.x, b, group)} for b in bits])


def _group_error(w: np.ndarray, bits: int, group: int) -> np.ndarray:
    """Per group of ``w``: mean absolute quantization error over mean absolute weight."""
    g = w.reshape(-1, group)
    return np.abs(quantize(w, bits, group).reshape(-1, group) - g).mean(axis=1) / np.abs(g).mean(axis=1)


def group_damage(bits: int = 4, group: int = NOTES["group"], **setup) -> pd.DataFrame:
    """Where the damage lands: per group, mean absolute error over mean absolute weight, averaged over all
    groups, over the groups holding an outlier and over the rest (NaN where there is no such group), for the
    well-behaved matrix and for the one with outliers. Rows ``matrix``, columns ``all``, ``outlier_groups``,
    ``other_groups``, ``outlier_group_share``."""
    e = lab(**setup)
    hit = np.zeros(e.weights.size // group, dtype=bool)
    hit[np.unique(e.outlier_at // group)] = True
    rows = []
    for name, w in (("well-behaved", e.weights), ("with outliers", e.with_outliers)):
        err = np.concatenate([_group_error(w[b], bits, group) for b in _row_blocks(w, group)])
        rows.append({"matrix": name, "all": float(err.mean()),
                     "outlier_groups": float(err[hit].mean()) if hit.any() else float("nan"),
                     "other_groups": float(err[~hit].mean()) if (~hit).any() else float("nan"),
                     "outlier_group_share": float(hit.mean())})
    return pd.DataFrame(rows)


def bytes_table(weights: int = 512 * 512, formats: tuple[tuple[int, int], ...] = (
        (16, 0), (8, 0), (8, 512), (4, 0), (4, 512))) -> pd.DataFrame:
    """Bytes of ``weights`` weights stored at ``bits`` with ``scales`` 16-bit scales, and the ratio to 16-bit:
    columns ``bits``, ``scales``, ``bytes``, ``vs_16bit``. The reference example is a 512 x 512 matrix."""
    rows = []
    for bits, scales in formats:
        total = weights * bits / 8 + scales * 2
        rows.append({"bits": bits, "scales": scales, "bytes": int(total), "vs_16bit": weights * 2 / total})
    return pd.DataFrame(rows)


#: The bit widths the app's lab compares, and the width whose damage it shows by group.
LAB_BITS = (8, 6, 5, 4, 3, 2)
LAB_DAMAGE_BITS = 4
_LAB_LOCK = threading.Lock()


@lru_cache(maxsize=32)
def _lab_tables(n: int, group: int, outliers: int, outlier_scale: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    setup = {"n": n, "outliers": outliers, "outlier_scale": outlier_scale}
    try:
        return error_table(LAB_BITS, group, **setup), group_damage(LAB_DAMAGE_BITS, group, **setup)
    finally:
        lab.cache_clear()  # the tables are what stays cached; the matrices would hold a server's memory


@dataclass(frozen=True)
class LabRun:
    """One run of the app's lab: the outliers and weights it drew, and its two tables (shared: do not change)."""

    outliers: int
    weights: int
    notes_settings: bool      # the reference settings (4096 x 4096, group 128, 4,096 outliers at 20x)
    errors: pd.DataFrame      # error_table over LAB_BITS
    damage: pd.DataFrame      # group_damage at LAB_DAMAGE_BITS bits


def lab_tables(n: int = NOTES["n"], group: int = NOTES["group"], outlier_share: float | None = None,
               outlier_scale: float = NOTES["outlier_scale"]) -> LabRun:
    """The app's lab for its four inputs, with ``outliers = round(outlier_share * n * n)`` (the reference 4,096 of
    4096² when None). Cached per inputs, one computation at a time: the server warms the reference settings at start,
    and a visitor asking for them meanwhile waits for that run rather than start another."""
    outliers = NOTES["outliers"] if outlier_share is None else round(outlier_share * n * n)
    with _LAB_LOCK:
        errors, damage = _lab_tables(n, group, outliers, float(outlier_scale))
    notes = (n, group, outliers, float(outlier_scale)) == (NOTES["n"], NOTES["group"], NOTES["outliers"],
                                                            NOTES["outlier_scale"])
    return LabRun(outliers, n * n, notes, errors, damage)


def text(bits: tuple[int, ...] = NOTES_BITS, group: int = NOTES["group"], **setup) -> str:
    """The three tables as the command line prints them (``python -m calc --quant-lab``)."""
    errors = error_table(bits, group, **setup)
    damage = group_damage(4 if 4 in bits else bits[0], group, **setup)
    lines = [f"Relative error of x @ W after per-group quantization (group {group}):",
             f"{'bits':>5}{'bits/weight':>13}{'well-behaved':>14}{'with outliers':>15}"]
    lines += [f"{r.bits:5d}{r.bits_per_weight:13.2f}{r.well_behaved:14.4f}{r.with_outliers:15.4f}"
              for r in errors.itertuples()]
    lines += ["", f"Where the {4 if 4 in bits else bits[0]}-bit damage lands, per group of {group} weights:"]
    for r in damage.itertuples():
        lines.append(f"{r.matrix:14} all groups {r.all:.4f}   groups where the outliers sit {r.outlier_groups:.4f}   "
                     f"the rest {r.other_groups:.4f}")
    lines.append(f"{damage['outlier_group_share'].iloc[0]:.1%} of groups contain an outlier")
    lines += ["", "Bytes of a 512 x 512 matrix (scales stored at 16 bits):", "bits  scales  bytes    vs 16-bit"]
    lines += [f"{r.bits:4d}  {r.scales:6d}  {r.bytes:7d}  {r.vs_16bit:8.2f}x" for r in bytes_table().itertuples()]
    return "\n".join(lines)
