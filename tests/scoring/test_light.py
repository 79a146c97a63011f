"""The scoring package stays light: scoring a prediction file needs no build dependency.

Each family's scorer (and the registry, and the reply reader it shares) is imported in a fresh
interpreter, with the build's heavy libraries made unimportable, then used on a reply: a scorer
that starts importing ``datasets``, Pillow, numba, polars, Ray or jieba at import time fails
here, naming the module. (jieba loads when an open MULTI answer is scored, never before.)
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("datasets", "PIL", "numba", "polars", "ray", "torch", "pandas", "scipy", "jieba",
         "rapidocr", "onnxruntime", "cv2", "dvc")  # fmt: skip

PROGRAM = f"""
import importlib.abc, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {HEAVY!r}:
            raise ImportError(f"the scoring package imported {{name}}")
        return None

sys.meta_path.insert(0, Refuse())
from benchsmith.scoring import SCORERS
for family in ("mmneedle", "vlicl", "mmiu", "multi"):
    SCORERS.get(family)
import benchsmith.scoring.lime, benchsmith.scoring.lime_legacy, benchsmith.scoring.metrics
from benchsmith.options.option_letters import extract_letter
from benchsmith.scoring.mmneedle_parse import parse_answer
from benchsmith.scoring.multi_points import score_question
from benchsmith.scoring.vlicl_normalise import matcher
assert extract_letter("故选B", ["x", "y"]) == ("B", "cue")
assert score_question("A、C", "AC", "MA", ["a", "b", "c", "d"]).points == 2
assert parse_answer("Answer: (2, 1, 3)", 1).locations == [(2, 1, 3)]
assert matcher("clevr")("three objects", "3")
print("light")
"""


def test_every_scorer_imports_and_reads_replies_without_the_build_dependencies():
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                            timeout=120)  # fmt: skip
    assert result.returncode == 0 and result.stdout.strip() == "light", result.stderr[-2000:]
