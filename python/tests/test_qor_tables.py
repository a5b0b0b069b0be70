"""qor.md's reference and target sections, and the int-mul8 stage filter, of
scripts/fpga/qor_sweep.py, on small synthetic CSVs (no yosys / nextpnr run).

Independent of conftest.py's fixtures: the script is loaded from its path with importlib and
its sweep is driven by a stand-in `fp8gen` (a Python script that prints synth JSON)."""

import csv
import importlib.util
import itertools
import os
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "scripts", "fpga", "qor_sweep.py")


def _load():
    spec = importlib.util.spec_from_file_location("qor_sweep_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


qor = _load()

CSV_COLUMNS = ["unit", "format", "stages", "target", "dsp", "luts", "ffs", "carry",
               "dsp_blocks", "cells", "fmax_mhz", "target_mhz", "timing_met", "seconds",
               "error"]


def write(path, columns, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in columns})
    return str(path)


def point(unit, fmt, stages, cells, fmax, target="ecp5-25k", error=""):
    if error:
        return dict(unit=unit, format=fmt, stages=stages, target=target, dsp="on", error=error)
    return dict(unit=unit, format=fmt, stages=stages, target=target, dsp="on", luts=cells,
                ffs=0, carry=0, dsp_blocks=0, cells=cells, fmax_mhz=fmax, target_mhz=100.0,
                timing_met=fmax >= 100, seconds=1.0)


def ref(design, unit, fmt, stages, size, fmax, dsp=0):
    return dict(design=design, label=design + f" {stages}st", unit=unit, format=fmt,
                stages=stages, target="ecp5-25k", size=size, size_metric="COMB",
                dsp_blocks=dsp, fmax_mhz=fmax, semantics="synthetic", source="test data")


def goal(core, unit, max_stages, min_fmax, max_cells, fmt="e4m3"):
    return dict(core=core, unit=unit, format=fmt, target="ecp5-25k",
                max_stages="" if max_stages is None else max_stages,
                min_fmax_mhz=min_fmax, max_cells="" if max_cells is None else max_cells,
                limit=f"limit of {core}")


def md_table(md, heading):
    """The rows (dicts by column header) of the first table after `## heading`."""
    lines = md.split("## " + heading + "\n", 1)[1].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    table = list(itertools.takewhile(lambda ln: ln.startswith("|"), lines[start:]))
    cells = lambda ln: [c.strip() for c in ln.strip().strip("|").split("|")]
    head = cells(table[0])
    assert len(set(head)) == len(head), head
    return [dict(zip(head, cells(ln))) for ln in table[2:]]


ROWS = [
    point("mul", "e4m3", 0, 220, 81.0),
    point("mul", "e4m3", 1, 234, 101.7),
    point("mul", "e4m3", 2, 243, 147.6),
    point("mul", "e4m3", 3, 269, 250.0),          # fast, but beyond a 2-stage bound
    point("mul", "e4m3", 1, 190, 180.0, target="ice40-up5k"),  # not the device compared
    point("project", "e4m3", 2, 160, 210.0),      # meets >= 200 MHz, <= 2 stages
    point("fma", "e4m3", 3, 1362, 68.5),          # Fmax too low
    point("mac-exact", "e4m3", 3, 1583, 160.0),   # fast enough, too big for a cell bound
    point("dot8", "e4m3", 3, 2754, 71.5),
    point("dot8", "e4m3", 0, 0, 0, error="error: invalid request: synthetic"),
]


@pytest.fixture
def replot(tmp_path):
    """Writes the synthetic sweep, references and targets; runs --replot; returns the md."""
    def run(rows=ROWS, refs=(), goals=()):
        csv_path = write(tmp_path / "qor.csv", CSV_COLUMNS, rows)
        with open(csv_path) as f:
            before = f.read()
        rp = write(tmp_path / "ref.csv", qor.REFERENCE_COLUMNS, refs)
        tp = write(tmp_path / "targets.csv", qor.TARGET_COLUMNS, goals)
        rc = qor.main(["--replot", csv_path, "--reference", rp, "--qor-targets", tp])
        assert rc == (1 if any(r.get("error") for r in rows) else 0)
        with open(csv_path) as f:
            assert f.read() == before, "--replot must not write reference rows into qor.csv"
        assert (tmp_path / "qor.png").stat().st_size > 0
        return (tmp_path / "qor.md").read_text()
    return run


