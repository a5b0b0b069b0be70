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
and dot4-e8m0 dot8-e8m0 dot32-e8m0. MX block quantizers are units `quantizeN` (N binary32
elements → the row's format with one E8M0 scale, policy floor, satfinite: OCP MX v1.0 §6.3);
a point runs `synth --unit quantize --n N --scale-format e8m0 --scale-policy floor
--saturation satfinite`. `int-mul8` has 0, 1 or 2 stages only: other --stages
values are skipped for it with a one-line note (no row).

Whenever it writes qor.md and qor.png (a sweep, --merge or --replot) the script also reads
two committed data files, never copied into qor.csv:
  --reference CSV (default scripts/fpga/qor_reference.csv): published figures of other
      designs measured with the same flow (FloPoCo FPMult, CVFPU FMA and ExSdotp on
      ECP5-25k; sizes in nextpnr TRELLIS_COMB), not rebuilt here. qor.md lists each beside
      the comparable fp8gen row (same unit, format and target; same stage count if
      measured, else the nearest), qor.png draws them as hollow markers.
  --qor-targets CSV (default scripts/fpga/qor_targets.csv): Fmax / cell / stage targets per
      core; qor.md's "Targets" section shows the best measured row within each stage bound
      and whether it meets the target.

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
# Stage counts a formatless reference unit has (fpga::refcores::int_mul: 0, 1 or 2); other
# requested counts are skipped, not recorded as error rows.
UNIT_STAGES = {"int-mul8": (0, 1, 2)}
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REFERENCE = os.path.join(HERE, "qor_reference.csv")
DEFAULT_TARGETS = os.path.join(HERE, "qor_targets.csv")
REFERENCE_COLUMNS = ["design", "label", "unit", "format", "stages", "target", "size",
                     "size_metric", "dsp_blocks", "fmax_mhz", "semantics", "source"]
TARGET_COLUMNS = ["core", "unit", "format", "target", "max_stages", "min_fmax_mhz",
                  "max_cells", "limit"]
# dotN or dotN-SCALEFORMAT: fp8gen's `dot` unit with N elements, result binary32.
DOT_UNIT = re.compile(r"^dot([0-9]+)(?:-([A-Za-z0-9_.]+))?$")
# quantizeN: fp8gen's `quantize` unit with N binary32 elements, E8M0 scale, floor, satfinite.
QUANTIZE_UNIT = re.compile(r"^quantize([0-9]+)$")
# What `--units dot` stands for.
DOT_UNITS = ["dot4", "dot8", "dot32", "dot4-e8m0", "dot8-e8m0", "dot32-e8m0"]
KEY = ("unit", "format", "stages", "target", "dsp")
COLUMNS = ["unit", "format", "stages", "target", "dsp", "luts", "ffs", "carry", "dsp_blocks",
           "cells", "fmax_mhz", "target_mhz", "timing_met", "seconds", "error", "seeds",
           "fmax_min_mhz", "fmax_max_mhz", "pnr_luts", "crit_ns", "crit_logic_ns",
           "crit_route_ns", "crit_levels", "crit_carry", "crit_stage", "crit_from", "crit_to",
           "stage_ns", "model_levels"]
# The critical-path columns (`fp8gen synth --json`'s critical_path, measured by nextpnr on the
# routed design, of the median seed): crit_ns = crit_logic_ns + crit_route_ns, crit_levels
# (logic levels), crit_carry (carry-chain arcs), crit_stage ("1", or "u_round:0" for a stage of
# an instance inside the core; empty when neither end register is a pipeline register),
# crit_from / crit_to (start and end register); stage_ns, measured in the same run: the latest
# arrival at the registers ending each stage ("4.24|3.88|3.72", "-" for a stage without
# registers, instances as "u_round=5.21|4.80", the core's other registers, state registers, as
# "other=3.10" / "u_fma.other=...", iCE40 register cells named after their LUT, of no known
# stage, as "?.other=..."). model_levels is not measured: the pipeliner's
# estimate of every stage in levels ("7.4|7.4|7.4", instances as "u_term=6.4|6.8 u_round=...").
# Rows measured before these columns existed leave them empty.
CRIT_COLUMNS = COLUMNS[COLUMNS.index("crit_ns"):]
# nextpnr's placed logic cells per architecture (the `pnr_luts` column): ECP5 TRELLIS_COMB
# (LUT4s and carry-chain halves after packing), iCE40 ICESTORM_LC, Gowin LUT4. Counted over
# the whole placed design, the synthesis wrapper's XOR tree included (a few LUTs, one per 4
# output bits and level). Rows measured before the column existed leave it empty ("-").
PNR_LUT_TYPES = ("TRELLIS_COMB", "ICESTORM_LC", "LUT4")


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
    `mac-exact` is `mac --acc exact`, `mac-il4` is `mac --interleave 4`, `mul-ftz-noflags`
    is `mul --ftz --no-flags`, FloPoCo FPMult's semantics and interface, `convert-F` is
    `convert --in-format F`: F converted to the row's format, `quantizeN` the MX block
    quantizer of N binary32 elements, E8M0 scale, floor, satfinite)."""
    if unit.startswith("convert-") and len(unit) > 8:
        return ["--unit", "convert", "--in-format", unit[8:]]
    if unit == "mul-ftz-noflags":
        return ["--unit", "mul", "--ftz", "--no-flags"]
    if unit == "mac-exact":
        return ["--unit", "mac", "--acc", "exact"]
    if unit.startswith("mac-il") and unit[6:].isdigit():
        return ["--unit", "mac", "--interleave", unit[6:]]
    q = QUANTIZE_UNIT.match(unit)
    if q:
        return ["--unit", "quantize", "--n", q.group(1), "--scale-format", "e8m0",
                "--scale-policy", "floor", "--saturation", "satfinite"]
    m = DOT_UNIT.match(unit)
    if not m:
        return ["--unit", unit]
    args = ["--unit", "dot", "--n", m.group(1), "--out-format", "binary32"]
    if m.group(2):
        args += ["--scale-format", m.group(2)]
    return args


def unit_stages(unit, stages):
    """(kept, skipped): the requested stage counts `unit` has, and those it has not."""
    have = UNIT_STAGES.get(unit)
    if have is None:
        return list(stages), []
    return [s for s in stages if s in have], [s for s in stages if s not in have]


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


def run_point(fp8gen, unit, fmt, stages, target, dsp, freq, timeout, seeds=1):
    cmd = shlex.split(fp8gen) + ["synth"] + unit_args(unit)
    if fmt != "-":
        cmd += ["--format", fmt]
    cmd += ["--stages", str(stages), "--target", target, "--freq", str(freq), "--json"]
    if seeds > 1:
        # place and route with N seeds after one synthesis; fmax_mhz is their median
        cmd += ["--seeds", str(seeds)]
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
        row["error"] = failure_text(p.stderr, p.returncode)
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
        "seeds": max(1, len(rep.get("fmax_by_seed") or [])),
        "fmax_min_mhz": rep.get("fmax_min_mhz", ""), "fmax_max_mhz": rep.get("fmax_max_mhz", ""),
        "pnr_luts": pnr_luts(rep.get("pnr_utilization") or {}),
    })
    row.update(crit_columns(rep))
    return row


def crit_columns(rep):
    """The critical-path and stage-model columns of one `fp8gen synth --json` report."""
    out = {}
    cp = rep.get("critical_path")
    if cp:
        stage = cp.get("stage")
        scope = cp.get("scope") or ""
        out.update({
            "crit_ns": round(cp["total_ns"], 3), "crit_logic_ns": round(cp["logic_ns"], 3),
            "crit_route_ns": round(cp["routing_ns"], 3), "crit_levels": cp["levels"],
            "crit_carry": cp["carry_arcs"], "crit_from": cp["from"], "crit_to": cp["to"],
            "crit_stage": "" if stage is None else (f"{scope}:{stage}" if scope else str(stage)),
        })
    out["stage_ns"] = stage_ns_cell(rep.get("stage_times") or [])
    model = rep.get("stage_model") or []
    out["model_levels"] = " ".join(
        (f'{m["scope"]}=' if m["scope"] else "") + "|".join(f"{l:.1f}" for l in m["levels"])
        for m in model)
    return out


def stage_ns_cell(times):
    """The stage_ns cell of a report's stage_times (see the column comment)."""
    scopes = []
    for t in times:
        if t["scope"] not in scopes:
            scopes.append(t["scope"])
    tokens = []
    for sc in scopes:
        ts = [t for t in times if t["scope"] == sc]
        staged = {t["stage"]: t["ns"] for t in ts if t.get("stage") is not None}
        if staged:
            vals = [f"{staged[k]:.2f}" if k in staged else "-" for k in range(max(staged) + 1)]
            tokens.append((f"{sc}=" if sc else "") + "|".join(vals))
        for t in ts:
            if t.get("stage") is None:
                tokens.append((f"{sc}." if sc else "") + f'other={t["ns"]:.2f}')
    return " ".join(tokens)


