"""``python -m autograder``: a Python without the course's dependencies gets one line on how to set up, not a
traceback."""

import importlib.util
import sys

# the dependencies of every command but `watch`, by import name (pyproject.toml's, and a student release's, add
# watchfiles: `watch` says itself when it is missing, and a Gradescope image, which never watches, has none)
REQUIRED = ("torch", "numpy", "yaml", "rich", "filelock", "pytest")


def missing_dependencies() -> list[str]:
    return [name for name in REQUIRED if importlib.util.find_spec(name) is None]


if __name__ == "__main__":
    missing = missing_dependencies()
    if missing:
        print(
            f"autograder: this Python ({sys.executable}) lacks {', '.join(missing)}: run `make setup`, then "
            "`.venv/bin/python -m autograder ...` (or `pip install -e .` into your own environment)",
            file=sys.stderr,
        )
        sys.exit(2)
    from autograder.cli import main

    sys.exit(main())