def test_reference_rows_beside_matched_fp8gen_row(replot):
    md = replot(refs=[ref("FloPoCo FPMult", "mul", "e4m3", 1, 80, 154),
                      ref("Far design", "mul", "e4m3", 5, 300, 99),
                      ref("ExSdotp", "dot4", "e4m3", 0, 2793, 15, dsp=2)])
    assert "## Reference designs (published, same flow)" in md
    head, main = md.split("## Reference designs", 1)[0], md
    assert "FloPoCo" not in head, "reference rows must stay out of the main table"
    rows = md_table(main, "Reference designs (published, same flow)")
    assert len(rows) == 3
    flo = rows[0]
    assert flo["reference design"] == "FloPoCo FPMult"
    assert flo["stages"] == "1" and flo["size"] == "80 COMB" and flo["Fmax MHz"] == "154"
    # the same unit, format, target (ecp5-25k, not the iCE40 1-stage row) and stage count
    assert flo["fp8gen row"] == "mul e4m3 s1"
    assert (flo["fp8gen cells"], flo["fp8gen Fmax MHz"]) == ("234", "101.7")
    far = rows[1]
    assert far["fp8gen row"] == "mul e4m3 s3 (nearest stage count)"
    assert far["fp8gen cells"] == "269"
    ex = rows[2]
    assert ex["size"] == "2793 COMB + 2 DSP"
    assert ex["fp8gen row"] == "not measured in this table" and ex["fp8gen cells"] == ""


def test_reference_fmax_columns(replot):
    md = replot(refs=[ref("FloPoCo FPMult", "mul", "e4m3", 2, 80, 154)])
    line = next(ln for ln in md.splitlines() if ln.startswith("| FloPoCo FPMult"))
    vals = [c.strip() for c in line.strip("|").split("|")]
    # reference Fmax, then the fp8gen row's cells, DSP blocks and Fmax
    assert vals[4] == "154" and vals[5] == "mul e4m3 s2"
    assert vals[6:9] == ["243", "0", "147.6"]


def test_targets_status(replot):
    md = replot(goals=[
        goal("mul fast", "mul", 2, 200, 110),         # best <= 2 stages: 147.6 MHz, 243 cells
        goal("mul Fmax only", "mul", 2, 140, None),    # 147.6 >= 140
        goal("mul cells", "mul", 2, 100, 200),         # 101.7 / 147.6 pass Fmax, all > 200
        goal("project", "project", 2, 200, None),
        goal("fma", "fma", 3, 100, 1500),
        goal("mac exact", "mac-exact", None, 150, 1500),
        goal("mul ftz", "mul-ftz-noflags", 1, 154, 80),
        goal("dot8 too few stages", "dot8", 1, 50, None),  # only s3 measured (s0: error)
        goal("mul any depth", "mul", None, 200, None),      # s3 at 250 MHz
    ])
    rows = {r["core"]: r for r in md_table(md, "Targets")}
    assert rows["mul fast"]["status"] == "missed (Fmax, cells)"
    assert rows["mul fast"]["best measured"] == "mul e4m3 s2"
    assert rows["mul fast"]["target"] == "≥ 200 MHz at ≤ 2 stages, ≤ 110 cells"
    assert rows["mul Fmax only"]["status"] == "met"
    assert rows["mul Fmax only"]["Fmax MHz"] == "147.6"
    assert rows["mul cells"]["status"] == "missed (cells)"
    assert rows["project"]["status"] == "met"
    assert (rows["project"]["stages"], rows["project"]["cells"]) == ("2", "160")
    assert rows["fma"]["status"] == "missed (Fmax)"
    assert rows["fma"]["Fmax MHz"] == "68.5"
    assert rows["mac exact"]["status"] == "missed (cells)"
    assert rows["mul ftz"]["status"] == "not measured"
    assert rows["mul ftz"]["best measured"] == "not measured in this table"
    assert rows["mul ftz"]["cells"] == "" and rows["mul ftz"]["Fmax MHz"] == ""
    assert rows["dot8 too few stages"]["status"] == "not measured"
    assert rows["mul any depth"]["status"] == "met"
    assert rows["mul any depth"]["stages"] == "3"
    assert rows["fma"]["what would be needed"] == "limit of fma"
    # rows measured before the critical-path columns say so instead of a limit
    assert rows["fma"]["measured limit"].startswith("worst path not recorded")