def stage_ns_of(r):
    """{scope: [ns or None per stage]} of a row's stage_ns cell ({} when empty); the other
    registers of a scope under the key "SCOPE.other" ("other" for the top module)."""
    out = {}
    for part in (r.get("stage_ns") or "").split():
        key, _, vals = part.rpartition("=")
        if key == "other" or key.endswith(".other"):
            out[key] = float(vals)
            continue
        out[key] = [None if v == "-" else float(v) for v in vals.split("|")]
    return out


def model_of(r):
    """{scope: [levels per stage]} of a row's model_levels cell ({} when empty)."""
    out = {}
    for part in (r.get("model_levels") or "").split():
        scope, _, levels = part.rpartition("=")
        try:
            out[scope] = [float(x) for x in levels.split("|")]
        except ValueError:
            continue
    return out


def has_path(r):
    return r.get("crit_ns") not in (None, "")


def path_cell(r):
    """The qor.md cell of a row's measured worst path: `stage 1: 6.29 ns (59 % routing), 5
    levels + 3 carry`; "-" for rows without it."""
    if not has_path(r):
        return "-"
    ns, route = float(r["crit_ns"]), float(r["crit_route_ns"])
    st = r.get("crit_stage") or ""
    scope, _, k = st.rpartition(":")
    where = (f"{scope} stage {k}" if scope else f"stage {k}") if st else "no stage"
    carry = f' + {r["crit_carry"]} carry' if str(r.get("crit_carry") or "0") != "0" else ""
    return (f'{where}: {ns:.2f} ns ({100 * route / ns:.0f} % routing), '
            f'{r["crit_levels"]} levels{carry}')


