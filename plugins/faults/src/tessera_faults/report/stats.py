"""Confidence intervals for the rates a fault-injection report shows.

A campaign injects a *sample* of each population's faults, so every rate it reports
(an outcome's share, a structure's vulnerability) is an estimate of a proportion and
comes with an interval.  The interval is Wilson's score interval (E. B. Wilson,
"Probable inference, the law of succession, and statistical inference", Journal of the
American Statistical Association 22(158):209-212, 1927): unlike the textbook
``p ± z·sqrt(p(1-p)/n)`` it stays inside [0, 1] and does not collapse to a point at 0
or n successes, which is exactly where fault-injection rates live (0 SDCs of 384, all
of 50 skips crash).

The score interval is the set of proportions *p* that a score test at the given
confidence does not reject: ``(p̂ - p)² <= z² · Var(p̂)``.  With sampling with
replacement (or an infinite population) ``Var(p̂) = p(1-p)/n``; solving the quadratic
gives the closed form of :func:`wilson`.

Finite populations.  A campaign draws faults *without* replacement from a population of
known size N (entries × bits × time points), so ``Var(p̂) = p(1-p)/n · (N-n)/(N-1)``
(the finite-population correction, FPC; Cochran, *Sampling Techniques*, 3rd ed., 1977,
§3.3).  We put the FPC where it belongs, into the score test's variance: that is the
Wilson formula with ``z²`` replaced by ``z² · (N-n)/(N-1)``.  This choice (rather than
multiplying the finished half-width by ``sqrt((N-n)/(N-1))``) keeps two properties: a
census (n = N) gives the exact rate as a zero-width interval, and the interval's centre
moves towards p̂ as the sample covers more of the population, as it should.  For
n ≪ N the factor is ≈ 1 and both choices agree.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import attrs

__all__ = ["Interval", "fpc_factor", "wilson", "z_value"]


@attrs.frozen
class Interval:
    """A proportion's estimate (``rate``; None when n = 0) and its interval [low, high]."""

    successes: int
    n: int
    rate: float | None
    low: float
    high: float


def z_value(confidence: float) -> float:
    """The two-sided standard-normal quantile for ``confidence`` (1.959964 for 0.95)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), not {confidence}")
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def fpc_factor(n: int, population: int | None) -> float:
    """``(N-n)/(N-1)``, the variance factor of sampling ``n`` of ``population`` without
    replacement; 1.0 when the population is unknown (None) and 0.0 for a census."""
    if population is None:
        return 1.0
    if population <= 1 or n >= population:
        return 0.0
    return (population - n) / (population - 1)


def wilson(successes: int, n: int, confidence: float = 0.95, population: int | None = None) -> Interval:
    """Wilson's score interval (Wilson 1927) for ``successes`` of ``n``.

    ``centre = (p̂ + z²/2n) / (1 + z²/n)``,
    ``half = z / (1 + z²/n) · sqrt(p̂(1-p̂)/n + z²/4n²)``, with ``z²`` scaled by the
    finite-population factor ``(N-n)/(N-1)`` when ``population`` (N) is known (see the
    module doc for why there).  n = 0 says nothing: the rate is None and the interval
    the whole of [0, 1].
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, not {successes} of {n}")
    z = z_value(confidence)
    if n == 0:
        return Interval(successes, n, None, 0.0, 1.0)
    p = successes / n
    z2 = z * z * fpc_factor(n, population)
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = math.sqrt(z2) / denominator * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    # at 0 or n successes the bound is exactly 0 or 1 (the formula's rounding may not be)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(successes, n, p, low, high)
