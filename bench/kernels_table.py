#!/usr/bin/env python3
"""Turns kernels_bench JSON output (run with --benchmark_repetitions=N) into the Markdown tables of
docs/performance.md: best and median GFLOP/s per shape and weight type, next to OpenBLAS sgemm.

  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/bench/kernels_bench --threads=1 \\
      --benchmark_repetitions=5 --benchmark_out=t1.json --benchmark_out_format=json
  bench/kernels_table.py t1.json
"""
import json
import statistics
import sys
from collections import defaultdict

TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q6_K"]


def load(path):
    runs = defaultdict(list)  # (kind, shape) -> [GFLOPS per repetition]
    with open(path) as f:
        data = json.load(f)
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].removesuffix("/real_time")
        kind, shape = name.split("/", 1)
        runs[(kind, shape)].append(b["GFLOPS"])
    return data.get("context", {}), runs


def table(runs, pick):
    shapes = []
    for kind, shape in runs:
        if kind.startswith("sgemm") or kind.startswith("matmul"):
            if shape not in shapes:
                shapes.append(shape)
    head = "| shape (m x n x k) | OpenBLAS sgemm | " + " | ".join(TYPES) + " | F32 / OpenBLAS |"
    lines = [head, "|" + "---|" * (len(TYPES) + 3)]
    for shape in shapes:
        blas = runs.get(("sgemm_openblas", shape))
        cells = [f"{pick(blas):.0f}" if blas else "-"]
        for t in TYPES:
            v = runs.get((f"matmul_{t}", shape))
            cells.append(f"{pick(v):.0f}" if v else "n/a")
        f32 = runs.get(("matmul_F32", shape))
        ratio = f"{pick(f32) / pick(blas):.2f}" if f32 and blas else "-"
        lines.append(f"| {shape} | " + " | ".join(cells) + f" | {ratio} |")
    for (kind, shape), v in runs.items():
        if kind.startswith("attention"):
            lines.append(f"\n{kind} {shape}: {pick(v):.0f} GFLOP/s")
    return "\n".join(lines)


def main():
    for path in sys.argv[1:]:
        context, runs = load(path)
        reps = max(len(v) for v in runs.values())
        print(f"### {path}: threads={context.get('threads', '?')}, {reps} repetitions\n")
        print("Best repetition (GFLOP/s):\n")
        print(table(runs, max))
        print("\nMedian repetition (GFLOP/s):\n")
        print(table(runs, statistics.median))
        print()


if __name__ == "__main__":
    main()
