#!/usr/bin/env python3
"""Where the coefficients of kiln's float erf and tanh come from (kiln/ir/float_math.h).

    /usr/bin/python3 bench/erf_fit.py      (needs numpy: python3-numpy)

erf(x) = x P(x^2) for |x| < 1 and 1 - e^(-x^2) Q(1/x) for 1 <= x < 4, P and Q least-squares
polynomial fits in double on dense grids, printed as float literals, highest power first;
tanh(x) = x + x^3 T(x^2) for |x| < 0.625 likewise. GELU's Phi(x) - 1/2 = x G(x^2) / H(x^2)
for |x| < 4 sqrt(2), G and H of degree 5, is a minimax fit in absolute error (linearised least
squares with Lawson's reweighting), printed with the coefficients of G' and H' (the density is
that rational's derivative). The fits are checked by tests/backend/cpu/prelude_math_test.cpp
(erf within 3 ulps of glibc, tanh within 2, GELU within 3e-7 and its derivative 6e-7).
"""
import math

import numpy as np


def literals(coefficients):
    return ", ".join("%.9ef" % np.float32(c) for c in coefficients)


def gelu_rational(degree=5, edge=4 * math.sqrt(2), iterations=80):
    """G, H (lowest power first, H[0] = 1) with Phi(x) - 1/2 ~ x G(x^2) / H(x^2) on [0, edge]."""
    x = np.linspace(0.0, edge, 40001)
    f = np.array([0.5 * math.erf(v / math.sqrt(2)) for v in x])
    u = (x / edge) ** 2  # powers of x^2 scaled to [0, 1] while fitting
    h = np.zeros(degree + 1)
    h[0] = 1.0
    weights = np.ones_like(x)
    for _ in range(iterations):
        # x G(u) - f H(u) = 0 in the unknowns G and H[1:], each row divided by the last H(u)
        rows = np.hstack([x[:, None] * u[:, None] ** np.arange(degree + 1),
                          -f[:, None] * u[:, None] ** np.arange(1, degree + 1)])
        scale = np.sqrt(weights) / np.abs(np.polyval(h[::-1], u))
        solution = np.linalg.lstsq(rows * scale[:, None], f * scale, rcond=None)[0]
        g, h = solution[:degree + 1], np.concatenate([[1.0], solution[degree + 1:]])
        error = x * np.polyval(g[::-1], u) / np.polyval(h[::-1], u) - f
        weights = weights * (np.abs(error) + 1e-30)
        weights /= weights.sum()
    powers = (edge * edge) ** np.arange(degree + 1)
    return np.float32(g / powers), np.float32(h / powers)


def main():
    small = np.linspace(0.0, 1.0, 20001)
    p = np.polyfit(small**2, [math.erf(x) / x if x else 2 / math.sqrt(math.pi) for x in small], 6)
    large = np.linspace(1.0, 4.0, 30001)
    q = np.polyfit(1.0 / large, [math.erfc(x) * math.exp(x * x) for x in large], 7)
    print("P (x^2, |x| < 1):", literals(p))
    print("Q (1/x, 1 <= x < 4):", literals(q))
    near = np.linspace(1e-4, 0.625, 40001)
    t = np.polyfit(near**2, (np.tanh(near) - near) / near**3, 4)
    print("T (x^2, |x| < 0.625):", literals(t))
    g, h = gelu_rational()
    print("G (x^2, GELU):", literals(g[::-1]))
    print("H (x^2, GELU):", literals(h[::-1]))
    print("G':", literals([np.float32(k * g[k]) for k in range(len(g) - 1, 0, -1)]))
    print("H':", literals([np.float32(k * h[k]) for k in range(len(h) - 1, 0, -1)]))


if __name__ == "__main__":
    main()
