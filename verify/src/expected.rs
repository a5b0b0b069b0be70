//! Golden functions in canonical port order, with fast paths where a unit allows: a fixed- or
//! run-time-mode binary32 projection goes through memoized [`golden::Projector`]s (one per
//! selected mode combination, indexed by the port values); every other unit through the
//! generator crate's golden models ([`rtl::units::GoldenModel`]), which are themselves built
//! on the one rounder of the golden model.

use golden::{Projector, Spec};
use rtl::blocks::{rounding_from_port, saturation_from_port};
use rtl::manifest::{Direction, Role, Unit};
use rtl::units::mac::MacModel;
use rtl::units::GoldenModel;
use rtl::{GenRequest, RoundingSel, SaturationSel};

/// Where a batch's canonical columns sit in its rows: `stride` words per row, the canonical
/// ones from `offset` on (the others are valid ports, driven or expected 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Words per row.
    pub stride: usize,
    /// First canonical column.
    pub offset: usize,
}

/// Expected outputs of a stateless core.
#[derive(Debug)]
pub enum Golden {
    /// binary32 → small projection without random bits: projectors indexed by
    /// `rm_value * 4 + sat_value` (only the selected combinations are built).
    Project {
        /// Projector table.
        table: Vec<Option<Projector>>,
        /// Whether `rm_i` / `sat_i` are ports (in this order after `z_i`).
        dyn_rm: bool,
        /// See `dyn_rm`.
        dyn_sat: bool,
    },
    /// A table of the outputs over every input ([`OutputTable`]): for units with a result
    /// and flags whose inputs take few bits (mul of 8-bit formats with mode ports: 2^21
    /// entries), built once from the golden model.
    Table(OutputTable),
    /// Any unit, through the generator crate's golden model.
    General(GoldenModel),
}

/// Largest table of golden results built (input bits).
pub const TABLE_BITS: u32 = 22;

/// Packed outputs `result << 4 | flags` (results of at most 12 bits) indexed by the
/// concatenated canonical input bits.
#[derive(Debug)]
pub struct OutputTable {
    entries: Vec<u16>,
    /// Bit offset and mask of each canonical input in the index.
    fields: Vec<(u32, u64)>,
}

impl OutputTable {
    /// Largest result width an entry holds.
    const RESULT_BITS: u32 = 12;

    fn pack(result: u64, flags: u64) -> u16 {
        ((result << 4) | (flags & 0xF)) as u16
    }

    /// The entry of the canonical inputs `inp`.
    #[inline(always)]
    fn index(&self, inp: &[u64]) -> usize {
        let mut k = 0u64;
        for (v, (sh, m)) in inp.iter().zip(&self.fields) {
            k |= (v & m) << sh;
        }
        k as usize
    }

    /// `(result, flags)` of entry `k`.
    #[inline(always)]
    fn get(&self, k: usize) -> (u64, u64) {
        let t = self.entries[k] as u64;
        (t >> 4, t & 0xF)
    }
}

