//! The `convert` unit: any format → any other (E5M2 → E4M3, E4M3 → bfloat16, P3109 ↔ OCP),
//! `z_i` → `r_o`, `flags_o` = {invalid, overflow, underflow, inexact}, one rounding.
//!
//! Golden meaning: `(r_o, flags_o) = golden::convert(in_format, z_i, format, spec, rnd_i)`,
//! the P3109 Convert operation (P3109 §5.2): the input's exact value (every code of a small
//! format is exact) projected to the result format by THE ONE rounder, so a conversion is a
//! projection whose input is any format. The generator is the projection's
//! ([`super::project::generate`]): unpack the input (P3109 §4.7.2 / the README's family table:
//! its own NaN, Inf and zero codes), then [`crate::blocks::round`]. Data input ports, in
//! order: `z_i`, `rm_i` (dynamic rounding), `sat_i` (dynamic saturation), `rnd_i` (when a
//! stochastic mode is possible).

use super::project::{self, ProjectModel};
use crate::{GenError, GenRequest, GeneratedCore};
use golden::Format;

/// The `convert` unit in the registry ([`super::def`]).
#[derive(Debug)]
pub struct Convert;

impl super::UnitDef for Convert {
    fn validate(&self, req: &GenRequest) -> Result<(), GenError> {
        let (x, r) = (req.formats.x, req.formats.r);
        let ieee = [Format::BINARY32, Format::BINARY16, Format::BFLOAT16];
        if !ieee.contains(&x) {
            crate::check_format(&x, "input")?;
        }
        if x == r {
            return Err(GenError::BadRequest(format!(
                "convert from {} to itself is the identity; give a different --in-format or --format",
                x.name()
            )));
        }
        if ieee.contains(&r) {
            // binary32, binary16 and bfloat16 results: IEEE formats with NaN and Inf.
            return Ok(());
        }
        project::validate_result(req)
    }

    fn ports(&self, req: &GenRequest, v: &mut Vec<iface::Port>) {
        project::ports(req, v)
    }

    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError> {
        project::generate(req)
    }

    fn model(&self, req: &GenRequest) -> Result<super::GoldenModel, GenError> {
        Ok(super::GoldenModel::of(ProjectModel::new(req)?))
    }
}
