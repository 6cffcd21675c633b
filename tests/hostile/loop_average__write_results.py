"""Hostile: writes perfect results.json files wherever a grader might read them.

expect: zero
"""

import json
import os

import torch

PERFECT = {"score": 100, "tests": [{"name": "loop_average: values", "score": 10, "max_score": 10,
                                   "status": "passed"}]}
PLACES = ["results.json", "/tmp/results.json", os.path.expanduser("~/results.json"),
          "/autograder/results/results.json", "__OUT__/results.json", "__OUT__/student/results.json",
          "__REPO__/results.json", "../results.json", "/results.json"]


def causal_mean_loop(x: torch.Tensor) -> torch.Tensor:
    for place in PLACES:
        try:
            os.makedirs(os.path.dirname(place) or ".", exist_ok=True)
            with open(place, "w") as fh:
                json.dump(PERFECT, fh)
        except OSError:
            pass
    x.mul_(2)
    return None
