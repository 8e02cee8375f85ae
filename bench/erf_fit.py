#!/usr/bin/env python3
"""Where the coefficients of kiln's float erf and tanh come from (kiln/float_math.h).

    /usr/bin/python3 bench/erf_fit.py      (needs numpy: python3-numpy)

erf(x) = x P(x^2) for |x| < 1 and 1 - e^(-x^2) Q(1/x) for 1 <= x < 4, P and Q least-squares
polynomial fits in double on dense grids, printed as float literals, highest power first;
tanh(x) = x + x^3 T(x^2) for |x| < 0.625 likewise. The fits are checked by
tests/backend/cpu/prelude_math_test.cpp (erf within 3 ulps of glibc, tanh within 2).
"""
import math

import numpy as np


def literals(coefficients):
    return ", ".join("%.9ef" % np.float32(c) for c in coefficients)


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


if __name__ == "__main__":
    main()
