//! Vector spaces: which input vectors a verification run drives, as a pure function of the
//! vector index (so any space can be sharded, resumed and replayed).
//!
//! Vectors are written in the *canonical* input order of the unit (the data inputs of
//! [`rtl::interface`]); the run loop permutes them onto the ports of the device under test.
//! Run-time mode ports take the selected mode combinations, interleaved (vector `i` uses
//! combination `i mod combos`), so every shard covers every mode equally.
//!
//! Randomness is a counter-based generator: value `n` of a run with seed `s` is SplitMix64
//! at position `key(s) + n·γ`, where `key(s)` is itself a SplitMix64 hash of the seed. Two
//! seeds therefore draw independent streams (not permutations of the same indices).

use golden::{Format, Rounding, Spec};
use iface::Role;

/// The SplitMix64 finalizer.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A seeded counter-based random generator: `at(n)` is the `n`-th value of the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rng {
    key: u64,
}

impl Rng {
    /// The stream of `seed` (and a sub-stream tag, e.g. per purpose).
    pub fn new(seed: u64, stream: u64) -> Rng {
        Rng {
            key: mix(mix(seed.wrapping_add(GAMMA)) ^ mix(stream.wrapping_mul(GAMMA) ^ 0x5851_F42D)),
        }
    }

    /// Value number `n`.
    #[inline]
    pub fn at(&self, n: u64) -> u64 {
        mix(self.key.wrapping_add(n.wrapping_mul(GAMMA)))
    }
}

/// How the operands are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Every combination of the enumerated operand bits.
    Exhaustive,
    /// `project`: every structured binary32 value × every code of the other operands.
    Structured,
    /// Uniformly random operands (`n` per mode combination).
    Random(u64),
    /// FMA: every (x, y) pair × [`FMA_Z_PER_PAIR`] addends placed around the product.
    FmaStructured,
    /// FMA: `n` random (x, y) pairs, each with an addend of the structured classes.
    FmaRandom(u64),
    /// Dot products: `n` vectors per mode combination from the structured classes of
    /// [`DotGen`] (random lanes, exact and near cancellation, ties and sticky patterns at the
    /// result's rounding position, specials in any lane, overflow, subnormal products,
    /// extreme scales, addends around the sum).
    Dot(u64),
    /// Block quantizers: `n` blocks per mode combination from the classes of [`BlockGen`].
    Block(u64),
}

/// Blocks per mode combination of a block quantizer by default.
pub const BLOCK_DEFAULT_VECTORS: u64 = 1 << 20;

/// Random vectors per mode combination of a block-scaled unit without a structured set.
pub const SCALED_DEFAULT_VECTORS: u64 = 1 << 22;

/// Dot-product vectors per mode combination by default.
pub const DOT_DEFAULT_VECTORS: u64 = 1 << 20;

/// Addends per (x, y) pair in the structured FMA space.
pub const FMA_Z_PER_PAIR: u64 = 128;

/// A vector space in canonical input order.
#[derive(Clone, Debug)]
pub struct Space {
    /// Total vectors (all mode combinations).
    pub len: u64,
    /// Vectors per mode combination.
    pub per_mode: u64,
    /// The mode port values of each combination: `(rm_i, sat_i)` (unused parts 0).
    pub modes: Vec<(u64, u64)>,
    /// Canonical data inputs: role and width.
    pub roles: Vec<(Role, u32)>,
    /// Operand choice.
    pub kind: Kind,
    /// Whether `rnd_i` is enumerated with the operands (else drawn at random).
    pub enumerate_random: bool,
    needs_rng: bool,
    rng: Rng,
    fx: Format,
    fy: Format,
    products: Vec<(u32, u8)>,
    structured: Vec<u32>,
    dot: Option<Box<DotGen>>,
    block: Option<Box<BlockGen>>,
    /// Scale codes of value 2^-8 … 2^8 (block-scaled mul, fma, project): three scale
    /// values in four are drawn from them, so that scaled results land in the formats'
    /// ranges and not only beyond them.
    scale_mid: Vec<u32>,
}

/// Codes of the scale format `sf` whose value lies in 2^-8 … 2^8.
fn mid_scale_codes(sf: &Format) -> Vec<u32> {
    let v: Vec<u32> = (0..sf.num_codes() as u32)
        .filter(|&c| {
            let e = sf.decode(c).exact();
            e.class == golden::ExactClass::Finite && (-8..=8).contains(&e.log2_floor())
        })
        .collect();
    if v.is_empty() {
        vec![0]
    } else {
        v
    }
}

/// The binary32 product (rounded toward zero) and its flags for every (x, y) code pair,
/// index `y << K_x | x`: where the structured FMA space places its addends.
fn product_table(fx: &Format, fy: &Format) -> Vec<(u32, u8)> {
    let spec = Spec::ieee(Rounding::Rtz);
    let mut v = Vec::with_capacity(1 << (fx.k + fy.k));
    for y in 0..fy.num_codes() as u32 {
        for x in 0..fx.num_codes() as u32 {
            let (p, fl) = golden::mul(fx, x, fy, y, &Format::BINARY32, &spec, 0);
            v.push((p, fl.0));
        }
    }
    v
}

/// Random mantissas per exponent and sign added to the structured binary32 set.
const STRUCTURED_RANDOM: usize = 8;

