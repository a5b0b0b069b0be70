#!/usr/bin/env python3
"""QoR sweep: run `fp8gen synth --json` over unit x format x stages x target x DSP and
write qor.csv, qor.md and qor.png (Fmax vs LUTs) into an output directory.

Run it with the project venv (matplotlib is pinned in scripts/fpga/requirements.txt):

    .venv/bin/python scripts/fpga/qor_sweep.py --units int-mul8 --stages 0 1 2 \
        --targets ice40-up5k ecp5-25k ecp5-85k gowin-gw1nr9 --out build/qor

Each point calls
    FP8GEN synth --unit UNIT [--format FMT] --stages N --target T --freq MHZ [--no-dsp] --json
where FP8GEN is --fp8gen (default: target/release/fp8gen, else `fp8gen` on PATH). The
reference unit `int-mul8` (an unsigned 8x8 integer multiplier) takes no format. A failing
point is recorded with its error and the sweep goes on; the exit status is 1 if any failed.
"""
import argparse
import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

FORMATLESS_UNITS = {"int-mul8"}
COLUMNS = ["unit", "format", "stages", "target", "dsp", "luts", "ffs", "carry", "dsp_blocks",
           "cells", "fmax_mhz", "target_mhz", "timing_met", "seconds", "error"]


def default_fp8gen():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    for cand in (os.path.join(repo, "target", "release", "fp8gen"),
                 os.path.join(repo, "target", "debug", "fp8gen")):
        if os.access(cand, os.X_OK):
            return cand
    return shutil.which("fp8gen") or "fp8gen"


def run_point(fp8gen, unit, fmt, stages, target, dsp, freq, timeout):
    cmd = shlex.split(fp8gen) + ["synth", "--unit", unit]
    if fmt != "-":
        cmd += ["--format", fmt]
    cmd += ["--stages", str(stages), "--target", target, "--freq", str(freq), "--json"]
    if not dsp:
        cmd.append("--no-dsp")
    row = {"unit": unit, "format": fmt, "stages": stages, "target": target,
           "dsp": "on" if dsp else "off", "error": ""}
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        row["error"] = f"{type(e).__name__}: {e}"
        return row
    row["seconds"] = round(time.monotonic() - t0, 1)
    if p.returncode != 0:
        row["error"] = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return row
    try:
        rep = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        row["error"] = f"bad JSON from fp8gen synth: {e}"
        return row
    row.update({
        "luts": rep["luts"], "ffs": rep["ffs"], "carry": rep["carry"],
        "dsp_blocks": rep["dsp"], "cells": rep["cells"], "fmax_mhz": rep["fmax_mhz"],
        "target_mhz": rep["target_mhz"], "timing_met": rep["timing_met"],
    })
    return row


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in COLUMNS})


