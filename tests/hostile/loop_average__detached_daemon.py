"""Hostile: starts daemons (double fork + setsid, one of them exec'ing `sleep`) meant to outlive the run and
tamper later. None may survive: the test looks for __MARKER__ in every process's command line.

expect: zero
"""

import os
import time

import torch


def _daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                os.execv("/usr/bin/sleep", ["sleep", "300", "__MARKER__"])
            except OSError:
                pass
            os._exit(0)
        if os.fork() == 0:
            # a Python daemon: renames itself and waits, then tries to write where the judge might look
            try:
                with open("/proc/self/comm", "w") as fh:
                    fh.write("__MARKER__"[:15])
            except OSError:
                pass
            time.sleep(10)
            for place in ("__OUT__/late.txt", "/tmp/late.txt"):
                try:
                    with open(place, "w") as fh:
                        fh.write("still here")
                except OSError:
                    pass
            time.sleep(300)
            os._exit(0)
        os._exit(0)


_daemon()


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    return None
