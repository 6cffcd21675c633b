"""Benchmark: what a fresh child and a round trip cost, in CPU, with the sandbox the class grader uses.

    .venv/bin/python bench/child_cost.py            # 100 bare children, 2000 trivial round trips

* a bare child: fork from the warm zygote, load a one-line file, goodbye, exit, clean-up; the CPU of the zygote
  (its own and that of the children it reaped, from /proc) and of this process (the judge), per child;
* a round trip: ``f(x)`` returning its (2, 5, 4) float64 argument, in one child; CPU of the judge and of the child.

Figures only: compare them with a run of another checkout (``--code``) made just before or after.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cpu_s(pid: int) -> tuple[float, float]:
    """(own, reaped children's) CPU seconds of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def _judge_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--children", type=int, default=100)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout whose autograder runs (default: this one)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(args.code))
    import torch

    from autograder.sandbox.host import Sandbox

    sandbox = Sandbox().start()
    try:
        bwrap = sandbox.proc.pid
        kids = Path(f"/proc/{bwrap}/task/{bwrap}/children").read_text().split()
        zygote = int(kids[0]) if kids else bwrap  # under bubblewrap the zygote is its child

        def bare() -> None:
            proxy = sandbox.open("x = 1\n", "/bare.py")
            proxy._ensure()
            proxy.close()

        for _ in range(10):  # past the ninth, the zygote's heap is in huge pages (see zygote.zygote)
            bare()
        own0, reaped0 = _cpu_s(zygote)
        judge0, t0 = _judge_s(), time.perf_counter()
        for _ in range(args.children):
            bare()
        wall, judge = time.perf_counter() - t0, _judge_s() - judge0
        own1, reaped1 = _cpu_s(zygote)
        n = args.children
        print(
            f"bare child:  wall {1000 * wall / n:.1f} ms; CPU: zygote {1000 * (own1 - own0) / n:.1f} ms, "
            f"child {1000 * (reaped1 - reaped0) / n:.1f} ms, judge {1000 * judge / n:.1f} ms"
        )

        proxy = sandbox.open("def f(x):\n    return x\n", "/echo.py")
        x = torch.randn(2, 5, 4, dtype=torch.float64)
        for _ in range(50):
            proxy.call("f", x)
        child = int(Path(f"/proc/{zygote}/task/{zygote}/children").read_text().split()[0])
        c0 = sum(_cpu_s(child)[:1])
        judge0, t0 = _judge_s(), time.perf_counter()
        for _ in range(args.calls):
            proxy.call("f", x)
        wall, judge = time.perf_counter() - t0, _judge_s() - judge0
        c1 = sum(_cpu_s(child)[:1])
        proxy.close()
        n = args.calls
        print(
            f"round trip:  wall {1e6 * wall / n:.0f} us; CPU: judge {1e6 * judge / n:.0f} us, "
            f"child {1e6 * (c1 - c0) / n:.0f} us"
        )
    finally:
        sandbox.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