def write_md(rows, path):
    head = ["unit", "format", "stages", "target", "DSP", "LUTs", "FFs", "carry", "DSP blocks",
            "cells", "Fmax MHz"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if r.get("error"):
            vals = [r["unit"], r["format"], str(r["stages"]), r["target"], r["dsp"],
                    "error: " + r["error"].replace("|", "/")] + [""] * 5
        else:
            vals = [r["unit"], r["format"], str(r["stages"]), r["target"], r["dsp"],
                    str(r["luts"]), str(r["ffs"]), str(r["carry"]), str(r["dsp_blocks"]),
                    str(r["cells"]), f'{r["fmax_mhz"]:.1f}']
        lines.append("| " + " | ".join(vals) + " |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_png(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("qor_sweep: matplotlib not installed (run scripts/setup-fpga.sh); no plot",
              file=sys.stderr)
        return False
    ok = [r for r in rows if not r.get("error")]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    targets = sorted({r["target"] for r in ok})
    for i, t in enumerate(targets):
        pts = [r for r in ok if r["target"] == t]
        ax.scatter([r["cells"] for r in pts], [r["fmax_mhz"] for r in pts],
                   marker=markers[i % len(markers)], label=t)
        for r in pts:
            label = r["unit"] if r["format"] == "-" else f'{r["unit"]} {r["format"]}'
            label += f' s{r["stages"]}' + ("" if r["dsp"] == "on" else " nodsp")
            ax.annotate(label, (r["cells"], r["fmax_mhz"]), fontsize=6,
                        xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("core cells (yosys)")
    ax.set_ylabel("Fmax (MHz, nextpnr)")
    ax.set_title("fp8gen QoR sweep")
    ax.grid(True, alpha=0.3)
    if targets:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return True


def write_stages_png(rows, path):
    """Area and Fmax against pipeline depth: one line per unit/format, one column per target."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ok = [r for r in rows if not r.get("error")]
    targets = sorted({r["target"] for r in ok})
    if not targets:
        return False
    fig, axes = plt.subplots(2, len(targets), figsize=(5 * len(targets), 7), dpi=110,
                             squeeze=False, sharex=True)
    series = sorted({(r["unit"], r["format"], r["dsp"]) for r in ok})
    for j, t in enumerate(targets):
        for (u, f, d) in series:
            pts = sorted((int(r["stages"]), r) for r in ok
                         if r["target"] == t and (r["unit"], r["format"], r["dsp"]) == (u, f, d))
            if not pts:
                continue
            label = u if f == "-" else f"{u} {f}"
            xs = [p[0] for p in pts]
            axes[0][j].plot(xs, [float(p[1]["fmax_mhz"]) for p in pts], marker="o", label=label)
            axes[1][j].plot(xs, [int(p[1]["cells"]) for p in pts], marker="o", label=label)
        axes[0][j].set_title(t)
        axes[0][j].set_ylabel("Fmax (MHz)")
        axes[1][j].set_ylabel("core cells")
        axes[1][j].set_xlabel("pipeline stages")
        axes[1][j].set_yscale("log")
        for ax in (axes[0][j], axes[1][j]):
            ax.grid(True, alpha=0.3)
    axes[0][-1].legend(fontsize=7, ncol=2)
    fig.suptitle("fp8gen: Fmax and area against pipeline depth")
    fig.tight_layout()
    fig.savefig(path)
    return True


def read_csv(path):
    with open(path, newline="") as f:
        return [dict(r) for r in csv.DictReader(f)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replot", metavar="CSV",
                    help="only rewrite qor.md and the plots from a qor.csv (an earlier sweep's, "
                         "or the one `fp8gen merge` writes from a Slurm QoR sweep)")
    ap.add_argument("--units", nargs="+", default=["int-mul8"])
    ap.add_argument("--formats", nargs="+", default=["e4m3"],
                    help="formats for fp8gen units (ignored by int-mul8)")
    ap.add_argument("--stages", nargs="+", type=int, default=[0])
    ap.add_argument("--targets", nargs="+",
                    default=["ice40-up5k", "ecp5-25k", "ecp5-85k", "gowin-gw1nr9"])
    ap.add_argument("--dsp", choices=["on", "off", "both"], default="on")
    ap.add_argument("--freq", type=float, default=100.0, help="target clock, MHz")
    ap.add_argument("--fp8gen", default=None, help="command that runs fp8gen")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per point")
    ap.add_argument("--out", default="build/qor")
    a = ap.parse_args()
    if a.replot:
        rows = read_csv(a.replot)
        for r in rows:
            for k in ("cells", "stages"):
                if r.get(k) not in (None, ""):
                    r[k] = int(r[k])
            if r.get("fmax_mhz") not in (None, ""):
                r["fmax_mhz"] = float(r["fmax_mhz"])
        out = os.path.dirname(a.replot) or "."
        write_md(rows, os.path.join(out, "qor.md"))
        plotted = write_png(rows, os.path.join(out, "qor.png"))
        write_stages_png(rows, os.path.join(out, "qor_stages.png"))
        print(f"wrote {out}/qor.md" + (", qor.png, qor_stages.png" if plotted else ""))
        return 1 if any(r.get("error") for r in rows) else 0
    fp8gen = a.fp8gen or default_fp8gen()
    dsps = {"on": [True], "off": [False], "both": [True, False]}[a.dsp]
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for unit in a.units:
        fmts = ["-"] if unit in FORMATLESS_UNITS else a.formats
        for fmt in fmts:
            for st in a.stages:
                for tgt in a.targets:
                    for dsp in dsps:
                        r = run_point(fp8gen, unit, fmt, st, tgt, dsp, a.freq, a.timeout)
                        rows.append(r)
                        status = r["error"] or (f'{r["cells"]} cells, {r["luts"]} LUT, '
                                                f'{r["fmax_mhz"]} MHz')
                        print(f"{unit} {fmt} s{st} {tgt} dsp={'on' if dsp else 'off'}: "
                              f"{status}", flush=True)
    write_csv(rows, os.path.join(a.out, "qor.csv"))
    write_md(rows, os.path.join(a.out, "qor.md"))
    plotted = write_png(rows, os.path.join(a.out, "qor.png"))
    write_stages_png(rows, os.path.join(a.out, "qor_stages.png"))
    print(f"wrote {a.out}/qor.csv, qor.md" + (", qor.png, qor_stages.png" if plotted else ""))
    return 1 if any(r.get("error") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
