//! `fp8gen prove -u dot` and `-u mac` from the command line: the summary names what was
//! proven (the dot lemmas; the mac's induction depth and state bits; lemma P of a pipelined
//! mac). Skipped without yosys.

use crate::common;
use common::{run, stderr, stdout};

fn yosys() -> bool {
    formal::tools::find_yosys().is_ok()
}

#[test]
fn prove_dot_states_its_three_lemmas() {
    if !yosys() {
        return;
    }
    let o = run(&[
        "prove",
        "-u",
        "dot",
        "-f",
        "e2m1",
        "--n",
        "2",
        "--out-format",
        "e2m1",
        "-s",
        "satfinite",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    for lemma in [
        "Lemma A1 (the 2 lane terms)",
        "Lemma A2 (the exact sum)",
        "Lemma B (the tail",
    ] {
        assert!(out.contains(lemma), "{lemma}:\n{out}");
    }
    assert_eq!(out.matches("PROVEN: ").count(), 3, "{out}");
    assert!(out.contains("on every input"), "{out}");
}

#[test]
fn prove_mac_states_the_induction() {
    if !yosys() {
        return;
    }
    let o = run(&[
        "prove",
        "-u",
        "mac",
        "-f",
        "e2m1",
        "--acc",
        "exact",
        "--guard-bits",
        "1",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("PROVEN: "), "{out}");
    assert!(out.contains("1-induction"), "{out}");
    assert!(out.contains("state bits"), "{out}");
    assert!(out.contains("every cycle after reset"), "{out}");
}

#[test]
fn prove_pipelined_mac_states_lemma_p() {
    if !yosys() {
        return;
    }
    let o = run(&[
        "prove",
        "-u",
        "mac",
        "-f",
        "e2m1",
        "--acc",
        "exact",
        "--guard-bits",
        "1",
        "--stages",
        "2",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert_eq!(out.matches("PROVEN: ").count(), 2, "{out}");
    assert!(
        out.contains("Lemma M (the accumulator, 1-induction)"),
        "{out}"
    );
    assert!(out.contains("Lemma P (the pipeline, "), "{out}");
    assert!(out.contains("(latency 3) equals its 0-stage twin"), "{out}");
}
