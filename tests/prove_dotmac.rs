//! `fp8gen prove -u dot` and `-u mac` from the command line: the summary names what was
//! proven (the dot lemmas; the mac's induction depth and state bits), and requests the mac
//! proof does not cover are usage errors naming the alternative. Skipped without yosys.

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
fn prove_mac_refuses_what_it_does_not_cover() {
    let o = run(&["prove", "-u", "mac", "-f", "e4m3", "--stages", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--stages 0"), "{}", stderr(&o));
    let o = run(&["prove", "-u", "mac", "-f", "e4m3", "--interleave", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("fp8gen verify"), "{}", stderr(&o));
}