def limit_text(r):
    """The measured limit of a row for the Targets table: its worst path (stage k of 0–S,
    ns = logic + routing, levels, from → to) and, beside it, the pipeliner's estimate of
    that stage and of its longest stage (a model, not measured)."""
    if not has_path(r):
        return "worst path not recorded (row measured before the critical-path columns)"
    ns, logic, route = float(r["crit_ns"]), float(r["crit_logic_ns"]), float(r["crit_route_ns"])
    st = r.get("crit_stage") or ""
    scope, _, k = st.rpartition(":")
    n = int(r["stages"])
    if not st:
        where = "outside the pipeline stages"
    elif scope:
        where = f"stage {k} of instance {scope}"
    else:
        where = f"stage {k} of 0–{n}"
    carry = f' + {r["crit_carry"]} carry arcs' if str(r.get("crit_carry") or "0") != "0" else ""
    text = (f'measured worst path: {where}, {ns:.2f} ns = {logic:.2f} logic + {route:.2f} '
            f'routing ({100 * route / ns:.0f} %), {r["crit_levels"]} LUT levels{carry}, '
            f'{r.get("crit_from", "")} → {r.get("crit_to", "")}')
    times = stage_ns_of(r).get(scope if st else "")
    if isinstance(times, list) and times:
        text += ("; measured per stage (latest arrival at its end registers): " +
                 " | ".join("-" if t is None else f"{t:.2f}" for t in times) + " ns")
    unknown = stage_ns_of(r).get("?.other")
    if unknown is not None:
        text += (f"; registers of no known stage (iCE40 cells named after their LUT) "
                 f"up to {unknown:.2f} ns")
    levels = model_of(r).get(scope)
    if levels and k.isdigit() and int(k) < len(levels):
        worst = max(range(len(levels)), key=lambda i: levels[i])
        text += (f"; model: stage {k} {levels[int(k)]:.1f} levels, longest stage {worst} "
                 f"{levels[worst]:.1f}")
    return text