impl Golden {
    /// A table of the golden model's outputs over every input of a unit with a result and
    /// flags, when the inputs (`widths`, canonical order) take at most [`TABLE_BITS`] bits and
    /// the run evaluates at least `min_use` times as many vectors as the table has entries
    /// (building an entry costs one golden evaluation, on every core). The index puts the
    /// fields listed in `low_first` (the mode ports, which every space varies fastest) in its
    /// low bits, so an exhaustive run walks the table almost in order. A random run looks up
    /// scattered entries, but a table of 2^21 fits the last-level cache and a lookup that
    /// misses L2 is still several times cheaper than the rounder it replaces.
    pub fn tabulated(
        req: &GenRequest,
        widths: &[u32],
        low_first: &[usize],
        vectors: u64,
        min_use: f64,
    ) -> Result<Option<Golden>, String> {
        let bits: u32 = widths.iter().sum();
        // Units whose data outputs are exactly a result and the flags.
        let outputs: Vec<Role> = rtl::interface(req)
            .iter()
            .filter(|p| p.direction == Direction::Output && !p.role.is_control())
            .map(|p| p.role)
            .collect();
        let two_outputs = outputs == [Role::Result, Role::Flags];
        let fits = req.formats.r.k <= OutputTable::RESULT_BITS;
        if !two_outputs
            || !fits
            || bits > TABLE_BITS
            || (vectors as f64) < (1u64 << bits) as f64 * min_use
        {
            return Ok(None);
        }
        let g = GoldenModel::new(req).map_err(|e| e.to_string())?;
        let mut fields = vec![(0u32, 0u64); widths.len()];
        let order = low_first
            .iter()
            .copied()
            .chain((0..widths.len()).filter(|k| !low_first.contains(k)));
        let mut at = 0;
        for k in order {
            fields[k] = (at, iface::width_mask(widths[k]));
            at += widths[k];
        }
        // Built on every core: chunks of the index space, each filled by one thread.
        let mut entries = vec![0u16; 1usize << bits];
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = entries.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            for (c, part) in entries.chunks_mut(chunk).enumerate() {
                let (g, fields) = (&g, &fields);
                s.spawn(move || {
                    let mut inp = vec![0u64; fields.len()];
                    for (k, slot) in part.iter_mut().enumerate() {
                        let idx = (c * chunk + k) as u64;
                        for (v, (sh, m)) in inp.iter_mut().zip(fields) {
                            *v = (idx >> sh) & m;
                        }
                        let o = g.eval(&inp);
                        *slot = OutputTable::pack(o[0], o[1]);
                    }
                });
            }
        });
        Ok(Some(Golden::Table(OutputTable { entries, fields })))
    }

    /// The golden function of the core `req` describes, for the mode port values in `modes`.
    pub fn new(req: &GenRequest, modes: &[(u64, u64)]) -> Result<Golden, String> {
        let g = GoldenModel::new(req).map_err(|e| e.to_string())?;
        // A projection of one input (project, convert): memoized projectors.
        if matches!(req.unit, Unit::Project | Unit::Convert)
            && req.random_bits() == 0
            && !req.options.signaling_nan
            && req.formats.scale.is_none()
        {
            let dyn_rm = req.rounding == RoundingSel::Dynamic;
            let dyn_sat = req.saturation == SaturationSel::Dynamic;
            let mut table: Vec<Option<Projector>> = (0..16 * 4).map(|_| None).collect();
            for &(rm, sat) in modes {
                let rounding = match req.rounding {
                    RoundingSel::Fixed(r) => r,
                    RoundingSel::Dynamic => rounding_from_port(rm, 0),
                };
                let saturation = match req.saturation {
                    SaturationSel::Fixed(s) => s,
                    SaturationSel::Dynamic => saturation_from_port(sat),
                };
                let spec = Spec {
                    rounding,
                    saturation,
                    tininess: req.options.tininess,
                    nonan_code: req.options.nonan_code,
                    rto_overflow: req.options.rto_overflow,
                };
                let idx = (rm as usize % 16) * 4 + sat as usize % 4;
                table[idx] = Some(Projector::new(req.formats.x, req.formats.r, spec));
            }
            return Ok(Golden::Project {
                table,
                dyn_rm,
                dyn_sat,
            });
        }
        Ok(Golden::General(g))
    }

    /// [`Golden::eval`] over a batch. `inp` holds rows of `il.stride` words with the `ni`
    /// canonical inputs at `il.offset`; `out` rows of `ol.stride` words get the `no` canonical
    /// outputs at `ol.offset` and 1 in every other column (the valid outputs of a
    /// combinational core). The choice of fast path is made once per batch (a fixed-mode
    /// projection is one projector applied in a tight loop).
    pub fn eval_batch(
        &self,
        inp: &[u64],
        il: Layout,
        ni: usize,
        out: &mut [u64],
        ol: Layout,
        no: usize,
    ) {
        let rows = inp
            .chunks_exact(il.stride.max(1))
            .zip(out.chunks_exact_mut(ol.stride.max(1)));
        let pad = ol.stride != no;
        if let Golden::Project {
            table,
            dyn_rm: false,
            dyn_sat: false,
        } = self
        {
            if let (Some(p), 1, 2) = (&table[0], ni, no) {
                for (i, o) in rows {
                    if pad {
                        o.fill(1);
                    }
                    let (c, f) = p.convert(i[il.offset] as u32, 0);
                    o[ol.offset] = c as u64;
                    o[ol.offset + 1] = f.0 as u64;
                }
                return;
            }
        }
        if let (Golden::Table(t), 2) = (self, no) {
            // Lookups of a random space miss the caches: compute every index of the batch
            // first, so that the loads of the second loop are independent and overlap.
            let idx: Vec<usize> = inp
                .chunks_exact(il.stride.max(1))
                .map(|i| t.index(&i[il.offset..il.offset + ni]))
                .collect();
            for (o, &k) in out.chunks_exact_mut(ol.stride.max(1)).zip(&idx) {
                if pad {
                    o.fill(1);
                }
                (o[ol.offset], o[ol.offset + 1]) = t.get(k);
            }
            return;
        }
        for (i, o) in rows {
            if pad {
                o.fill(1);
            }
            self.eval(
                &i[il.offset..il.offset + ni],
                &mut o[ol.offset..ol.offset + no],
            );
        }
    }

    /// Writes the expected outputs for `inp` (canonical inputs) into `out` (canonical outputs).
    #[inline]
    pub fn eval(&self, inp: &[u64], out: &mut [u64]) {
        match self {
            Golden::Project {
                table,
                dyn_rm,
                dyn_sat,
            } => {
                let rm = if *dyn_rm { inp[1] as usize } else { 0 };
                let sat = if *dyn_sat {
                    inp[1 + *dyn_rm as usize] as usize
                } else {
                    0
                };
                match &table[(rm % 16) * 4 + sat % 4] {
                    Some(p) => {
                        let (c, f) = p.convert(inp[0] as u32, 0);
                        out[0] = c as u64;
                        out[1] = f.0 as u64;
                    }
                    None => {
                        // A combination outside the selection: never generated by the
                        // space; mark it so that a mismatch shows rather than passes.
                        out[0] = u64::MAX;
                        out[1] = u64::MAX;
                    }
                }
            }
            Golden::Table(t) => (out[0], out[1]) = t.get(t.index(inp)),
            Golden::General(g) => g.eval_into(inp, out),
        }
    }
}

