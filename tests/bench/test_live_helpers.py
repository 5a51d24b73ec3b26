"""The live benchmarks share one set of clients, writer and measurement (bench/_live.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from bench import _live

BENCH = Path(__file__).resolve().parents[2] / "bench"
SHARED = {"Clients", "measure", "run_writer", "_run_writer", "_wait_for", "_cpu_seconds", "_pct"}


def test_the_live_benches_define_no_measurement_of_their_own():
    for script in ("live_fanout.py", "wall_live.py"):
        tree = ast.parse((BENCH / script).read_text())
        defined = {
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        assert defined & SHARED == set(), script
        assert "from bench import _live as live" in (BENCH / script).read_text()


def test_percentiles_pick_the_nearest_rank():
    values = [float(n) for n in range(1, 101)]
    assert _live.pct(values, 0.5) == 51.0
    assert _live.pct(values, 0.99) == 99.0
    assert _live.pct([], 0.5) != _live.pct([], 0.5)  # nan: nothing measured
