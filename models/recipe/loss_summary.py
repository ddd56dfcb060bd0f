"""Summarize WORK/loss.csv as a Markdown table of averages per time bucket.

Usage: loss_summary.py /var/lib/dloop-train/loss.csv [--buckets 12]
The loss columns average the answer-only (SFT) steps; steps of train.py --lm-mix (whole sequence) are left out
of them and counted in their own column.
"""
import argparse
import csv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--buckets", type=int, default=12)
    a = ap.parse_args()
    by_step = {}
    for r in csv.DictReader(open(a.csv)):
        by_step[int(r["step"])] = r  # a resumed run repeats the steps after its checkpoint: keep the last
    rows = [by_step[k] for k in sorted(by_step)]
    total = float(rows[-1]["minutes"])
    print("| minutes | steps | lr | loss (1/t weighted) | masked-token CE | tokens/s | whole-sequence steps |")
    print("|---|---|---|---|---|---|---|")
    for b in range(a.buckets):
        lo, hi = total * b / a.buckets, total * (b + 1) / a.buckets
        part = [r for r in rows if lo <= float(r["minutes"]) < hi or (b == a.buckets - 1 and
                                                                   float(r["minutes"]) == hi)]
        if not part:
            continue
        sft = [r for r in part if r.get("whole", "0") != "1"] or part
        mean = lambda k, rs=part: sum(float(r[k]) for r in rs) / len(rs)  # noqa: E731
        print("| %.0f-%.0f | %s-%s | %.2e | %.3f | %.3f | %.0f | %d |" % (
            lo, hi, part[0]["step"], part[-1]["step"], mean("lr"), mean("loss", sft), mean("masked_ce", sft),
            mean("tokens_per_s"), sum(r.get("whole", "0") == "1" for r in part)))


if __name__ == "__main__":
    main()