def pnr_luts(util):
    """The placed logic-cell count of nextpnr's utilisation (type -> [used, available]), or
    "" when it names none of PNR_LUT_TYPES."""
    for ty in PNR_LUT_TYPES:
        if ty in util:
            return int(util[ty][0])
    return ""


def pnr_cell(r):
    """The pnr_luts cell of qor.md: "-" for rows without it (measured before the column)."""
    v = r.get("pnr_luts")
    return "-" if v in (None, "") else str(v)


def failure_text(stderr, returncode):
    """The error cell of a failed point: nextpnr's `ERROR:` line when there is one (a design
    that does not fit: "no BELs remaining to implement cell type 'ICESTORM_LC'", the
    generated cell name left out), else the last line of stderr (nextpnr ends with a
    summary such as "1 warning, 1 error", which says nothing)."""
    lines = [l.strip() for l in stderr.strip().splitlines() if l.strip()]
    errors = [l for l in lines if l.startswith("ERROR:")]
    if errors:
        e = re.sub(r"Unable to place cell '[^']*'", "Unable to place a cell", errors[-1])
        return "nextpnr " + e
    return lines[-1] if lines else "exit %d" % returncode


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in COLUMNS})


def error_text(err):
    """An error cell for qor.md: fp8gen's own messages already start with `error:`."""
    err = err.strip()
    return err if err.lower().startswith("error:") else "error: " + err


def md_cell(v):
    return str(v).replace("|", "/").replace("\n", " ")


def fp8gen_label(r):
    return (r["unit"] if r["format"] == "-" else f'{r["unit"]} {r["format"]}') + f' s{r["stages"]}'


def read_data_file(path, columns):
    """Rows of a committed data file (`path`; [] for no path) that must have `columns`."""
    if not path:
        return []
    rows = read_csv(path)
    missing = [c for c in columns if rows and c not in rows[0]]
    if missing:
        raise ValueError(f"{path}: missing columns {', '.join(missing)}")
    return rows


def read_reference(path):
    """Reference rows (published designs) of `path`, typed; [] for no path."""
    rows = read_data_file(path, REFERENCE_COLUMNS)
    for r in rows:
        r["stages"] = int(r["stages"])
        r["size"] = int(r["size"])
        r["dsp_blocks"] = int(r["dsp_blocks"] or 0)
        r["fmax_mhz"] = float(r["fmax_mhz"])
    return rows


def read_targets(path):
    """Target rows of `path`; max_stages / min_fmax_mhz / max_cells None when empty."""
    rows = read_data_file(path, TARGET_COLUMNS)
    for r in rows:
        for k, conv in (("max_stages", int), ("min_fmax_mhz", float), ("max_cells", int)):
            v = (r.get(k) or "").strip()
            r[k] = conv(v) if v else None
        r["limit"] = (r.get("limit") or "").strip()
    return rows


def measured(rows, unit, fmt, target):
    return [r for r in rows if not r.get("error") and r.get("fmax_mhz") not in (None, "")
            and r["unit"] == unit and r["format"] == fmt and r["target"] == target]


def match_reference(ref, rows):
    """The fp8gen row to set beside a reference row: same unit, format and target, the same
    stage count if measured (else the nearest), highest Fmax among those; None if none."""
    cands = measured(rows, ref["unit"], ref["format"], ref["target"])
    if not cands:
        return None
    return min(cands, key=lambda r: (abs(int(r["stages"]) - ref["stages"]),
                                     int(r["stages"]), -float(r["fmax_mhz"])))