def test_evaluate_target_prefers_a_meeting_row():
    rows = qor.typed([dict(r) for r in ROWS])
    t = dict(unit="mul", format="e4m3", target="ecp5-25k", max_stages=2, min_fmax_mhz=100.0,
             max_cells=240)
    r, status = qor.evaluate_target(t, rows)
    # s2 (147.6 MHz) has 243 cells; s1 (101.7 MHz, 234 cells) meets both bounds
    assert status == "met" and r["stages"] == 1


def test_error_cells_have_one_prefix(tmp_path):
    rows = qor.typed([dict(r) for r in ROWS] + [
        point("dot32", "e4m3", 0, 0, 0, error="timeout: no result after 600 s")])
    md = tmp_path / "qor.md"
    qor.write_md(rows, md)
    text = md.read_text()
    assert "error: error:" not in text
    assert "| error: invalid request: synthetic |" in text
    assert "| error: timeout: no result after 600 s |" in text
    assert "## Reference designs" not in text and "## Targets" not in text


FAKE_FP8GEN = textwrap.dedent("""\
    import json, sys
    log, args = sys.argv[1], sys.argv[2:]
    with open(log, "a") as f:
        f.write(" ".join(args) + "\\n")
    stages = int(args[args.index("--stages") + 1])
    if stages > 2:
        sys.exit("error: invalid request: integer multiplier: %d stages requested" % stages)
    print(json.dumps(dict(luts=0, ffs=8 * stages, carry=0, dsp=1, cells=1 + 8 * stages,
                          fmax_mhz=140.0 + 5 * stages, target_mhz=100.0, timing_met=True)))
""")


