"""Prints symmem against the C floor, row by row, with ratios.

    python bench/gpu/compare.py floor.jsonl symmem.jsonl
"""
import json
import sys


def load(path):
    rows = {}
    for line in open(path):
        line = line.split("] ", 1)[-1].strip()  # drop the launcher's "[pe 0] "
        if line.startswith("{"):
            row = json.loads(line)
            rows[(row["what"], row.get("bytes"))] = row
    return rows


def main(floor_path, symmem_path):
    floor, ours = load(floor_path), load(symmem_path)
    print(f"{'what':26} {'bytes':>11} {'C floor':>12} {'symmem':>12} {'ratio':>7}")
    for key, mine in ours.items():
        base = floor.get(key) or floor.get(("put_call_cost", 8) if "call_cost" in key[0] else key)
        if base is None:
            continue
        for field in ("us", "median_us", "seconds"):
            if field in mine:
                a, b = base[field], mine[field]
                ratio = a / b if b else 0.0  # time: floor / symmem
                unit = {"us": "us", "median_us": "us", "seconds": "s"}[field]
                line = (f"{key[0]:26} {key[1] or '':>11} {a:>9.3f} {unit:<2} {b:>9.3f} {unit:<2} "
                        f"{ratio:>6.3f}x")
                if "GBps" in mine:
                    line += f"   {base['GBps']:>7.2f} / {mine['GBps']:>7.2f} GB/s"
                if "median_us" in mine:
                    line += f"   (+{b - a:.2f} us)"
                print(line)
    print("ratio: C floor time / symmem time (1.0 = as fast as the C floor, >1 faster)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