def evaluate_target(t, rows):
    """(row, status) for a target row: the best measured row within the stage bound (the
    highest-Fmax row that meets the target, else the highest-Fmax row) and "met",
    "missed (Fmax)", "missed (cells)", "missed (Fmax, cells)" or "not measured"."""
    cands = [r for r in measured(rows, t["unit"], t["format"], t["target"])
             if t["max_stages"] is None or int(r["stages"]) <= t["max_stages"]]
    if not cands:
        return None, "not measured"

    def misses(r):
        m = []
        if t["min_fmax_mhz"] is not None and float(r["fmax_mhz"]) < t["min_fmax_mhz"]:
            m.append("Fmax")
        if t["max_cells"] is not None and int(r["cells"]) > t["max_cells"]:
            m.append("cells")
        return m

    best = lambda rs: max(rs, key=lambda r: (float(r["fmax_mhz"]), -int(r["cells"])))
    ok = [r for r in cands if not misses(r)]
    if ok:
        return best(ok), "met"
    r = best(cands)
    return r, "missed (" + ", ".join(misses(r)) + ")"


def target_goal(t):
    goal = f'≥ {t["min_fmax_mhz"]:g} MHz' if t["min_fmax_mhz"] is not None else ""
    if t["max_stages"] is not None:
        n = t["max_stages"]
        goal += (" at " if goal else "") + f'≤ {n} stage{"" if n == 1 else "s"}'
    if t["max_cells"] is not None:
        goal += (", " if goal else "") + f'≤ {t["max_cells"]} cells'
    return goal or "—"