def test_int_mul8_unsupported_stages_skipped(tmp_path, capsys):
    fake = tmp_path / "fake_fp8gen.py"
    fake.write_text(FAKE_FP8GEN)
    log = tmp_path / "calls.log"
    out = tmp_path / "out"
    rp = write(tmp_path / "ref.csv", qor.REFERENCE_COLUMNS,
               [ref("FloPoCo FPMult", "mul", "e4m3", 1, 80, 154)])
    tp = write(tmp_path / "targets.csv", qor.TARGET_COLUMNS,
               [goal("int mul", "int-mul8", 2, 100, None, fmt="-")])
    rc = qor.main(["--units", "int-mul8", "--stages", "1", "2", "3", "--targets", "ecp5-25k",
                   "--fp8gen", f"{sys.executable} {fake} {log}", "--out", str(out),
                   "--reference", rp, "--qor-targets", tp])
    assert rc == 0
    calls = log.read_text().splitlines()
    assert len(calls) == 2 and not any("--stages 3" in c for c in calls)
    with open(out / "qor.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["unit"], r["stages"], r["error"]) for r in rows] == \
        [("int-mul8", "1", ""), ("int-mul8", "2", "")]
    printed = capsys.readouterr().out
    assert "int-mul8: stages 3 skipped" in printed
    md = (out / "qor.md").read_text()
    assert "error" not in md
    assert "FloPoCo" in md and "FloPoCo" not in (out / "qor.csv").read_text()
    t = {r["core"]: r for r in md_table(md, "Targets")}
    assert t["int mul"]["status"] == "met" and t["int mul"]["stages"] == "2"


def test_unit_stages():
    assert qor.unit_stages("int-mul8", [0, 1, 2, 3]) == ([0, 1, 2], [3])
    assert qor.unit_stages("mul", [0, 1, 2, 3]) == ([0, 1, 2, 3], [])


def test_quantize_unit_args():
    assert qor.unit_args("quantize32") == [
        "--unit", "quantize", "--n", "32", "--scale-format", "e8m0", "--scale-policy", "floor",
        "--saturation", "satfinite"]
    assert qor.unit_args("quantize") == ["--unit", "quantize"]


def test_failure_text_names_the_nextpnr_error():
    err = ("Error: nextpnr-ice40 failed (exit status: 125); full log: /tmp/x/nextpnr.log\n"
           "Info: Placed 0 cells based on constraints.\n"
           "ERROR: Unable to place cell 'dut.a_SB_LUT4_O_LC', no BELs remaining to implement "
           "cell type 'ICESTORM_LC'\n1 warning, 1 error\n")
    assert qor.failure_text(err, 1) == ("nextpnr ERROR: Unable to place a cell, no BELs "
                                        "remaining to implement cell type 'ICESTORM_LC'")
    assert qor.failure_text("error: bad --format\n", 2) == "error: bad --format"
    assert qor.failure_text("", 3) == "exit 3"


def test_committed_data_files_parse():
    refs = qor.read_reference(qor.DEFAULT_REFERENCE)
    goals = qor.read_targets(qor.DEFAULT_TARGETS)
    assert refs and goals
    assert all(r["target"] == "ecp5-25k" and r["source"] for r in refs)
    assert not any(r["unit"] == "int-mul8" for r in refs), \
        "the integer multiplier is measured by the sweep, not a reference row"
    assert {g["unit"] for g in goals} >= {"mul", "mul-ftz-noflags", "project", "fma",
                                         "mac-exact", "dot8"}


FAKE_FP8GEN_PNR = textwrap.dedent("""\
    import json, sys
    args = sys.argv[1:]
    stages = int(args[args.index("--stages") + 1])
    print(json.dumps(dict(luts=100, ffs=8 * stages, carry=4, dsp=0, cells=120 + 8 * stages,
                          fmax_mhz=150.0 + 5 * stages, target_mhz=100.0, timing_met=True,
                          pnr_utilization={"TRELLIS_COMB": [131 + stages, 24288],
                                           "TRELLIS_FF": [40, 24288]})))
""")


def test_placed_luts_column_beside_cells_old_rows_dash(tmp_path):
    fake = tmp_path / "fake_fp8gen.py"
    fake.write_text(FAKE_FP8GEN_PNR)
    out = tmp_path / "out"
    out.mkdir()
    # an older table without the column: its row keeps an empty cell, shown as "-"
    write(out / "qor.csv", CSV_COLUMNS, [point("fma", "e4m3", 0, 1086, 25.4)])
    tp = write(tmp_path / "targets.csv", qor.TARGET_COLUMNS,
               [goal("mul", "mul", 2, 100, None), goal("fma", "fma", 0, 20, None)])
    rc = qor.main(["--units", "mul", "--stages", "1", "2", "--targets", "ecp5-25k",
                   "--fp8gen", f"{sys.executable} {fake}", "--out", str(out), "--merge",
                   "--reference", "", "--qor-targets", tp])
    assert rc == 0
    with open(out / "qor.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["unit"], r["stages"], r["pnr_luts"]) for r in rows] == \
        [("fma", "0", ""), ("mul", "1", "132"), ("mul", "2", "133")]
    md = (out / "qor.md").read_text()
    t = {r["core"]: r for r in md_table(md, "Targets")}
    assert (t["mul"]["cells"], t["mul"]["placed LUTs"]) == ("136", "133")
    assert t["fma"]["placed LUTs"] == "-"
    lines = [l for l in md.splitlines() if l.startswith("| fma | e4m3 | 0 ")]
    assert lines and "| 1086 | - | 25.4 |" in lines[0]
    assert qor.pnr_luts({"ICESTORM_LC": [77, 5280]}) == 77 and qor.pnr_luts({}) == ""


FAKE_FP8GEN_PATH = textwrap.dedent("""\
    import json, sys
    args = sys.argv[1:]
    stages = int(args[args.index("--stages") + 1])
    cp = dict(total_ns=9.111, logic_ns=3.951, routing_ns=5.16, levels=5, carry_arcs=28,
              scope="u_round", stage=stages - 1, seed=2, **{"from": "dut.u_round.acc_i",
              "to": "dut.u_round.onrm_t5_c_q%d" % stages})
    print(json.dumps(dict(luts=700, ffs=200, carry=85, dsp=0, cells=1100, fmax_mhz=109.76,
                          target_mhz=100.0, timing_met=True, critical_path=cp,
                          stage_model=[dict(scope="u_term", levels=[6.4, 6.8], ns=[5.5, 5.8]),
                                       dict(scope="u_round", levels=[11.8, 12.0, 10.2],
                                            ns=[8.4, 8.6, 7.6])],
                          pnr_utilization={"TRELLIS_COMB": [928, 24288]})))
""")


def test_measured_limit_of_a_miss_from_the_critical_path(tmp_path):
    fake = tmp_path / "fake_fp8gen.py"
    fake.write_text(FAKE_FP8GEN_PATH)
    out = tmp_path / "out"
    tp = write(tmp_path / "targets.csv", qor.TARGET_COLUMNS,
               [goal("mac exact", "mac-exact", None, 150, None)])
    rc = qor.main(["--units", "mac-exact", "--stages", "2", "--targets", "ecp5-25k",
                   "--fp8gen", f"{sys.executable} {fake}", "--out", str(out),
                   "--reference", "", "--qor-targets", tp])
    assert rc == 0
    with open(out / "qor.csv") as f:
        row = next(csv.DictReader(f))
    assert (row["crit_ns"], row["crit_logic_ns"], row["crit_route_ns"]) == \
        ("9.111", "3.951", "5.16")
    assert (row["crit_levels"], row["crit_carry"], row["crit_stage"]) == ("5", "28", "u_round:1")
    assert (row["crit_from"], row["crit_to"]) == ("dut.u_round.acc_i", "dut.u_round.onrm_t5_c_q2")
    assert row["model_levels"] == "u_term=6.4|6.8 u_round=11.8|12.0|10.2"
    md = (out / "qor.md").read_text()
    t = {r["core"]: r for r in md_table(md, "Targets")}["mac exact"]
    assert t["status"] == "missed (Fmax)"
    assert t["measured limit"] == (
        "measured worst path: stage 1 of instance u_round, 9.11 ns = 3.95 logic + 5.16 "
        "routing (57 %), 5 LUT levels + 28 carry arcs, dut.u_round.acc_i → "
        "dut.u_round.onrm_t5_c_q2; model: stage 1 12.0 levels, longest stage 1 12.0")
    assert t["what would be needed"] == "limit of mac exact"
    line = next(l for l in md.splitlines() if l.startswith("| mac-exact | e4m3 | 2 "))
    assert line.rstrip().endswith("| u_round stage 1: 9.11 ns (57 % routing), 5 levels + 28 carry |")
    # the model columns of a row read back; a top-module stage prints "of 0–S"
    r = dict(row, crit_stage="2", stages="3", model_levels="7.4|7.1|6.3|5.0")
    assert qor.model_of(r) == {"": [7.4, 7.1, 6.3, 5.0]}
    assert qor.limit_text(r).startswith("measured worst path: stage 2 of 0–3, ")
    assert qor.limit_text(r).endswith("; model: stage 2 6.3 levels, longest stage 0 7.4")
    assert "outside the pipeline stages" in qor.limit_text(dict(row, crit_stage=""))
    ice = dict(r, stage_ns="4.73 ?.other=21.99")
    assert qor.stage_ns_of(ice) == {"": [4.73], "?.other": 21.99}
    assert ("; registers of no known stage (iCE40 cells named after their LUT) up to 21.99 ns"
            in qor.limit_text(ice))


def test_replot_reads_the_committed_table(tmp_path):
    """--replot works on docs/qor/qor.csv whatever columns it has (rows from before the
    critical-path columns say so in the Targets table) and leaves the CSV as it was."""
    import shutil
    src = os.path.join(REPO, "docs", "qor", "qor.csv")
    dst = tmp_path / "qor.csv"
    shutil.copy(src, dst)
    before = dst.read_text()
    qor.main(["--replot", str(dst)])
    assert dst.read_text() == before
    t = md_table((tmp_path / "qor.md").read_text(), "Targets")
    assert t and all(r["measured limit"] for r in t if r["best measured"] !=
                     "not measured in this table")
