//! `dot` and `mac` proofs (skipped with a message when yosys is absent).
//!
//! * dot: proven in lemmas A1 (lane terms), A2 (the sum of free terms) and B (the tail with
//!   the sum free); a core with one lane term off by one is refuted in A1 (the counterexample
//!   replayed in Verilator), one with its tie rule broken in B.
//! * mac: the exact accumulator proven by 1-induction against the independent reference;
//!   mutants with a broken guard-overflow rule are refuted with a trace from reset: one
//!   whose overflow is never raised only after 16 cycles (so the proof is not a bounded
//!   check), one whose overflow is not sticky; the binary32 accumulator's loop by induction
//!   around its FMA module (lemma M; lemma F, the FMA module against the FMA reference,
//!   takes minutes: ignored test).
//! * dot with a binary32 addend: lemma B split by the core's alignment (cubes on
//!   `{al_z_big, al_amt}`); a core whose alignment drops the sticky bit is refuted in lemma B;
//!   with block scales (no subnormal-addend pass-through) lemma B in two, cut at the rounding
//!   input: B1 (the rounding) and B2 (the alignment); the dropped sticky bit refuted in B2.
//! * pipelined mac (lemma P, against its 0-stage twin): binary32, interleaved and exact
//!   accumulators proven; a wrong pipeline register (the sum's sign held at 0) refuted;
//!   interleaved accumulators (lemma M against L reference accumulators) proven, two of them
//!   swapped refuted.

use formal::{prove_request, ProveOptions, Verdict};
use golden::{Format, Rounding, Saturation};
use rtl::manifest::{Formats, Unit};
use rtl::{GenOptions, GenRequest, RoundingSel, SaturationSel};
use std::path::PathBuf;