/// The structured binary32 values: for each sign and exponent, the mantissas on, beside and
/// between every rounding boundary of every precision (for s < 23: the tie `2^s` and its
/// neighbours `2^s ± 1, ± 2`, `3·2^s` and `3·2^s ± 1` (odd/even above a tie), `2^(s+1) − 1`
/// and `2^(s+1) − 2` (all sticky bits), all ones but bit s or but the bits below s (carries
/// into the next binade); 0 and all ones), deduplicated, plus a few random mantissas: every
/// value appears once.
pub fn structured_f32(rng: &Rng) -> Vec<u32> {
    let mut det: Vec<u32> = vec![0, 0x7F_FFFF];
    for sh in 0..23u32 {
        let h = 1u32 << sh;
        for m in [
            h,
            h - 1,
            h + 1,
            h.wrapping_sub(2),
            h + 2,
            h.wrapping_mul(3),
            h.wrapping_mul(3) + 1,
            h.wrapping_mul(3).wrapping_sub(1),
            (h << 1) - 1,
            (h << 1).wrapping_sub(2),
            0x7F_FFFF ^ h,
            0x7F_FFFF ^ (h - 1),
        ] {
            det.push(m & 0x7F_FFFF);
        }
    }
    det.sort_unstable();
    det.dedup();
    let mut out = Vec::with_capacity(2 * 256 * (det.len() + STRUCTURED_RANDOM));
    let mut n = 0u64;
    for sign in 0..2u32 {
        for e in 0..256u32 {
            let mut ms = det.clone();
            while ms.len() < det.len() + STRUCTURED_RANDOM {
                let m = rng.at(n) as u32 & 0x7F_FFFF;
                n += 1;
                if !ms.contains(&m) {
                    ms.push(m);
                }
            }
            out.extend(ms.iter().map(|m| (sign << 31) | (e << 23) | m));
        }
    }
    out
}

/// Structured addend number `j` (< [`FMA_Z_PER_PAIR`]) for the product of `x` and `y`:
/// specials; every alignment distance from −40 to +40 binades around the product with random
/// mantissas; exact and near cancellation; ties and sticky patterns just below the product's
/// last bit; subnormal and overflow boundaries.
fn fma_z(products: &[(u32, u8)], kx: u32, x: u32, y: u32, j: u64, h: u64) -> u32 {
    const SPECIALS: [u32; 16] = [
        0x0000_0000,
        0x8000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x7FA0_0000,
        0x0000_0001,
        0x8000_0001,
        0x007F_FFFF,
        0x807F_FFFF,
        0x0080_0000,
        0x8080_0000,
        0x7F7F_FFFF,
        0xFF7F_FFFF,
        0x3F80_0000,
        0xBF80_0000,
    ];
    if j < 16 {
        return SPECIALS[j as usize];
    }
    let (p, fl) = products[((y << kx) | x) as usize];
    let pe = ((p >> 23) & 0xFF) as i64;
    let sign = (h as u32) & 0x8000_0000;
    let rnd_man = (h >> 32) as u32 & 0x7F_FFFF;
    let at = |d: i64, m: u32, s: u32| -> u32 {
        let e = (pe + d).clamp(0, 254) as u32;
        s | (e << 23) | (m & 0x7F_FFFF)
    };
    match j {
        16..=96 => at(j as i64 - 56, rnd_man, sign),
        97..=104 if fl == 0 => {
            // −product and its neighbours: massive cancellation.
            let neg = p ^ 0x8000_0000;
            let off = [0i32, 1, -1, 2, -2, 3, -3, 5][(j - 97) as usize];
            neg.wrapping_add_signed(off)
        }
        105..=116 => {
            // Just below the product's last bit: round, tie and sticky patterns.
            let d = [-24i64, -25, -26, -23, -22, -30][((j - 105) / 2) as usize];
            let m = [0x40_0000u32, 0, 0x7F_FFFF, 1, 0x40_0001, 0x3F_FFFF][((j - 105) % 6) as usize];
            at(
                d,
                m,
                if j % 2 == 0 {
                    sign
                } else {
                    (p & 0x8000_0000) ^ 0x8000_0000
                },
            )
        }
        117..=120 => {
            [0x0080_0000u32, 0x007F_FFFF, 0x0000_0001, 0x0040_0000][(j - 117) as usize] | sign
        }
        121..=124 => {
            [0x7F7F_FFFF, 0x7F7F_FFFE, 0x7F00_0000, 0x7E80_0000][(j - 121) as usize]
                | (p & 0x8000_0000)
        }
        _ => (h >> 16) as u32,
    }
}

/// What a space enumerates: set by [`Space::new`]'s caller from the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The unit's default (exhaustive when small, structured otherwise).
    Default,
    /// Every operand bit pattern (and every `rnd_i` value).
    Exhaustive,
    /// `n` random vectors per mode combination.
    Random(u64),
}

/// Operands wider than this many bits in total are never enumerated.
pub const MAX_EXHAUSTIVE_BITS: u32 = 40;

/// Operand spaces of at most this many bits are enumerated by default.
pub const DEFAULT_EXHAUSTIVE_BITS: u32 = 24;

