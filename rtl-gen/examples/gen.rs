//! Prints a generated core: `cargo run -p fp8gen-rtl --example gen -- <unit> <format> [rm] [sat] [stages] [sr_bits]`.
use rtl::{generate, GenRequest, RoundingSel, SaturationSel};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let get = |i: usize, d: &str| a.get(i).cloned().unwrap_or_else(|| d.to_string());
    let f = match golden::Format::parse(&get(1, "e4m3")) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let sr: u32 = get(5, "0").parse().unwrap_or(0);
    let stages: u32 = get(4, "0").parse().unwrap_or(0);
    let req = if get(0, "project") == "decode" {
        GenRequest::decode(f)
    } else {
        let rm = get(2, "rne");
        let rm = if rm == "dyn" {
            RoundingSel::Dynamic
        } else {
            RoundingSel::Fixed(
                golden::Rounding::parse(&rm, sr as u8).unwrap_or(golden::Rounding::Rne),
            )
        };
        let sat = get(3, "satfinite");
        let sat = if sat == "dyn" {
            SaturationSel::Dynamic
        } else {
            SaturationSel::Fixed(
                golden::Saturation::parse(&sat).unwrap_or(golden::Saturation::SatFinite),
            )
        };
        GenRequest::project(f, rm, sat).with_sr_bits(sr)
    };
    let req = req.with_stages(stages);
    match generate(&req) {
        Ok(c) => print!("{}", c.verilog),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