fn yosys() -> bool {
    match formal::tools::find_yosys() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

fn p(n: &str) -> Format {
    Format::parse(n).expect("format")
}

fn req(unit: Unit, f: Format, r: Format) -> GenRequest {
    GenRequest {
        unit,
        formats: Formats {
            x: f,
            y: Some(f),
            r,
            scale: None,
            z: None,
        },
        rounding: RoundingSel::Fixed(Rounding::Rne),
        saturation: SaturationSel::Fixed(Saturation::SatFinite),
        sr_bits: 0,
        stages: 0,
        options: GenOptions::default(),
    }
}

fn dot(f: Format, n: u32, scale: bool, r: Format) -> GenRequest {
    let mut q = req(Unit::Dot, f, r);
    q.formats.scale = scale.then_some(Format::E8M0);
    q.options.dot = iface::DotShape { n, addend: false };
    q
}

fn exact_mac(f: Format, guard: u32) -> GenRequest {
    let mut q = req(Unit::Mac, f, Format::BINARY32);
    q.saturation = SaturationSel::Fixed(Saturation::SatNone);
    q.options.acc_guard = guard;
    q
}

fn opts(tag: &str) -> ProveOptions {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("formal-prove-dotmac");
    let _ = std::fs::remove_dir_all(dir.join(tag));
    ProveOptions {
        timeout_secs: 600,
        work_dir: Some(dir.join(tag)),
        vcd: dir.join(format!("{tag}.vcd")),
        ..ProveOptions::default()
    }
}

/// `v` with the first occurrence of `from` replaced (which must exist).
fn replace(v: &str, from: &str, to: &str) -> String {
    assert!(v.contains(from), "mutation site `{from}` not found");
    v.replacen(from, to, 1)
}

#[test]
fn dot_is_proven_in_three_lemmas() {
    if !yosys() {
        return;
    }
    for r in [
        dot(Format::E4M3, 2, false, Format::E4M3),
        dot(p("e2m1"), 4, true, Format::E4M3),
    ] {
        let reports = prove_request(&r, &opts(&format!("dot{}", r.options.dot.n))).expect("prove");
        assert_eq!(reports.len(), 3);
        for (rep, lemma) in reports.iter().zip(["Lemma A1", "Lemma A2", "Lemma B"]) {
            eprintln!("{}: {:?} in {:.1} s", lemma, rep.verdict, rep.seconds);
            assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
            assert!(rep.statement.starts_with(lemma), "{}", rep.statement);
        }
        assert!(reports[2].statement.contains("on every input"));
    }
}

#[test]
fn dot_mutants_are_refuted_in_their_lemma() {
    if !yosys() {
        return;
    }
    let r = dot(Format::E4M3, 2, false, Format::E4M3);
    let mut core = rtl::generate(&r).expect("generate");
    // Lane 1's signed product off by one unit in the last place.
    core.verilog = replace(
        &core.verilog,
        "l1_sprod_live = l1_sprod_pp1_0",
        "l1_sprod_live = 9'd1 + l1_sprod_pp1_0",
    );
    let reps = formal::compose::prove_dot(&r, &core, &opts("dot_lane_mutant")).expect("prove");
    assert_eq!(reps.len(), 1, "stops at lemma A1");
    assert_eq!(reps[0].verdict, Verdict::Refuted, "{:#?}", reps[0]);
    // The counterexample's inputs are replayed in Verilator (the sums differ; the rounded
    // outputs may agree, e.g. beside a NaN lane).
    let c = reps[0].counterexample.as_ref().expect("counterexample");
    assert!(!c.inputs.is_empty() && c.vcd.is_some(), "{c:#?}");

    let mut core = rtl::generate(&r).expect("generate");
    core.verilog = replace(&core.verilog, "| round_mag_t[0]", "| ~round_mag_t[0]");
    let reps = formal::compose::prove_dot(&r, &core, &opts("dot_tie_mutant")).expect("prove");
    assert_eq!(reps.len(), 3);
    assert_eq!(reps[2].verdict, Verdict::Refuted, "{:#?}", reps[2]);
}

/// The core with the sticky bit of the aligned smaller operand dropped (`al_sticky` = 0).
fn drop_alignment_sticky(core: &mut rtl::GeneratedCore) {
    let line = core
        .verilog
        .lines()
        .find(|l| l.trim_start().starts_with("wire al_sticky = "))
        .expect("al_sticky")
        .trim()
        .to_string();
    core.verilog = replace(&core.verilog, &line, "wire al_sticky = 1'b0;");
}

fn with_addend(mut r: GenRequest) -> GenRequest {
    r.options.dot.addend = true;
    r.formats.r = Format::BINARY32;
    r.saturation = SaturationSel::Fixed(Saturation::SatNone);
    r
}

#[test]
#[ignore = "about 70 s on the 2-core machine at load ~5 (lemma B 69 s: 16 cubes on 2 jobs; 2026-11-26)"]
fn dot_with_an_addend_is_proven_by_alignment_cubes() {
    if !yosys() {
        return;
    }
    let r = with_addend(dot(p("e2m1"), 2, false, Format::BINARY32));
    let reports = prove_request(&r, &opts("dot2_z")).expect("prove");
    assert_eq!(reports.len(), 3);
    for rep in &reports {
        eprintln!("{:?} in {:.1} s", rep.verdict, rep.seconds);
        assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
    }
    let b = &reports[2].statement;
    assert!(b.contains("16 CaDiCaL cubes on align_cube_i[5:2]"), "{b}");
    assert!(b.contains("{al_z_big, al_amt}"), "{b}");
}

/// About 15 s (2026-11-26, release build, load ~5 on the 2 cores): lemma B refuted with a
/// free sum in 5 s, then confirmed by the flat miter.
#[test]
fn dot_with_an_addend_and_a_dropped_sticky_is_refuted_by_lemma_b() {
    if !yosys() {
        return;
    }
    let r = with_addend(dot(p("e2m1"), 2, false, Format::BINARY32));
    // The sticky bit of the aligned smaller operand dropped.
    let mut core = rtl::generate(&r).expect("generate");
    drop_alignment_sticky(&mut core);
    let reps = formal::compose::prove_dot(&r, &core, &opts("dot2_z_sticky")).expect("prove");
    for rep in &reps {
        eprintln!("{:?} in {:.1} s", rep.verdict, rep.seconds);
    }
    assert_eq!(reps.len(), 3);
    assert!(reps[2].statement.starts_with("Lemma B"));
    assert_eq!(reps[2].verdict, Verdict::Refuted, "{:#?}", reps[2]);
    let d = reps[2].detail.as_deref().unwrap_or_default();
    assert!(d.contains("confirmed on the uncut cores"), "{d}");
}

/// About 35 s (2026-11-26, release build, load ~5 on the 2 cores): A1, A2 1 s each, B1 15 s,
/// B2 refuted with a free sum in 3 s, confirmed by the flat miter in 9 s.
#[test]
fn dot_e8m0_addend_with_a_dropped_sticky_is_refuted_by_lemma_b2() {
    if !yosys() {
        return;
    }
    let r = with_addend(dot(p("e2m1"), 2, true, Format::BINARY32));
    let mut core = rtl::generate(&r).expect("generate");
    drop_alignment_sticky(&mut core);
    let reps = formal::compose::prove_dot(&r, &core, &opts("dot2_e8m0_z_sticky")).expect("prove");
    for rep in &reps {
        eprintln!(
            "{:?} in {:.1} s: {:?}",
            rep.verdict, rep.seconds, rep.detail
        );
    }
    assert_eq!(reps.len(), 4);
    // the rounding lemma B1 does not see the aligned sum; the alignment lemma B2 does
    assert_eq!(reps[2].verdict, Verdict::Proven, "{:#?}", reps[2]);
    assert!(
        reps[3].statement.starts_with("Lemma B2"),
        "{}",
        reps[3].statement
    );
    assert_eq!(reps[3].verdict, Verdict::Refuted, "{:#?}", reps[3]);
    let d = reps[3].detail.as_deref().unwrap_or_default();
    assert!(d.contains("confirmed on the uncut cores"), "{d}");
}

/// About 60 s (2026-11-26, release build, load ~5 on the 2 cores): A1, A2 1 s each, B1 15 s,
/// B2 42 s (16 alignment cubes on 2 jobs).
#[test]
fn dot_e2m1_2_e8m0_addend_is_proven_in_lemmas_b1_and_b2() {
    if !yosys() {
        return;
    }
    let r = with_addend(dot(p("e2m1"), 2, true, Format::BINARY32));
    let reports = prove_request(&r, &opts("dot2_e8m0_z")).expect("prove");
    for rep in &reports {
        eprintln!(
            "{:?} in {:.1} s: {:?}",
            rep.verdict, rep.seconds, rep.detail
        );
    }
    assert_eq!(reports.len(), 4);
    for (rep, lemma) in reports
        .iter()
        .zip(["Lemma A1", "Lemma A2", "Lemma B1", "Lemma B2"])
    {
        assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
        assert!(rep.statement.starts_with(lemma), "{}", rep.statement);
    }
    assert!(reports[3].statement.contains("on every input"));
}

#[test]
#[ignore = "about 140 s on the 2-core machine at load ~5 (2026-11-26: A1 6.6, A2 1.2, B1 14.1, B2 114.2 s, 16 cubes each on 2 jobs)"]
fn dot_e4m3_8_e8m0_addend_is_proven() {
    if !yosys() {
        return;
    }
    let r = with_addend(dot(Format::E4M3, 8, true, Format::BINARY32));
    let o = ProveOptions {
        timeout_secs: 3000,
        ..opts("dot8_e8m0_z")
    };
    let reports = prove_request(&r, &o).expect("prove");
    for rep in &reports {
        eprintln!(
            "{:?} in {:.1} s: {}\n{:?}",
            rep.verdict, rep.seconds, rep.statement, rep.detail
        );
    }
    assert_eq!(reports.len(), 4, "lemmas A1, A2, B1, B2");
    for rep in &reports {
        assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
    }
}

#[test]
#[ignore = "about 65 s on the 2-core machine at load ~5 (2026-11-26: A1 1.4, A2 0.9, B1 13.4, B2 48.3 s)"]
fn dot_e2m1_4_e8m0_addend_is_proven() {
    if !yosys() {
        return;
    }
    let r = with_addend(dot(p("e2m1"), 4, true, Format::BINARY32));
    let reports = prove_request(&r, &opts("dot4_e8m0_z")).expect("prove");
    for rep in &reports {
        eprintln!(
            "{:?} in {:.1} s: {}\n{:?}",
            rep.verdict, rep.seconds, rep.statement, rep.detail
        );
    }
    for rep in &reports {
        assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
    }
}

#[test]
fn exact_mac_is_proven_by_induction() {
    if !yosys() {
        return;
    }
    let r = exact_mac(p("e2m1"), 3);
    let reports = prove_request(&r, &opts("mac_exact")).expect("prove");
    assert_eq!(reports.len(), 1);
    let rep = &reports[0];
    eprintln!("{}: {:?} in {:.1} s", rep.gold, rep.verdict, rep.seconds);
    assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
    assert!(rep.statement.contains("1-induction"), "{}", rep.statement);
    assert!(rep.statement.contains("ovf_q = ovf"));
}

/// The mac of `r` with `from` replaced by `to` in its Verilog: refuted by the induction loop
/// with a trace from reset failing in a cycle >= `min_cycle`.
fn refuted_after(r: &GenRequest, from: &str, to: &str, min_cycle: u32, tag: &str) {
    let mut core = rtl::generate(r).expect("generate");
    core.verilog = replace(&core.verilog, from, to);
    let rep = formal::induct::prove_mac_core(r, &core, &opts(tag)).expect("prove");
    eprintln!(
        "{tag}: {:?} in {:.1} s: {:?}",
        rep.verdict, rep.seconds, rep.detail
    );
    assert_eq!(rep.verdict, Verdict::Refuted, "{rep:#?}");
    let c = rep.counterexample.expect("counterexample");
    assert!(!c.trace.is_empty());
    let cycle = c.cycle.expect("failing cycle");
    assert!(cycle >= min_cycle, "fails in cycle {cycle}");
}

#[test]
fn a_mac_that_never_raises_guard_overflow_is_refuted_after_16_cycles() {
    if !yosys() {
        return;
    }
    // e2m1: products up to 36 = 144 units of 2^-2; 12-bit register (3 guard bits): the 15th
    // largest product leaves the range, so no trace shorter than 16 cycles exists.
    let r = exact_mac(p("e2m1"), 3);
    let core = rtl::generate(&r).expect("generate");
    let line = core
        .verilog
        .lines()
        .find(|l| l.trim_start().starts_with("wire a_ovf = "))
        .expect("a_ovf")
        .to_string();
    let rhs = line.split(" = ").nth(1).expect("rhs").trim_end_matches(';');
    refuted_after(&r, rhs, "1'b0", 16, "mac_no_ovf");
}

#[test]
fn a_mac_whose_guard_overflow_is_not_sticky_is_refuted() {
    if !yosys() {
        return;
    }
    let r = exact_mac(p("e2m1"), 1);
    refuted_after(
        &r,
        "(~t_clear & ovf_q) | a_ovf",
        "a_ovf",
        4,
        "mac_ovf_not_sticky",
    );
}

#[test]
fn binary32_mac_loop_is_proven_by_induction() {
    if !yosys() {
        return;
    }
    let r = req(Unit::Mac, p("e2m1"), Format::BINARY32);
    let core = rtl::generate(&r).expect("generate");
    let rep = formal::induct::prove_mac_core(&r, &core, &opts("mac_b32_loop")).expect("prove");
    assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
    // A loop that drops the clear is refuted.
    let mut bad = core.clone();
    bad.verilog = replace(&bad.verilog, "clear_i ? 32'h0 : acc_q", "acc_q");
    let rep = formal::induct::prove_mac_core(&r, &bad, &opts("mac_b32_noclear")).expect("prove");
    assert_eq!(rep.verdict, Verdict::Refuted, "{rep:#?}");
}

#[test]
#[ignore = "about 3-8 minutes (190 CPU s): lemma F (the FMA module, 16 CaDiCaL cubes on its alignment) and lemma M"]
fn binary32_mac_is_proven_with_lemma_f() {
    if !yosys() {
        return;
    }
    let r = req(Unit::Mac, p("e2m1"), Format::BINARY32);
    let reports = prove_request(&r, &opts("mac_b32")).expect("prove");
    assert_eq!(reports.len(), 2);
    for rep in &reports {
        assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
    }
    assert!(reports[0].statement.starts_with("Lemma F"));
    assert!(reports[1].statement.starts_with("Lemma M"));
}

/// Lemma P alone: the mac `r` (with stages) against its 0-stage twin; `mutate` edits the
/// pipelined core's Verilog first.
fn lemma_p(r: &GenRequest, mutate: Option<(&str, &str)>, tag: &str) -> formal::ProofReport {
    let mut pipe = rtl::generate(r).expect("generate");
    if let Some((from, to)) = mutate {
        pipe.verilog = replace(&pipe.verilog, from, to);
    }
    let twin = rtl::generate(&GenRequest {
        stages: 0,
        ..r.clone()
    })
    .expect("generate twin");
    let rep = formal::induct::prove_mac_pipeline(r, &pipe, &twin, &opts(tag)).expect("prove");
    eprintln!(
        "{tag}: {:?} in {:.1} s: {:?}\n{}",
        rep.verdict, rep.seconds, rep.detail, rep.statement
    );
    rep
}

#[test]
#[ignore = "about 90 s on the loaded 2-core machine (4-induction of the mac and its twin)"]
fn pipelined_binary32_mac_equals_its_twin() {
    if !yosys() {
        return;
    }
    let mut r = req(Unit::Mac, p("e2m1"), Format::BINARY32);
    r.stages = 1;
    let rep = lemma_p(&r, None, "macp_b32_s1");
    assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
}

#[test]
fn a_pipeline_register_dropped_is_refuted_by_lemma_p() {
    if !yosys() {
        return;
    }
    let mut r = req(Unit::Mac, p("e2m1"), Format::BINARY32);
    r.stages = 1;
    let pipe = rtl::generate(&r).expect("generate");
    // The pipeline register of the sum's sign holds 0 (every negative result turns positive).
    let line = pipe
        .verilog
        .lines()
        .find(|l| l.trim_start().starts_with("add_sign_q1 <= "))
        .expect("add_sign_q1")
        .trim()
        .to_string();
    let rep = lemma_p(&r, Some((&line, "add_sign_q1 <= 1'b0;")), "macp_b32_bad");
    assert_eq!(rep.verdict, Verdict::Refuted, "{rep:#?}");
    assert!(rep.counterexample.expect("trace").cycle.is_some());
}

#[test]
fn interleaved_mac_is_proven_and_swapped_accumulators_are_refuted() {
    if !yosys() {
        return;
    }
    let mut r = req(Unit::Mac, p("e2m1"), Format::BINARY32);
    r.options.interleave = 2;
    let core = rtl::generate(&r).expect("generate");
    let rep = formal::induct::prove_mac_core(&r, &core, &opts("mac_il2")).expect("prove");
    eprintln!("mac_il2: {:?} in {:.1} s", rep.verdict, rep.seconds);
    assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
    assert!(
        rep.statement.contains("lacc1_q = acc1"),
        "{}",
        rep.statement
    );
    // Lane 0 reads accumulator 1 and lane 1 accumulator 0.
    let mut bad = core.clone();
    bad.verilog = replace(
        &bad.verilog,
        "1'b0: lane_acc = lacc0_q;",
        "1'b0: lane_acc = lacc1_q;",
    );
    bad.verilog = replace(
        &bad.verilog,
        "1'b1: lane_acc = lacc1_q;",
        "1'b1: lane_acc = lacc0_q;",
    );
    let rep = formal::induct::prove_mac_core(&r, &bad, &opts("mac_il2_swap")).expect("prove");
    assert_eq!(rep.verdict, Verdict::Refuted, "{rep:#?}");
}

#[test]
#[ignore = "about 2 minutes on the loaded 2-core machine (4-induction of two interleaved mac cores)"]
fn pipelined_interleaved_mac_equals_its_twin() {
    if !yosys() {
        return;
    }
    let mut r = req(Unit::Mac, p("e2m1"), Format::BINARY32);
    r.options.interleave = 2;
    r.stages = 2;
    let rep = lemma_p(&r, None, "macp_il2_s2");
    assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
}

#[test]
fn pipelined_exact_mac_equals_its_twin() {
    if !yosys() {
        return;
    }
    let mut r = exact_mac(p("e2m1"), 2);
    r.stages = 2;
    let rep = lemma_p(&r, None, "macp_exact_s2");
    assert_eq!(rep.verdict, Verdict::Proven, "{rep:#?}");
    assert!(rep
        .statement
        .contains("1 cycle later and showing its outputs 1 cycle later"));
}