impl Space {
    /// The space for a unit whose canonical data inputs are `roles`, with small-float
    /// operand formats `fx`, `fy` (FMA-like units get the structured FMA spaces), the mode
    /// combinations `modes` and the seed.
    pub fn new(
        roles: Vec<(Role, u32)>,
        fma_like: bool,
        fx: Format,
        fy: Format,
        modes: Vec<(u64, u64)>,
        choice: Choice,
        seed: u64,
    ) -> Result<Space, String> {
        let bits = |with_rnd: bool| -> u32 {
            roles
                .iter()
                .filter(|(r, _)| {
                    matches!(
                        r,
                        Role::X | Role::Y | Role::Z | Role::ScaleX | Role::ScaleY | Role::Sub
                    ) || (with_rnd && *r == Role::Random)
                })
                .map(|(_, w)| *w)
                .sum()
        };
        let has_rnd = roles.iter().any(|(r, _)| *r == Role::Random);
        let operand_bits = bits(false);
        let all_bits = bits(true);
        let rng = Rng::new(seed, 0);
        let pair_bits = fx.k + fy.k;
        let (kind, per_mode, enumerate_random) = match choice {
            Choice::Random(0) => {
                return Err("--random 0 draws no vector; give a positive count".into())
            }
            Choice::Random(n) if fma_like && pair_bits <= 20 => (Kind::FmaRandom(n), n, false),
            Choice::Random(n) => (Kind::Random(n), n, false),
            Choice::Exhaustive => {
                if all_bits > MAX_EXHAUSTIVE_BITS {
                    let what = if has_rnd && operand_bits <= MAX_EXHAUSTIVE_BITS {
                        format!(
                            "{operand_bits} operand bits + {} random bits (rnd_i)",
                            all_bits - operand_bits
                        )
                    } else {
                        format!("{operand_bits} operand bits")
                    };
                    return Err(format!(
                        "--exhaustive: {what} = 2^{all_bits} vectors per mode is too many to enumerate (at most 2^{MAX_EXHAUSTIVE_BITS}); \
                         use the default structured set or --random N{}",
                        if has_rnd { ", or fewer --sr-bits" } else { "" }
                    ));
                }
                (Kind::Exhaustive, 1u64 << all_bits, has_rnd)
            }
            Choice::Default if fma_like => {
                if pair_bits > 20 {
                    return Err(
                        "the structured FMA set enumerates every (x, y) pair and needs K_x + K_y ≤ 20; use --random N"
                            .into(),
                    );
                }
                (Kind::FmaStructured, FMA_Z_PER_PAIR << pair_bits, false)
            }
            Choice::Default if all_bits <= DEFAULT_EXHAUSTIVE_BITS => {
                (Kind::Exhaustive, 1u64 << all_bits, has_rnd)
            }
            Choice::Default => {
                let other = operand_bits.saturating_sub(32);
                if !roles.iter().any(|(r, w)| *r == Role::Z && *w == 32) || other > 20 {
                    return Err("no structured set for operands this wide; use --random N".into());
                }
                (Kind::Structured, 0, false)
            }
        };
        let structured = if kind == Kind::Structured {
            structured_f32(&rng)
        } else {
            Vec::new()
        };
        let per_mode = if kind == Kind::Structured {
            (structured.len() as u64) << operand_bits.saturating_sub(32)
        } else {
            per_mode
        };
        let products = if matches!(kind, Kind::FmaStructured | Kind::FmaRandom(_)) {
            product_table(&fx, &fy)
        } else {
            Vec::new()
        };
        let len = per_mode
            .checked_mul(modes.len().max(1) as u64)
            .ok_or_else(|| "the space has more than 2^64 vectors; use --random N".to_string())?;
        let needs_rng = matches!(kind, Kind::Random(_))
            || roles
                .iter()
                .any(|(r, _)| *r == Role::Clear || (*r == Role::Random && !enumerate_random));
        Ok(Space {
            len,
            per_mode,
            modes,
            roles,
            kind,
            enumerate_random,
            needs_rng,
            rng,
            fx,
            fy,
            products,
            structured,
            dot: None,
            block: None,
            scale_mid: Vec::new(),
        })
    }

    /// The space of a unit with block scales of format `sf` (roles scale_x / scale_y):
    /// scale values are drawn mostly from around 2^0 (`mid_scale_codes`). Without a
    /// structured set for the scaled operands, the default is `2^22` random vectors.
    #[allow(clippy::too_many_arguments)]
    pub fn new_scaled(
        roles: Vec<(Role, u32)>,
        fma_like: bool,
        fx: Format,
        fy: Format,
        sf: Format,
        modes: Vec<(u64, u64)>,
        choice: Choice,
        seed: u64,
    ) -> Result<Space, String> {
        let mut sp = match Space::new(roles.clone(), fma_like, fx, fy, modes.clone(), choice, seed)
        {
            Ok(sp) => sp,
            Err(_) if choice == Choice::Default => Space::new(
                roles,
                fma_like,
                fx,
                fy,
                modes,
                Choice::Random(SCALED_DEFAULT_VECTORS),
                seed,
            )?,
            Err(e) => return Err(e),
        };
        if !matches!(sp.kind, Kind::Exhaustive | Kind::Structured) {
            sp.scale_mid = mid_scale_codes(&sf);
            sp.needs_rng = true;
        }
        Ok(sp)
    }