/// A fresh golden stream model of a stateful core (`mac`).
pub fn stream_model(req: &GenRequest) -> Result<MacModel, String> {
    MacModel::new(req).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use golden::Format;

    /// The table and the direct golden model agree on every input of a mul with mode ports.
    #[test]
    fn table_equals_the_golden_model() {
        let mut req =
            GenRequest::project(Format::E4M3, RoundingSel::Dynamic, SaturationSel::Dynamic);
        req.unit = Unit::Mul;
        req.formats.x = Format::E5M2;
        req.formats.y = Some(Format::E4M3);
        req.formats.r = Format::E4M3;
        let widths = [8, 8, 3, 2];
        let t = Golden::tabulated(&req, &widths, &[2, 3], 1 << 21, 0.25)
            .unwrap()
            .expect("tabulated");
        let g = GoldenModel::new(&req).unwrap();
        let mut out = [0u64; 2];
        for idx in (0..1u64 << 21).step_by(7) {
            let inp = [
                idx & 0xFF,
                (idx >> 8) & 0xFF,
                (idx >> 16) & 7,
                (idx >> 19) & 3,
            ];
            t.eval(&inp, &mut out);
            assert_eq!(out.to_vec(), g.eval(&inp), "{inp:?}");
        }
        assert!(Golden::tabulated(&req, &widths, &[], 1000, 0.25)
            .unwrap()
            .is_none());
        // A binary32 result does not fit an entry: computed, never truncated.
        req.formats.r = Format::BINARY32;
        assert!(Golden::tabulated(&req, &widths, &[2, 3], 1 << 22, 0.25)
            .unwrap()
            .is_none());
    }
}