def reference_md(refs, rows):
    lines = [
        "## Reference designs (published, same flow)",
        "",
        "Published figures of other designs measured with the same flow (YoWASP yosys 0.70 + "
        "nextpnr 0.11, ECP5-25k, registered inputs and outputs), from "
        "`scripts/fpga/qor_reference.csv`; not rebuilt by `make qor`. Their size is nextpnr's "
        "TRELLIS_COMB count (COMB, flip-flops not included), fp8gen's is yosys cells (LUT4 + "
        "CCU2C + PFUMX + L6MUX21 + flip-flops): the two columns are not the same metric. The "
        "fp8gen row has the same unit, format and target, and the same stage count where "
        "measured (else the nearest).",
        "",
    ]
    head = ["reference design", "format", "stages", "size", "Fmax MHz", "fp8gen row",
            "fp8gen cells", "fp8gen DSP blocks", "fp8gen Fmax MHz", "semantics"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for ref in refs:
        size = f'{ref["size"]} {ref["size_metric"]}'
        if ref["dsp_blocks"]:
            size += f' + {ref["dsp_blocks"]} DSP'
        m = match_reference(ref, rows)
        if m is None:
            ours = ["not measured in this table", "", "", ""]
        else:
            lab = fp8gen_label(m)
            if int(m["stages"]) != ref["stages"]:
                lab += " (nearest stage count)"
            ours = [lab, str(m["cells"]), str(m.get("dsp_blocks", "")),
                    f'{float(m["fmax_mhz"]):.1f}']
        vals = [ref["design"], ref["format"], str(ref["stages"]), size,
                f'{ref["fmax_mhz"]:g}'] + ours + [ref["semantics"]]
        lines.append("| " + " | ".join(md_cell(v) for v in vals) + " |")
    sources = sorted({r["source"] for r in refs if r.get("source")})
    if sources:
        lines += [""] + [f"Source: {s}." if not s.endswith(".") else f"Source: {s}"
                         for s in sources]
    return lines


def targets_md(targets, rows):
    lines = [
        "## Targets",
        "",
        "From `scripts/fpga/qor_targets.csv`: for each target the best measured row within the "
        "stage bound (the highest-Fmax row that meets the target, else the highest-Fmax row). "
        "\"Measured limit\" is that row's worst register-to-register path as nextpnr timed it on "
        "the routed design (median seed): the pipeline stage it lies in (stage 0 runs from the "
        "input registers to the `_q1` registers, stage k from `_qk` to `_q(k+1)`, stage S into "
        "the output registers), its delay split into cell delays (logic) and nets (routing), its "
        "logic levels and carry-chain arcs, its start and end register. nextpnr reports only the "
        "slowest path, so the other stages are known only by the model: the pipeliner's "
        "estimate of that stage and of its longest one, in its own levels (not LUT levels; "
        "see docs/qor.md). \"What would be needed\" is hand-written (qor_targets.csv).",
        "",
    ]
    head = ["core", "unit", "format", "device", "target", "best measured", "stages", "cells",
            "placed LUTs", "Fmax MHz", "status", "measured limit", "what would be needed"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for t in targets:
        r, status = evaluate_target(t, rows)
        if r is None:
            got = ["not measured in this table", "", "", "", ""]
            limit = ""
        else:
            got = [fp8gen_label(r), str(r["stages"]), str(r["cells"]), pnr_cell(r),
                   f'{float(r["fmax_mhz"]):.1f}']
            limit = limit_text(r)
        vals = [t["core"], t["unit"], t["format"], t["target"], target_goal(t)] + got + \
               [status, limit, t["limit"]]
        lines.append("| " + " | ".join(md_cell(v) for v in vals) + " |")
    return lines


def fmax_cell(r):
    """Fmax, with the seed spread when the point was placed and routed with several seeds."""
    f = f'{r["fmax_mhz"]:.1f}'
    try:
        n = int(r.get("seeds") or 1)
        if n > 1:
            return f'{f} (median of {n}: {float(r["fmax_min_mhz"]):.1f}–{float(r["fmax_max_mhz"]):.1f})'
    except (TypeError, ValueError):
        pass
    return f


def write_md(rows, path, refs=(), targets=()):
    head = ["unit", "format", "stages", "target", "DSP", "LUTs", "FFs", "carry", "DSP blocks",
            "cells", "placed LUTs", "Fmax MHz", "worst path (nextpnr)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if r.get("error"):
            vals = [r["unit"], r["format"], str(r["stages"]), r["target"], r["dsp"],
                    md_cell(error_text(r["error"]))] + [""] * 7
        else:
            vals = [r["unit"], r["format"], str(r["stages"]), r["target"], r["dsp"],
                    str(r["luts"]), str(r["ffs"]), str(r["carry"]), str(r["dsp_blocks"]),
                    str(r["cells"]), pnr_cell(r), fmax_cell(r), path_cell(r)]
        lines.append("| " + " | ".join(vals) + " |")
    if refs:
        lines += [""] + reference_md(refs, rows)
    if targets:
        lines += [""] + targets_md(targets, rows)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


PLOT_ORDER = ["int-mul8", "decode", "project", "convert-binary8p3se", "mul", "add", "fma", "mac", "mac-exact", "mac-il4"]


def unit_order(u):
    m = DOT_UNIT.match(u)
    if m:
        return (2, int(m.group(1)), m.group(2) or "")
    return (0, PLOT_ORDER.index(u), "") if u in PLOT_ORDER else (1, 0, u)


def write_png(rows, path, refs=()):
    """Fmax against core cells: colour = unit, marker = target (filled: fp8gen, yosys cells);
    reference designs as hollow labelled markers at their nextpnr COMB count."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
    except ImportError:
        print("qor_sweep: matplotlib not installed (run scripts/setup-fpga.sh); no plot",
              file=sys.stderr)
        return False
    ok = [r for r in rows if not r.get("error") and r.get("cells") not in (None, "")]
    fig, ax = plt.subplots(figsize=(10, 6), dpi=120)
    markers = ["o", "s", "^", "v", "P", "X", "*", "D"]
    targets = sorted({r["target"] for r in ok})
    tmark = {t: markers[i % len(markers)] for i, t in enumerate(targets)}
    units = sorted({r["unit"] for r in ok}, key=unit_order)
    cmap = plt.get_cmap("tab20")  # its 10 dark hues first, then the light ones
    ucol = {u: cmap((2 * i) % 20 + (i // 10) % 2) for i, u in enumerate(units)}
    for u in units:
        for t in targets:
            pts = [r for r in ok if r["unit"] == u and r["target"] == t]
            if pts:
                ax.scatter([int(r["cells"]) for r in pts], [float(r["fmax_mhz"]) for r in pts],
                           marker=tmark[t], color=ucol[u], s=22, alpha=0.85, linewidths=0)
    texts = []
    if refs:
        designs = []
        for ref in refs:
            if ref["design"] not in designs:
                designs.append(ref["design"])
        for d in designs:  # one dotted line from a design's 0-stage point to its pipelined one
            pts = sorted((r["stages"], r["size"], r["fmax_mhz"]) for r in refs
                         if r["design"] == d)
            if len(pts) > 1:
                ax.plot([p[1] for p in pts], [p[2] for p in pts], color="black", lw=0.7,
                        ls=":", zorder=2)
        ax.scatter([r["size"] for r in refs], [r["fmax_mhz"] for r in refs], marker="D", s=55,
                   facecolors="none", edgecolors="black", linewidths=1.3, zorder=3)
        for r in sorted(refs, key=lambda r: -r["fmax_mhz"]):
            texts.append(ax.annotate(r.get("label") or r["design"], (r["size"], r["fmax_mhz"]),
                                     fontsize=7, xytext=(6, -3), textcoords="offset points",
                                     zorder=4, bbox=dict(boxstyle="square,pad=0.1", fc="white",
                                                         ec="none", alpha=0.6),
                                     arrowprops=dict(arrowstyle="-", lw=0.5, color="black",
                                                     shrinkA=0, shrinkB=5)))
    cells = [int(r["cells"]) for r in ok] + [r["size"] for r in refs]
    if cells and min(cells) > 0 and max(cells) > 100 * min(cells):
        ax.set_xscale("log")  # 1-cell int-mul8 to ~10^4-cell dot32 in one plot
    ax.set_xlabel("size: fp8gen core cells (yosys); references: nextpnr COMB")
    fmax = [float(r["fmax_mhz"]) for r in ok] + [r["fmax_mhz"] for r in refs]
    if fmax and min(fmax) > 0 and max(fmax) > 10 * min(fmax):
        # 8 MHz iCE40 dot cores to 300 MHz decoders: a log axis spreads the crowded low end
        from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter
        ax.set_yscale("log")
        ticks = [t for t in (5, 10, 20, 30, 50, 100, 150, 200, 300, 500)
                 if min(fmax) / 1.5 <= t <= max(fmax) * 1.5]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("Fmax (MHz, nextpnr)")
    ax.set_title("fp8gen QoR sweep (filled: fp8gen; hollow ◇: published references, "
                 "size = nextpnr COMB)", fontsize=10)
    ax.grid(True, alpha=0.3)
    handles = [Line2D([], [], ls="", marker="o", color=ucol[u], label=u) for u in units]
    handles += [Line2D([], [], ls="", marker=tmark[t], color="black", label=t) for t in targets]
    if refs:
        handles.append(Line2D([], [], ls="", marker="D", markerfacecolor="none",
                              markeredgecolor="black", color="black",
                              label="published reference\n(nextpnr COMB)"))
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0)
    fig.tight_layout()
    if texts:
        spread_labels(fig, texts)
    fig.savefig(path)
    return True


def spread_labels(fig, texts):
    """Moves annotation labels down (in the order given) until none overlaps another; a
    moved label keeps a thin line to its point."""
    from matplotlib.text import Text
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = lambda t: Text.get_window_extent(t, renderer)  # the text alone, not its line
    placed = []
    for t in texts:
        for _ in range(len(texts)):
            bb = box(t)
            hit = [p for p in placed if bb.overlaps(p)]
            if not hit:
                break
            dx, dy = t.xyann
            t.xyann = (dx, dy - ((bb.y1 - min(p.y0 for p in hit)) * 72.0 / fig.dpi + 1))
        placed.append(box(t))


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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replot", metavar="CSV",
                    help="only rewrite qor.md and the plots from a qor.csv (an earlier sweep's, "
                         "or the one `fp8gen merge` writes from a Slurm QoR sweep), next to "
                         "that CSV (--out does not apply)")
    ap.add_argument("--add", nargs="+", default=[], metavar="CSV",
                    help="with --replot: merge these qor.csv files into the --replot CSV first "
                         "(same key replaces, new rows are appended) and rewrite it")
    ap.add_argument("--units", nargs="+", default=["int-mul8"],
                    help="fp8gen units (decode project mul add fma mac), mac-exact, mac-ilL, "
                         "mul-ftz-noflags, int-mul8, dotN / dotN-S (e.g. dot8, dot8-e8m0) or "
                         "dot (= " + " ".join(DOT_UNITS) + ")")
    ap.add_argument("--formats", nargs="+", default=["e4m3"],
                    help="formats for fp8gen units (ignored by int-mul8)")
    ap.add_argument("--stages", nargs="+", type=int, default=[0])
    ap.add_argument("--targets", nargs="+",
                    default=["ice40-up5k", "ecp5-25k", "ecp5-85k", "gowin-gw1nr9"])
    ap.add_argument("--dsp", choices=["on", "off", "both"], default="on")
    ap.add_argument("--freq", type=float, default=100.0, help="target clock, MHz")
    ap.add_argument("--seeds", type=int, default=1,
                    help="place-and-route seeds per point (fmax_mhz = their median; the "
                         "targets are stated as the median of 3)")
    ap.add_argument("--fp8gen", default=None, help="command that runs fp8gen")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per point")
    ap.add_argument("--out", default="build/qor")
    ap.add_argument("--merge", action="store_true",
                    help="merge the points into OUT/qor.csv (keeping its other rows) instead "
                         "of overwriting it")
    ap.add_argument("--reference", default=DEFAULT_REFERENCE, metavar="CSV",
                    help="published reference designs for qor.md and qor.png (default: "
                         "scripts/fpga/qor_reference.csv; '' for none); never copied into "
                         "qor.csv")
    ap.add_argument("--qor-targets", default=DEFAULT_TARGETS, metavar="CSV",
                    help="Fmax / cell / stage targets for qor.md's Targets section (default: "
                         "scripts/fpga/qor_targets.csv; '' for none)")
    a = ap.parse_args(argv)
    if a.add and not a.replot:
        ap.error("--add goes with --replot CSV")
    refs = read_reference(a.reference)
    goals = read_targets(a.qor_targets)
    if a.replot:
        rows = read_csv(a.replot)
        if a.add:
            for extra in a.add:
                rows = merge_rows(rows, read_csv(extra))
            write_csv(rows, a.replot)
        rows = typed(rows)
        out = os.path.dirname(a.replot) or "."
        write_md(rows, os.path.join(out, "qor.md"), refs, goals)
        plotted = write_png(rows, os.path.join(out, "qor.png"), refs)
        write_stages_png(rows, os.path.join(out, "qor_stages.png"))
        print(f"wrote {out}/qor.md" + (", qor.png, qor_stages.png" if plotted else ""))
        return 1 if any(r.get("error") for r in rows) else 0
    fp8gen = a.fp8gen or default_fp8gen()
    dsps = {"on": [True], "off": [False], "both": [True, False]}[a.dsp]
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for unit in expand_units(a.units):
        fmts = ["-"] if unit in FORMATLESS_UNITS else a.formats
        stages, skipped = unit_stages(unit, a.stages)
        if skipped:
            print(f"{unit}: stages {' '.join(map(str, skipped))} skipped (it has "
                  f"{', '.join(map(str, UNIT_STAGES[unit]))} only)", flush=True)
        for fmt in fmts:
            for st in stages:
                for tgt in a.targets:
                    for dsp in dsps:
                        r = run_point(fp8gen, unit, fmt, st, tgt, dsp, a.freq, a.timeout, a.seeds)
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
    write_md(rows, os.path.join(a.out, "qor.md"), refs, goals)
    plotted = write_png(rows, os.path.join(a.out, "qor.png"), refs)
    write_stages_png(rows, os.path.join(a.out, "qor_stages.png"))
    print(f"wrote {a.out}/qor.csv, qor.md" + (", qor.png, qor_stages.png" if plotted else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
