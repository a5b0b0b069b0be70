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
point (an error, a core that does not fit the device, a run past --timeout) is recorded with
its error and the sweep goes on; the exit status is 1 if any failed.

Dot-product cores are units `dotN` (N elements per operand, no block scales) and `dotN-S`
(block scales sx_i, sy_i of format S, e.g. `dot8-e8m0` for OCP MX), result binary32; a point
runs `synth --unit dot --n N [--scale-format S] --out-format binary32`, and the unit column
of qor.csv holds the name as given (`dot8-e8m0`). `--units dot` stands for dot4 dot8 dot32
and dot4-e8m0 dot8-e8m0 dot32-e8m0. No unit has an Fmax or cell target in this script (the
targets are in the README's "Measured here" table); dot has none anywhere.

--merge merges the points into OUT/qor.csv (a point replaces the row of the same unit,
format, stages, target and DSP; other rows are kept) instead of overwriting it, and
`--replot CSV --add MORE.csv ...` merges other sweeps' CSVs into CSV before the tables.
"""
import argparse
import csv
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

FORMATLESS_UNITS = {"int-mul8"}
# dotN or dotN-SCALEFORMAT: fp8gen's `dot` unit with N elements, result binary32.
DOT_UNIT = re.compile(r"^dot([0-9]+)(?:-([A-Za-z0-9_.]+))?$")
# What `--units dot` stands for.
DOT_UNITS = ["dot4", "dot8", "dot32", "dot4-e8m0", "dot8-e8m0", "dot32-e8m0"]
KEY = ("unit", "format", "stages", "target", "dsp")
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


def unit_args(unit):
    """fp8gen synth arguments that select `unit` (a dot name expands to its options;
    `mac-exact` is `mac --acc exact`, `mac-il4` is `mac --interleave 4`)."""
    if unit == "mac-exact":
        return ["--unit", "mac", "--acc", "exact"]
    if unit.startswith("mac-il") and unit[6:].isdigit():
        return ["--unit", "mac", "--interleave", unit[6:]]
    m = DOT_UNIT.match(unit)
    if not m:
        return ["--unit", unit]
    args = ["--unit", "dot", "--n", m.group(1), "--out-format", "binary32"]
    if m.group(2):
        args += ["--scale-format", m.group(2)]
    return args


def expand_units(units):
    out = []
    for u in units:
        for v in (DOT_UNITS if u == "dot" else [u]):
            if v not in out:
                out.append(v)
    return out


def run_limited(cmd, timeout):
    """Runs cmd in its own process group; past `timeout` seconds kills the whole group
    (fp8gen and the yosys / nextpnr it started), so a timed-out point leaves nothing behind."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.communicate()
        raise
    except BaseException:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def run_point(fp8gen, unit, fmt, stages, target, dsp, freq, timeout):
    cmd = shlex.split(fp8gen) + ["synth"] + unit_args(unit)
    if fmt != "-":
        cmd += ["--format", fmt]
    cmd += ["--stages", str(stages), "--target", target, "--freq", str(freq), "--json"]
    if not dsp:
        cmd.append("--no-dsp")
    row = {"unit": unit, "format": fmt, "stages": stages, "target": target,
           "dsp": "on" if dsp else "off", "error": ""}
    t0 = time.monotonic()
    try:
        p = run_limited(cmd, timeout)
    except subprocess.TimeoutExpired:
        row["seconds"] = round(time.monotonic() - t0, 1)
        row["error"] = f"timeout: no result after {timeout:g} s (yosys + nextpnr stopped)"
        return row
    except OSError as e:
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
    cells = [int(r["cells"]) for r in ok]
    if cells and min(cells) > 0 and max(cells) > 100 * min(cells):
        ax.set_xscale("log")  # 1-cell int-mul8 to ~10^4-cell dot32 in one plot
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
    fig, axes = plt.subplots(2, len(targets), figsize=(5 * len(targets) + 2.5, 7), dpi=110,
                             squeeze=False, sharex=True, layout="constrained")
    def order(k):
        m = DOT_UNIT.match(k[0])
        return (1, int(m.group(1)), m.group(2) or "", k[1], k[2]) if m else (0, 0) + k
    series = sorted({(r["unit"], r["format"], r["dsp"]) for r in ok}, key=order)
    # One style per series in every panel: dot units dashed with square markers and colours
    # of their own palette, so up to 20 + 20 series stay distinct.
    style, count = {}, {False: 0, True: 0}
    for (u, f, d) in series:
        dot = bool(DOT_UNIT.match(u))
        cmap = plt.get_cmap("tab20b" if dot else "tab20")
        style[(u, f, d)] = dict(color=cmap(count[dot] % 20), linestyle="--" if dot else "-",
                                marker="s" if dot else "o", markersize=4)
        count[dot] += 1
    handles = {}
    for j, t in enumerate(targets):
        for (u, f, d) in series:
            pts = sorted((int(r["stages"]), r) for r in ok
                         if r["target"] == t and (r["unit"], r["format"], r["dsp"]) == (u, f, d))
            if not pts:
                continue
            label = u if f == "-" else f"{u} {f}"
            xs = [p[0] for p in pts]
            st = style[(u, f, d)]
            h, = axes[0][j].plot(xs, [float(p[1]["fmax_mhz"]) for p in pts], label=label, **st)
            axes[1][j].plot(xs, [int(p[1]["cells"]) for p in pts], label=label, **st)
            handles.setdefault(label, h)
        axes[0][j].set_title(t)
        axes[0][j].set_ylabel("Fmax (MHz)")
        axes[1][j].set_ylabel("core cells")
        axes[1][j].set_xlabel("pipeline stages")
        axes[1][j].set_yscale("log")
        for ax in (axes[0][j], axes[1][j]):
            ax.grid(True, alpha=0.3)
    fig.legend(list(handles.values()), list(handles.keys()), loc="outside right upper",
               fontsize=7)
    fig.suptitle("fp8gen: Fmax and area against pipeline depth")
    fig.savefig(path)
    return True


def read_csv(path):
    with open(path, newline="") as f:
        return [dict(r) for r in csv.DictReader(f)]


def merge_rows(old, new):
    """Rows of `old` with each row of `new` replacing the one of the same key (unit, format,
    stages, target, DSP) in place, or appended after them."""
    key = lambda r: tuple(str(r.get(k, "")) for k in KEY)
    rows = list(old)
    at = {key(r): i for i, r in enumerate(rows)}
    for r in new:
        k = key(r)
        if k in at:
            rows[at[k]] = r
        else:
            at[k] = len(rows)
            rows.append(r)
    return rows


def typed(rows):
    for r in rows:
        for k in ("cells", "stages"):
            if r.get(k) not in (None, ""):
                r[k] = int(r[k])
        if r.get("fmax_mhz") not in (None, ""):
            r["fmax_mhz"] = float(r["fmax_mhz"])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replot", metavar="CSV",
                    help="only rewrite qor.md and the plots from a qor.csv (an earlier sweep's, "
                         "or the one `fp8gen merge` writes from a Slurm QoR sweep)")
    ap.add_argument("--add", nargs="+", default=[], metavar="CSV",
                    help="with --replot: merge these qor.csv files into the --replot CSV first "
                         "(same key replaces, new rows are appended) and rewrite it")
    ap.add_argument("--units", nargs="+", default=["int-mul8"],
                    help="fp8gen units (decode project mul fma mac), int-mul8, dotN / dotN-S "
                         "(e.g. dot8, dot8-e8m0) or dot (= " + " ".join(DOT_UNITS) + ")")
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
    ap.add_argument("--merge", action="store_true",
                    help="merge the points into OUT/qor.csv (keeping its other rows) instead "
                         "of overwriting it")
    a = ap.parse_args()
    if a.add and not a.replot:
        ap.error("--add goes with --replot CSV")
    if a.replot:
        rows = read_csv(a.replot)
        if a.add:
            for extra in a.add:
                rows = merge_rows(rows, read_csv(extra))
            write_csv(rows, a.replot)
        rows = typed(rows)
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
    for unit in expand_units(a.units):
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
                              f"{status} ({r.get('seconds', '?')} s)", flush=True)
    failed = any(r.get("error") for r in rows)
    csv_path = os.path.join(a.out, "qor.csv")
    if a.merge and os.path.exists(csv_path):
        rows = typed(merge_rows(read_csv(csv_path), rows))
    write_csv(rows, csv_path)
    write_md(rows, os.path.join(a.out, "qor.md"))
    plotted = write_png(rows, os.path.join(a.out, "qor.png"))
    write_stages_png(rows, os.path.join(a.out, "qor_stages.png"))
    print(f"wrote {a.out}/qor.csv, qor.md" + (", qor.png, qor_stages.png" if plotted else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