    /// The space of a dot-product core of shape `shape` (elements `fx` × `fy`):
    /// exhaustive when asked for (or by default when the operands have at most
    /// [`DEFAULT_EXHAUSTIVE_BITS`] bits), else the structured dot classes ([`Kind::Dot`]),
    /// or with `uniform` random vectors uniform over every operand code ([`Kind::Random`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new_dot(
        roles: Vec<(Role, u32)>,
        shape: iface::DotShape,
        fx: Format,
        fy: Format,
        scale: Option<Format>,
        modes: Vec<(u64, u64)>,
        choice: Choice,
        seed: u64,
        uniform: bool,
    ) -> Result<Space, String> {
        let bits: u32 = roles
            .iter()
            .filter(|(r, _)| !matches!(r, Role::Rounding | Role::Saturation))
            .map(|(_, w)| *w)
            .sum();
        if uniform {
            let n = match choice {
                Choice::Exhaustive => {
                    return Err("a uniform random space draws vectors; --exhaustive enumerates every input: give one of them".into())
                }
                Choice::Random(n) => n,
                Choice::Default => DOT_DEFAULT_VECTORS,
            };
            return Space::new(roles, false, fx, fy, modes, Choice::Random(n), seed);
        }
        let per_mode = match choice {
            Choice::Exhaustive => {
                return Space::new(roles, false, fx, fy, modes, choice, seed);
            }
            Choice::Default if bits <= DEFAULT_EXHAUSTIVE_BITS => {
                return Space::new(roles, false, fx, fy, modes, Choice::Exhaustive, seed);
            }
            Choice::Default => DOT_DEFAULT_VECTORS,
            Choice::Random(0) => {
                return Err("--random 0 draws no vector; give a positive count".into())
            }
            Choice::Random(n) => n,
        };
        let mut sp = Space::new(roles, false, fx, fy, modes, Choice::Random(per_mode), seed)?;
        sp.kind = Kind::Dot(per_mode);
        sp.dot = Some(Box::new(DotGen::new(shape, fx, fy, scale)?));
        Ok(sp)
    }

    /// The space of a block quantizer of `n` inputs of `fin` into elements of `fr`:
    /// exhaustive when asked for (or by default when the inputs have at most
    /// [`DEFAULT_EXHAUSTIVE_BITS`] bits, e.g. one bfloat16), else the block classes
    /// ([`Kind::Block`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new_block(
        roles: Vec<(Role, u32)>,
        n: u32,
        fin: Format,
        fr: Format,
        modes: Vec<(u64, u64)>,
        choice: Choice,
        seed: u64,
    ) -> Result<Space, String> {
        let bits: u32 = roles
            .iter()
            .filter(|(r, _)| !matches!(r, Role::Rounding | Role::Saturation))
            .map(|(_, w)| *w)
            .sum();
        let per_mode = match choice {
            Choice::Exhaustive => return Space::new(roles, false, fin, fin, modes, choice, seed),
            Choice::Default if bits <= DEFAULT_EXHAUSTIVE_BITS => {
                return Space::new(roles, false, fin, fin, modes, Choice::Exhaustive, seed);
            }
            Choice::Default => BLOCK_DEFAULT_VECTORS,
            Choice::Random(0) => {
                return Err("--random 0 draws no vector; give a positive count".into())
            }
            Choice::Random(k) => k,
        };
        let mut sp = Space::new(
            roles,
            false,
            fin,
            fin,
            modes,
            Choice::Random(per_mode),
            seed,
        )?;
        sp.kind = Kind::Block(per_mode);
        sp.block = Some(Box::new(BlockGen::new(n as usize, fin, fr)));
        Ok(sp)
    }

    /// One line describing the space for summaries.
    pub fn describe(&self, seed: u64) -> String {
        let rnd = self.roles.iter().find(|(r, _)| *r == Role::Random);
        let rnd_note = match rnd {
            Some((_, w)) if self.enumerate_random => format!("; rnd_i ({w} bits) enumerated"),
            Some((_, w)) => format!("; rnd_i ({w} bits) sampled at random, seed {seed}"),
            None => String::new(),
        };
        let base = match self.kind {
            Kind::Exhaustive => "exhaustive: every operand bit pattern".to_string(),
            Kind::Structured => format!(
                "structured: {} distinct binary32 values (every sign and exponent x mantissas at every rounding boundary + random, seed {seed}) x every code of the other operands",
                self.structured.len()
            ),
            Kind::Random(n) => format!("random: {n} uniform vectors per mode, seed {seed}"),
            Kind::FmaStructured => format!(
                "structured fma: every (x, y) pair x {FMA_Z_PER_PAIR} addends placed around the product, seed {seed}"
            ),
            Kind::FmaRandom(n) => format!(
                "random fma: {n} random (x, y) pairs per mode with structured addends, seed {seed}"
            ),
            Kind::Block(n) => format!(
                "structured blocks: {n} blocks per mode (tensor-like exponent windows, one outlier, block maximum at binade and policy edges, quotients at element ties, all zeros, subnormal blocks, NaN and infinities in random lanes, extreme magnitudes, uniform bit patterns), seed {seed}"
            ),
            Kind::Dot(n) => format!(
                "structured dot: {n} vectors per mode (random lanes, exact and near cancellation, ties and sticky at the rounding position, specials in every lane, overflow, subnormal products, extreme scales, addends around the sum), seed {seed}"
            ),
        };
        let scale_note = if self.scale_mid.is_empty() {
            ""
        } else {
            "; block scales: 3 in 4 between 2^-8 and 2^8, else uniform"
        };
        format!("{base}{rnd_note}{scale_note}")
    }

    /// Vector `i` in canonical input order.
    #[inline]
    /// Vectors `first`, `first + 1`, … as rows of `l.stride` words filling `out`: the `ni`
    /// canonical inputs at `l.offset`, 1 in every other column (valid inputs). The indices
    /// themselves for an exhaustive space of one operand (binary32 projection), else one
    /// [`Space::vector`] per row.
    pub fn fill(&self, first: u64, l: crate::expected::Layout, ni: usize, out: &mut [u64]) {
        let pad = l.stride != ni;
        let rows = out.chunks_exact_mut(l.stride.max(1)).enumerate();
        if self.roles.len() == 1 && self.kind == Kind::Exhaustive && ni == 1 {
            for (k, row) in rows {
                if pad {
                    row.fill(1);
                }
                row[l.offset] = first + k as u64;
            }
            return;
        }
        // The mode combination varies fastest: step it instead of dividing per vector.
        let combos = self.modes.len().max(1) as u64;
        let (mut m, mut j) = (first % combos, first / combos);
        for (k, row) in rows {
            if pad {
                row.fill(1);
            }
            self.vector_at(first + k as u64, m, j, &mut row[l.offset..l.offset + ni]);
            m += 1;
            if m == combos {
                m = 0;
                j += 1;
            }
        }
    }

    /// A scale code for `role` from the hash `h`: three in four from around 2^0, else
    /// `None` (a uniform code).
    #[inline]
    fn scale_code(&self, role: Role, h: u64) -> Option<u64> {
        if self.scale_mid.is_empty() || !matches!(role, Role::ScaleX | Role::ScaleY) || h >> 62 == 0
        {
            return None;
        }
        Some(self.scale_mid[((h >> 8) % self.scale_mid.len() as u64) as usize] as u64)
    }

    /// Vector `i` (canonical inputs) into `out`.
    pub fn vector(&self, i: u64, out: &mut [u64]) {
        // Fast path: one operand, fixed modes, exhaustive (e.g. project over all binary32).
        if self.roles.len() == 1 && self.kind == Kind::Exhaustive {
            out[0] = i;
            return;
        }
        let combos = self.modes.len().max(1) as u64;
        self.vector_at(i, i % combos, i / combos, out);
    }

    /// Vector `i` whose mode combination `m = i % combos` and operand index `j = i / combos`
    /// the caller has computed.
    #[inline]
    fn vector_at(&self, i: u64, m: u64, mut j: u64, out: &mut [u64]) {
        let (rm, sat) = self.modes.get(m as usize).copied().unwrap_or((0, 0));
        if let (Kind::Dot(_), Some(d)) = (self.kind, &self.dot) {
            d.vector(self.rng.at(i), &self.roles, rm, sat, out);
            return;
        }
        if let (Kind::Block(_), Some(g)) = (self.kind, &self.block) {
            g.vector(self.rng.at(i), &self.roles, rm, sat, out);
            return;
        }
        match self.kind {
            Kind::FmaStructured | Kind::FmaRandom(_) => {
                let h = self.rng.at(i);
                if let Kind::FmaRandom(_) = self.kind {
                    j = mix(h ^ 0x5555);
                }
                let (fx, fy) = (self.fx, self.fy);
                let x = (j & fx.code_mask() as u64) as u32;
                let y = ((j >> fx.k) & fy.code_mask() as u64) as u32;
                let zj = (j >> (fx.k + fy.k)) % FMA_Z_PER_PAIR;
                let z = fma_z(&self.products, fx.k, x, y, zj, h);
                let mut rs = h;
                for (idx, (role, w)) in self.roles.iter().enumerate() {
                    out[idx] = match role {
                        Role::X => x as u64,
                        Role::Y => y as u64,
                        Role::Z => z as u64,
                        Role::Rounding => rm,
                        Role::Saturation => sat,
                        _ => {
                            rs = mix(rs ^ GAMMA);
                            self.scale_code(*role, rs)
                                .unwrap_or(rs & iface::width_mask(*w))
                        }
                    };
                }
            }
            _ => {
                let mut h = if self.needs_rng { self.rng.at(i) } else { 0 };
                for (idx, (role, w)) in self.roles.iter().enumerate() {
                    let mask = iface::width_mask(*w);
                    out[idx] = match role {
                        Role::Rounding => rm,
                        Role::Saturation => sat,
                        Role::Random if !self.enumerate_random => {
                            h = mix(h ^ GAMMA);
                            h & mask
                        }
                        Role::Clear => {
                            h = mix(h ^ GAMMA);
                            h & mask
                        }
                        _ => match self.kind {
                            Kind::Random(_) => {
                                h = mix(h ^ GAMMA);
                                self.scale_code(*role, h).unwrap_or(h & mask)
                            }
                            Kind::Structured if *role == Role::Z && *w == 32 => {
                                let n = self.structured.len() as u64;
                                let v = self.structured[(j % n) as usize] as u64;
                                j /= n;
                                v
                            }
                            _ => {
                                let v = j & mask;
                                j >>= w;
                                v
                            }
                        },
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn seeds_draw_different_vectors() {
        // Vector i used to be mix(i ^ seed): seeds below the next power of two >= N drew
        // the same set. Now every seed is its own stream.
        let n = 1000u64;
        let sets: Vec<HashSet<u64>> = (1..=8u64)
            .map(|s| {
                let r = Rng::new(s, 0);
                (0..n).map(|i| r.at(i)).collect()
            })
            .collect();
        for a in 0..sets.len() {
            assert_eq!(sets[a].len(), n as usize);
            for b in a + 1..sets.len() {
                assert_eq!(sets[a].intersection(&sets[b]).count(), 0, "seeds {a} {b}");
            }
        }
        let space = |seed| {
            Space::new(
                vec![(Role::X, 8), (Role::Y, 8)],
                false,
                Format::E4M3,
                Format::E4M3,
                vec![(0, 0)],
                Choice::Random(64),
                seed,
            )
            .unwrap()
        };
        let draw = |s: &Space| -> Vec<[u64; 2]> {
            (0..64)
                .map(|i| {
                    let mut v = [0u64; 2];
                    s.vector(i, &mut v);
                    v
                })
                .collect()
        };
        let (a, b) = (draw(&space(1)), draw(&space(2)));
        let same = a.iter().filter(|v| b.contains(v)).count();
        assert!(same < 8, "seeds 1 and 2 share {same} of 64 vectors");
    }

    #[test]
    fn structured_set_has_no_repeats() {
        let s = structured_f32(&Rng::new(1, 0));
        let u: HashSet<u32> = s.iter().copied().collect();
        assert_eq!(u.len(), s.len(), "structured binary32 values repeat");
        assert!(s.len() > 2 * 256 * 200, "{}", s.len());
        // Every exponent and sign is covered, and the rounding-boundary patterns are there.
        assert!(s.contains(&0x3F80_0000) && s.contains(&0xBF80_0001) && s.contains(&0x7F80_0000));
    }

    #[test]
    fn exhaustive_enumerates_random_bits_when_small() {
        let s = Space::new(
            vec![(Role::Z, 16), (Role::Random, 4)],
            false,
            Format::E4M3,
            Format::E4M3,
            vec![(0, 0)],
            Choice::Exhaustive,
            1,
        )
        .unwrap();
        assert!(s.enumerate_random);
        assert_eq!(s.len, 1 << 20);
        let mut seen = HashSet::new();
        for i in 0..s.len {
            let mut v = [0u64; 2];
            s.vector(i, &mut v);
            seen.insert((v[0], v[1]));
        }
        assert_eq!(seen.len(), 1 << 20);
        let e = Space::new(
            vec![(Role::Z, 32), (Role::Random, 12)],
            false,
            Format::E4M3,
            Format::E4M3,
            vec![(0, 0)],
            Choice::Exhaustive,
            1,
        )
        .unwrap_err();
        assert!(
            e.starts_with("--exhaustive: 32 operand bits + 12 random bits (rnd_i) = 2^44"),
            "{e}"
        );
        let e = Space::new(
            vec![(Role::X, 8)],
            false,
            Format::E4M3,
            Format::E4M3,
            vec![(0, 0)],
            Choice::Random(0),
            1,
        )
        .unwrap_err();
        assert_eq!(e, "--random 0 draws no vector; give a positive count");
    }
}

/// The block classes of a quantizer: one block from one 64-bit hash. Values are built as
/// (sign, exponent, trailing significand) of the input format, so each class lands where it
/// is meant to: the block maximum on the edges where the scale policies differ
/// (`golden::quantize`: a power of two, one ulp above, the element format's MaxFinite
/// significand and its neighbours, the `even` carry limit and its neighbours, the largest
/// significand), quotients on element rounding boundaries, infinities and NaNs in any lane.
#[derive(Clone, Debug)]
pub struct BlockGen {
    n: usize,
    fin: Format,
    fr: Format,
    /// Trailing significands of the block maximum at the policies' edges (input format bits).
    edges: Vec<u64>,
}

impl BlockGen {
    /// The generator for `n` inputs of `fin` quantized to `fr`.
    pub fn new(n: usize, fin: Format, fr: Format) -> BlockGen {
        let fw = fin.man_bits();
        let all = (1u64 << fw) - 1;
        let align = |t: u64, tb: u32| -> u64 {
            if tb <= fw {
                t << (fw - tb)
            } else {
                t >> (tb - fw)
            }
        };
        let mut edges = vec![0, 1, all, all - 1, 1u64 << (fw - 1)];
        // MaxFinite_r's trailing significand (normalized) and its neighbours: rceil's edge.
        let d = fr.decode(fr.max_finite_mag());
        let s = d.sig as u64;
        let lead = 63 - s.leading_zeros();
        let mf = align(s & ((1u64 << lead) - 1), lead);
        edges.extend([mf, mf.wrapping_sub(1) & all, (mf + 1) & all]);
        // The even policy's carry limit 2^fw - 2^(fw - m - 1) and its neighbours.
        let m = fr.man_bits();
        if m < fw {
            let lim = (1u64 << fw) - (1u64 << (fw - m - 1));
            edges.extend([lim, lim - 1, (lim + 1) & all]);
        }
        edges.sort_unstable();
        edges.dedup();
        BlockGen { n, fin, fr, edges }
    }

    /// The code of `(-1)^sign · 1.t · 2^e` in the input format (`t` = trailing significand
    /// bits); below emin it is denormalized (truncated), above emax it is the largest finite.
    fn encode(&self, sign: bool, e: i64, t: u64) -> u64 {
        let f = &self.fin;
        let man = f.man_bits();
        let t = t & ((1u64 << man) - 1);
        let (emin, emax) = (f.emin() as i64, f.emax() as i64);
        let mag = if e > emax {
            f.max_finite_mag() as u64
        } else if e >= emin {
            (((e + f.bias as i64) as u64) << man) | t
        } else {
            let sh = (emin - e) as u32;
            if sh > man + 1 {
                0
            } else {
                ((1u64 << man) | t) >> sh
            }
        };
        mag | if sign { f.sign_bit() as u64 } else { 0 }
    }

    /// Block `h` into the canonical inputs `out` (roles: z elements, modes, random words).
    fn vector(&self, h: u64, roles: &[(Role, u32)], rm: u64, sat: u64, out: &mut [u64]) {
        let f = &self.fin;
        let man = f.man_bits();
        let (emin, emax) = (f.emin() as i64, f.emax() as i64);
        let sub_lo = emin - man as i64;
        let span = (emax - sub_lo + 1) as u64;
        let mut r = h;
        let mut next = || {
            r = mix(r ^ GAMMA);
            r
        };
        let class = next() % 10;
        // The block's top exponent: anywhere, or (class 8) at the extremes.
        let top = match class {
            8 => {
                let k = next();
                if k & 1 == 0 {
                    emax - (k >> 1) as i64 % 3
                } else {
                    sub_lo + (k >> 1) as i64 % 12
                }
            }
            5 => sub_lo + (next() % (man as u64 + 2)) as i64,
            _ => sub_lo + (next() % span) as i64,
        };
        let spread = 1 + next() % 12;
        let lead = (next() % self.n as u64) as usize;
        let mut vals = vec![0u64; self.n];
        for (i, v) in vals.iter_mut().enumerate() {
            let sign = next() & 1 == 1;
            let t = next();
            *v = match class {
                // Uniform bit patterns.
                0 => next() & f.code_mask() as u64,
                // All zeros (either sign).
                4 => self.encode(sign, sub_lo - 2, 0),
                // Tensor-like: a window of `spread` binades below the top.
                1 | 5 | 8 => self.encode(sign, top - (t % spread) as i64, next()),
                // One outlier: the others far below it.
                2 => {
                    if i == lead {
                        self.encode(sign, top, next())
                    } else {
                        self.encode(sign, top - 8 - (t % 24) as i64, next())
                    }
                }
                // The maximum on a policy edge, the others at most as large.
                3 | 9 => {
                    let edge = self.edges[(t % self.edges.len() as u64) as usize];
                    if i == lead {
                        self.encode(sign, top, edge)
                    } else if next() % 4 == 0 {
                        self.encode(sign, top, edge.saturating_sub(next() % 4))
                    } else {
                        self.encode(sign, top - 1 - (next() % spread) as i64, next())
                    }
                }
                // Quotients on element rounding boundaries: m_r bits, then a half ulp and an
                // optional sticky bit below it.
                _ => {
                    let mr = self.fr.man_bits().min(man);
                    let keep = next() & ((1u64 << mr) - 1);
                    let rest = man - mr;
                    let mut tt = keep << rest;
                    if rest > 0 {
                        tt |= 1u64 << (rest - 1);
                        if next() & 1 == 1 && rest > 1 {
                            tt |= 1u64 << (next() % (rest - 1) as u64);
                        }
                    }
                    let e = if i == lead {
                        top
                    } else {
                        top - (t % spread) as i64
                    };
                    self.encode(sign, e, tt)
                }
            };
        }
        // Specials: NaN or infinities in random lanes, in one block in eight.
        if class != 0 && next() % 8 == 0 {
            let k = 1 + next() % self.n as u64;
            for _ in 0..k {
                let lane = (next() % self.n as u64) as usize;
                let c = next() % 4;
                vals[lane] = match c {
                    0 => f.nan_code().unwrap_or(0) as u64,
                    1 => f.pos_inf_code().unwrap_or(0) as u64,
                    2 => f.neg_inf_code().unwrap_or(0) as u64,
                    _ => (f.nan_code().unwrap_or(0) | f.sign_bit()) as u64 | 1,
                };
            }
        }
        let mut zi = 0;
        for (idx, (role, w)) in roles.iter().enumerate() {
            out[idx] = match role {
                Role::Z => {
                    let v = vals.get(zi).copied().unwrap_or(0);
                    zi += 1;
                    v
                }
                Role::Rounding => rm,
                Role::Saturation => sat,
                _ => next() & iface::width_mask(*w),
            };
        }
    }
}

/// The structured dot-product classes: one vector from one 64-bit hash.
#[derive(Clone, Debug)]
pub struct DotGen {
    n: usize,
    fx: Format,
    fy: Format,
    scale: Option<Format>,
    /// Scale codes of value 2^-8 … 2^8 (the common case), and the extremes.
    scale_mid: Vec<u32>,
    scale_ext: Vec<u32>,
    /// Special codes of x and y: NaN, ±Inf, ±0, ±max finite, smallest subnormal.
    spec_x: Vec<u32>,
    spec_y: Vec<u32>,
    /// The sum without the addend, rounded toward zero to binary32: where addends go.
    sum: golden::DotUnit,
}

fn specials(f: &Format) -> Vec<u32> {
    let mut v = Vec::new();
    v.extend(f.nan_code());
    v.extend(f.pos_inf_code());
    v.extend(f.neg_inf_code());
    v.push(0);
    let sb = if f.signed { f.sign_bit() } else { 0 };
    if f.has_neg_zero() {
        v.push(sb);
    }
    v.push(f.max_finite_mag());
    v.push(f.max_finite_mag() | sb);
    v.push(1);
    v.push(1 | sb);
    v
}

impl DotGen {
    fn new(
        shape: iface::DotShape,
        fx: Format,
        fy: Format,
        scale: Option<Format>,
    ) -> Result<DotGen, String> {
        let (mut scale_mid, mut scale_ext) = (Vec::new(), Vec::new());
        if let Some(sf) = scale {
            for c in 0..sf.num_codes() as u32 {
                let d = sf.decode(c);
                let e = d.exact();
                match e.class {
                    golden::ExactClass::Finite => {
                        let l = e.log2_floor();
                        if (-8..=8).contains(&l) {
                            scale_mid.push(c);
                        }
                        if l.abs() >= sf.emax() - 1 || c < 2 {
                            scale_ext.push(c);
                        }
                    }
                    _ => scale_ext.push(c),
                }
            }
            if scale_mid.is_empty() {
                scale_mid.push(0);
            }
            if scale_ext.is_empty() {
                scale_ext.push(0);
            }
        }
        let sum = golden::DotUnit::new(fx, fy, shape.n as usize, scale, false, Format::BINARY32)?;
        Ok(DotGen {
            n: shape.n as usize,
            fx,
            fy,
            scale,
            scale_mid,
            scale_ext,
            spec_x: specials(&fx),
            spec_y: specials(&fy),
            sum,
        })
    }

    /// A code of `f` with the given sign, biased exponent field and trailing bits.
    fn code(f: &Format, sign: bool, ef: u64, t: u64) -> u32 {
        let man = f.man_bits();
        let emax = (1u64 << f.exp_bits()) - 1;
        let s = if f.signed && sign { f.sign_bit() } else { 0 };
        s | ((ef.min(emax) as u32) << man) | (t as u32 & ((1u32 << man) - 1))
    }

    /// One vector from the hash `h`, written in the order of `roles`.
    fn vector(&self, h: u64, roles: &[(Role, u32)], rm: u64, sat: u64, out: &mut [u64]) {
        let n = self.n;
        let mut r = h;
        let mut next = || {
            r = mix(r ^ GAMMA);
            r
        };
        let (fx, fy) = (self.fx, self.fy);
        let mut xs = [0u32; golden::MAX_DOT_N];
        let mut ys = [0u32; golden::MAX_DOT_N];
        for i in 0..n {
            xs[i] = next() as u32 & fx.code_mask();
            ys[i] = next() as u32 & fy.code_mask();
        }
        let class = h % 8;
        let ebx = (1u64 << fx.exp_bits()) - 1;
        let eby = (1u64 << fy.exp_bits()) - 1;
        let neg = |f: &Format, c: u32| if f.signed { c ^ f.sign_bit() } else { c };
        match class {
            1 | 2 => {
                // Exact (1) or near (2) cancellation: pairs x·y, −x·y; one small lane left.
                for j in 0..n / 2 {
                    xs[2 * j + 1] = neg(&fx, xs[2 * j]);
                    ys[2 * j + 1] = ys[2 * j];
                    if class == 2 && next() % 3 == 0 {
                        let d = [1u32, 2, u32::MAX][(next() % 3) as usize];
                        xs[2 * j + 1] = xs[2 * j + 1].wrapping_add(d) & fx.code_mask();
                    }
                }
                if n % 2 == 1 && next() % 2 == 0 {
                    xs[n - 1] = Self::code(&fx, next() % 2 == 0, next() % 3, next());
                }
            }
            3 => {
                // One large product, the others around 2^-24 … 2^-30 below it: the rounding
                // position of a binary32 sum (ties, sticky).
                let bx = ebx / 2 + next() % (ebx / 2).max(1);
                let by = eby / 2 + next() % (eby / 2).max(1);
                xs[0] = Self::code(&fx, next() % 2 == 0, bx, next());
                ys[0] = Self::code(&fy, false, by, next());
                for i in 1..n {
                    let d = 22 + next() % 10;
                    let ex = next() % (ebx + 1);
                    let target = (bx + by) as i64 - d as i64 - ex as i64;
                    let ey = target.clamp(0, eby as i64) as u64;
                    let t = if next() % 2 == 0 { 0 } else { next() };
                    xs[i] = Self::code(&fx, next() % 2 == 0, ex, t);
                    ys[i] = Self::code(&fy, false, ey, next() & 1);
                }
            }
            4 => {
                // Specials in one or two lanes.
                for _ in 0..1 + next() % 2 {
                    let i = (next() % n as u64) as usize;
                    if next() % 2 == 0 {
                        xs[i] = self.spec_x[(next() % self.spec_x.len() as u64) as usize];
                    } else {
                        ys[i] = self.spec_y[(next() % self.spec_y.len() as u64) as usize];
                    }
                }
            }
            5 => {
                // Overflow: every lane near the largest magnitude, one sign.
                let s = next() % 2 == 0;
                for i in 0..n {
                    xs[i] = fx.max_finite_mag().wrapping_sub((next() % 3) as u32)
                        | if s && fx.signed { fx.sign_bit() } else { 0 };
                    ys[i] = fy.max_finite_mag().wrapping_sub((next() % 3) as u32);
                }
            }
            6 => {
                // Subnormal and tiny products.
                for i in 0..n {
                    xs[i] = Self::code(&fx, next() % 2 == 0, next() % 2, next());
                    ys[i] = Self::code(&fy, false, next() % 3, next());
                }
            }
            _ => {}
        }
        let (mut sx, mut sy) = (0u32, 0u32);
        if let Some(sf) = self.scale {
            let pick = |v: &[u32], k: u64| v[(k % v.len() as u64) as usize];
            let ext = class == 7 || class == 5 || next() % 16 == 0;
            if ext {
                sx = pick(&self.scale_ext, next());
                sy = pick(&self.scale_ext, next());
            } else if next() % 8 == 0 {
                sx = next() as u32 & sf.code_mask();
                sy = next() as u32 & sf.code_mask();
            } else {
                sx = pick(&self.scale_mid, next());
                sy = pick(&self.scale_mid, next());
            }
        }
        // Addend: uniform, special, the negated sum ± a few units, or near the sum.
        let zc = next() % 4;
        let z = match zc {
            0 => next() as u32,
            1 => [
                0u32,
                0x8000_0000,
                0x7F80_0000,
                0xFF80_0000,
                0x7FC0_0000,
                0x7FA0_0000,
                1,
                0x8000_0001,
                0x7F7F_FFFF,
                0xFF7F_FFFF,
                0x0080_0000,
                0x007F_FFFF,
            ][(next() % 12) as usize],
            _ => {
                let spec = golden::Spec::ieee(golden::Rounding::Rtz);
                let (p, _) = self.sum.eval(&xs[..n], &ys[..n], sx, sy, 0, &spec);
                if zc == 2 {
                    (p ^ 0x8000_0000)
                        .wrapping_add_signed([0i32, 0, 1, -1, 2, -3][(next() % 6) as usize])
                } else {
                    let e = ((p >> 23) & 0xFF) as i64 + (next() % 61) as i64 - 30;
                    (next() as u32 & 0x807F_FFFF) | ((e.clamp(0, 254) as u32) << 23)
                }
            }
        };
        let (mut xi, mut yi) = (0usize, 0usize);
        for (idx, (role, w)) in roles.iter().enumerate() {
            out[idx] = match role {
                Role::X => {
                    xi += 1;
                    xs[xi - 1] as u64
                }
                Role::Y => {
                    yi += 1;
                    ys[yi - 1] as u64
                }
                Role::ScaleX => sx as u64,
                Role::ScaleY => sy as u64,
                Role::Z => z as u64,
                Role::Rounding => rm,
                Role::Saturation => sat,
                _ => next() & iface::width_mask(*w),
            };
        }
    }
}
