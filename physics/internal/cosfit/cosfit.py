#!/usr/bin/env python3
"""Coefficients of the minimax polynomial for cos(pi*d), |d| <= 1/2 (physics/trig.go).

p(d) = 1 + c2 d^2 + c4 d^4 + ... + c16 d^16, fitted in y = d^2 on [0, 1/4] by a
Remez exchange in 40-digit arithmetic. c0 is held at exactly 1 so that cos 0 = 1.
Each coefficient is rounded to float64 in turn (c2 first) and the later ones are
fitted again around the rounded ones, so that the float64 polynomial stays
within a few 1e-18 of cos(pi*d) in exact arithmetic. It then prints the
coefficients as Go constants and the errors: of the float64 coefficients in
exact arithmetic, and of a float64 evaluation in cosPiLanes' order (Estrin),
beside the degree-20 Taylor series, on 24001 points against 40-digit values.

Needs mpmath (Debian: python3-mpmath). Takes about half a minute.
"""
import math
import random

import mpmath as mp

mp.mp.dps = 40
A, B = mp.mpf(0), mp.mpf(1) / 4
K = 8  # coefficients after c0: degree 2K in d


def f(y):
    return mp.cos(mp.pi * mp.sqrt(y))


def remez(fixed, iters=25, grid_n=2000):
    """The coefficients after the fixed ones that minimise max |p - f| on [A, B]."""
    m = K - len(fixed)
    xs = [(A + B) / 2 - (B - A) / 2 * mp.cos(mp.pi * i / m) for i in range(m + 1)]
    xs[0] = mp.mpf("1e-6")
    for _ in range(iters):
        M = mp.matrix(m + 1, m + 1)
        rhs = mp.matrix(m + 1, 1)
        for i, x in enumerate(xs):
            base = 1 + sum(fixed[j] * x ** (j + 1) for j in range(len(fixed)))
            for j in range(m):
                M[i, j] = x ** (len(fixed) + j + 1)
            M[i, m] = (-1) ** i
            rhs[i] = f(x) - base
        sol = mp.lu_solve(M, rhs)
        c = list(fixed) + [sol[j] for j in range(m)]
        grid = [A + (B - A) * i / grid_n for i in range(grid_n + 1)]
        ev = [1 + sum(c[j] * x ** (j + 1) for j in range(K)) - f(x) for x in grid]
        # The largest error in each run of one sign: the new reference points.
        runs, cur = [], [0]
        for k in range(1, grid_n + 1):
            if mp.sign(ev[k]) == mp.sign(ev[cur[-1]]):
                cur.append(k)
            else:
                runs.append(cur)
                cur = [k]
        runs.append(cur)
        pts = [max(r, key=lambda k: abs(ev[k])) for r in runs]
        if len(pts) < m + 1:
            break
        while len(pts) > m + 1:
            pts = pts[1:] if abs(ev[pts[0]]) < abs(ev[pts[-1]]) else pts[:-1]
        xs = [grid[k] if grid[k] > 0 else mp.mpf("1e-6") for k in pts]
    return c


def estrin(c, d):
    """cosPiLanes' float64 evaluation order for 9 coefficients (c[0] = 1):
    v = cos(pi*d) - 1 from its pieces, the largest added last, then 1 + v."""
    y = d * d
    y2 = y * y
    y4 = y2 * y2
    a = c[1] * y
    b = (c[2] + c[3] * y) * y2
    p1 = (c[4] + c[5] * y + (c[6] + c[7] * y) * y2) * y4
    v = a + ((b + p1) + c[8] * (y4 * y4))
    return c[0] + v


def estrin_before(c, d):
    """The order cosPiLanes used before: the pieces added to 1 in turn."""
    y = d * d
    y2 = y * y
    y4 = y2 * y2
    p0 = c[0] + c[1] * y + (c[2] + c[3] * y) * y2
    p1 = (c[4] + c[5] * y + (c[6] + c[7] * y) * y2) * y4
    return p0 + p1 + c[8] * (y4 * y4)


def taylor20(d):
    """The degree-20 Taylor series in the order the kernel used before."""
    c = [mp.mpf(1)]
    for n in range(2, 21, 2):
        c.append(-c[-1] * mp.pi ** 2 / ((n - 1) * n))
    c = [float(x) for x in c]
    y = d * d
    y2 = y * y
    y4 = y2 * y2
    p0 = c[0] + c[1] * y + (c[2] + c[3] * y) * y2
    p1 = (c[4] + c[5] * y + (c[6] + c[7] * y) * y2) * y4
    p2 = (c[8] + c[9] * y + c[10] * y2) * (y4 * y4)
    return p0 + p1 + p2


def main():
    fixed = []
    for j in range(K):
        c = remez(fixed)
        fixed.append(mp.mpf(float(c[j])))
    coef = [1.0] + [float(x) for x in fixed]
    for j, x in enumerate(coef):
        print(f"\tcp{2 * j:<2d} = {x!r}" if j else "\tcp0  = 1")
    exact = max(abs(1 + sum(fixed[j] * x ** (j + 1) for j in range(K)) - f(x))
                for x in [mp.mpf(i) / 16000 for i in range(4001)])
    print(f"float64 coefficients, exact arithmetic: max error {float(exact):.3g}")
    random.seed(1)
    ds = [random.uniform(-0.5, 0.5) for _ in range(20000)] + [i / 4000 for i in range(-2000, 2001)]
    for name, fn in (("minimax, float64", lambda d: estrin(coef, d)),
                     ("minimax, float64, the order before", lambda d: estrin_before(coef, d)),
                     ("Taylor 20, float64", taylor20)):
        errs = [float(abs(mp.mpf(fn(d)) - mp.cos(mp.pi * mp.mpf(d)))) for d in ds]
        rms = math.sqrt(sum(e * e for e in errs) / len(errs))
        print(f"{name}: max error {max(errs):.3g}, rms {rms:.3g} ({len(ds)} points)")


if __name__ == "__main__":
    main()
