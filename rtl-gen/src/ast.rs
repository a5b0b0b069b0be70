//! The typed Verilog AST: width-checked expressions ([`Expr`]) and a module builder
//! ([`ModuleBuilder`]) that names signals, places pipeline registers and is emitted as plain
//! Verilog-2005 by [`crate::emit`].
//!
//! Every expression carries its width. Constructors check operand widths and fold constants
//! (so that modes fixed at generation give the smallest logic); a width mismatch does not
//! panic, it becomes an [`Node::Error`] node that [`ModuleBuilder::finish`] reports as
//! [`crate::GenError::Internal`]. All values are unsigned bit vectors; signed quantities are
//! two's complement vectors handled with explicit sign extension ([`Expr::sext`]) and
//! [`Expr::slt`].

/// Index of a signal in its [`ModuleBuilder`].
pub type SigId = usize;

/// Largest width of any expression (constants are held in a `u128`).
pub const MAX_WIDTH: u32 = 128;

/// Binary operators with a result as wide as their (equal-width) operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `a + b` (modulo 2^width).
    Add,
    /// `a - b` (modulo 2^width).
    Sub,
    /// `a & b`.
    And,
    /// `a | b`.
    Or,
    /// `a ^ b`.
    Xor,
}

/// Unsigned comparisons (1-bit result).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// Reduction operators (1-bit result).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    /// `&x`
    And,
    /// `|x`
    Or,
}

/// Shift direction (logical shifts, result as wide as the shifted operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftDir {
    /// `a << n`
    Left,
    /// `a >> n`
    Right,
}

/// The name of a named constant, and for a signed one (a bias, an exponent bound or offset,
/// stored in two's complement) its value and what it is, for the `localparam`'s comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstName {
    /// The `localparam` name.
    pub name: String,
    /// Signed value and meaning (`None` for a special code, whose hex value says it all).
    pub signed: Option<(i64, String)>,
}

impl std::fmt::Display for ConstName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// Expression tree node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A constant; with a name, printed as that name and declared once as a `localparam`
    /// (named special codes: `E4M3_NAN`, `BINARY32_POS_INF`, …; signed constants such as
    /// biases and exponent offsets: `E4M3_BIAS`, `ROUND_EMIN`, …).
    Const(u128, Option<std::sync::Arc<ConstName>>),
    /// A whole signal.
    Sig(SigId),
    /// Part select `sig[hi:lo]`.
    Slice(SigId, u32, u32),
    /// Concatenation, most significant part first.
    Concat(Vec<Expr>),
    /// Replication `{n{x}}`.
    Repl(u32, Box<Expr>),
    /// Bitwise not.
    Not(Box<Expr>),
    /// Binary operator.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// Comparison.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// Reduction.
    Red(RedOp, Box<Expr>),
    /// `sel ? a : b`.
    Mux(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Logical shift by a variable amount.
    Shift(ShiftDir, Box<Expr>, Box<Expr>),
    /// A decision table: `case (sel) v: arm; ... default: d; endcase` (only as a signal's
    /// whole definition; emitted as an `always @*` block).
    Case(Box<Expr>, Vec<(u128, Expr)>, Box<Expr>),
    /// A construction error (width mismatch …), reported by [`ModuleBuilder::finish`].
    Error(String),
}

/// A width-checked expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    /// The tree.
    pub node: Node,
    /// Width in bits (1..=[`MAX_WIDTH`]; 0 only for errors).
    pub width: u32,
}

/// Mask of `w` low bits.
pub fn mask(w: u32) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

/// Bits needed to hold the unsigned value `v` (at least 1).
pub fn ubits(v: u128) -> u32 {
    (128 - v.leading_zeros()).max(1)
}

/// Bits of a two's complement vector holding every value in `lo..=hi`.
pub fn sbits(lo: i64, hi: i64) -> u32 {
    let mut w = 1;
    while w < 64 {
        let min = -(1i64 << (w - 1));
        let max = (1i64 << (w - 1)) - 1;
        if lo >= min && hi <= max {
            break;
        }
        w += 1;
    }
    w
}

fn err(msg: impl Into<String>) -> Expr {
    Expr {
        node: Node::Error(msg.into()),
        width: 0,
    }
}

impl Expr {
    /// The constant `value` on `width` bits.
    pub fn c(value: u128, width: u32) -> Expr {
        if width == 0 || width > MAX_WIDTH {
            return err(format!("constant width {width} out of range"));
        }
        if value & !mask(width) != 0 {
            return err(format!("constant {value} does not fit in {width} bits"));
        }
        Expr {
            node: Node::Const(value, None),
            width,
        }
    }

    /// The constant `value` on `width` bits, printed as `name` (a `localparam` of the module,
    /// in hex). It folds like any constant (a fold gives an unnamed constant).
    pub fn named(name: &str, value: u128, width: u32) -> Expr {
        let mut e = Expr::c(value, width);
        if let Node::Const(_, n) = &mut e.node {
            *n = Some(std::sync::Arc::new(ConstName {
                name: name.to_string(),
                signed: None,
            }));
        }
        e
    }

    /// The two's complement constant `value` on `width` bits, printed as `name`: a
    /// `localparam` whose comment gives the signed value and `what` it is (a bias, an
    /// exponent bound or offset), so that no offset-binary or negative number stands bare
    /// in the Verilog. It folds like any constant.
    pub fn named_i(name: &str, value: i64, width: u32, what: &str) -> Expr {
        let mut e = Expr::ci(value, width);
        if let Node::Const(_, n) = &mut e.node {
            *n = Some(std::sync::Arc::new(ConstName {
                name: name.to_string(),
                signed: Some((value, what.to_string())),
            }));
        }
        e
    }

    /// The two's complement constant `value` on `width` bits.
    pub fn ci(value: i64, width: u32) -> Expr {
        if width == 0 || width > 64 {
            return err(format!("signed constant width {width} out of range"));
        }
        let lo = if width == 64 {
            i64::MIN
        } else {
            -(1i64 << (width - 1))
        };
        let hi = if width == 64 {
            i64::MAX
        } else {
            (1i64 << (width - 1)) - 1
        };
        if value < lo || value > hi {
            return err(format!(
                "signed constant {value} does not fit in {width} bits"
            ));
        }
        Expr::c((value as u128) & mask(width), width)
    }

    /// 1-bit constant.
    pub fn bit_c(b: bool) -> Expr {
        Expr::c(b as u128, 1)
    }

    /// The constant value, if this is a constant.
    pub fn const_val(&self) -> Option<u128> {
        match self.node {
            Node::Const(v, _) => Some(v),
            _ => None,
        }
    }

    /// Whether this is the constant `v`.
    pub fn is_const(&self, v: u128) -> bool {
        self.const_val() == Some(v)
    }

    /// The first construction error in the tree, if any.
    pub fn error(&self) -> Option<String> {
        let mut out = None;
        self.visit(&mut |e| {
            if let Node::Error(m) = &e.node {
                if out.is_none() {
                    out = Some(m.clone());
                }
            }
        });
        out
    }

    /// Visits every node (pre-order).
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match &self.node {
            Node::Const(..) | Node::Sig(_) | Node::Slice(..) | Node::Error(_) => {}
            Node::Concat(v) => v.iter().for_each(|e| e.visit(f)),
            Node::Repl(_, a) | Node::Not(a) | Node::Red(_, a) => a.visit(f),
            Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::Shift(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Node::Mux(s, a, b) => {
                s.visit(f);
                a.visit(f);
                b.visit(f);
            }
            Node::Case(s, arms, d) => {
                s.visit(f);
                arms.iter().for_each(|(_, e)| e.visit(f));
                d.visit(f);
            }
        }
    }

    /// Rewrites signal references (`Sig`/`Slice`) through `f(sig) -> replacement sig`.
    pub fn map_sigs(&self, f: &dyn Fn(SigId) -> SigId) -> Expr {
        let node = match &self.node {
            Node::Sig(s) => Node::Sig(f(*s)),
            Node::Slice(s, h, l) => Node::Slice(f(*s), *h, *l),
            _ => return self.map_children(&|e| e.map_sigs(f)),
        };
        Expr {
            node,
            width: self.width,
        }
    }

    /// This node with each direct operand `e` replaced by `f(e)` (leaves are returned as
    /// they are). Widths are kept: `f` must preserve its operand's width.
    pub fn map_children(&self, f: &dyn Fn(&Expr) -> Expr) -> Expr {
        let b = |e: &Expr| Box::new(f(e));
        let node = match &self.node {
            Node::Sig(_) | Node::Slice(..) | Node::Const(..) | Node::Error(_) => self.node.clone(),
            Node::Concat(v) => Node::Concat(v.iter().map(f).collect()),
            Node::Repl(n, a) => Node::Repl(*n, b(a)),
            Node::Not(a) => Node::Not(b(a)),
            Node::Red(o, a) => Node::Red(*o, b(a)),
            Node::Bin(o, x, y) => Node::Bin(*o, b(x), b(y)),
            Node::Cmp(o, x, y) => Node::Cmp(*o, b(x), b(y)),
            Node::Shift(o, x, y) => Node::Shift(*o, b(x), b(y)),
            Node::Mux(s, x, y) => Node::Mux(b(s), b(x), b(y)),
            Node::Case(s, arms, d) => {
                Node::Case(b(s), arms.iter().map(|(v, e)| (*v, f(e))).collect(), b(d))
            }
        };
        Expr {
            node,
            width: self.width,
        }
    }

    fn is_err(&self) -> bool {
        matches!(self.node, Node::Error(_))
    }

    /// Part select `self[hi:lo]`. Works on signals, slices, constants and concatenations;
    /// any other expression must be named first ([`ModuleBuilder::wire`]).
    pub fn slice(&self, hi: u32, lo: u32) -> Expr {
        if self.is_err() {
            return self.clone();
        }
        if hi < lo || hi >= self.width {
            return err(format!(
                "slice [{hi}:{lo}] of a {}-bit expression",
                self.width
            ));
        }
        let w = hi - lo + 1;
        if w == self.width {
            return self.clone();
        }
        match &self.node {
            Node::Const(v, _) => Expr::c((v >> lo) & mask(w), w),
            Node::Sig(s) => Expr {
                node: Node::Slice(*s, hi, lo),
                width: w,
            },
            Node::Slice(s, _, l) => Expr {
                node: Node::Slice(*s, l + hi, l + lo),
                width: w,
            },
            Node::Concat(parts) => {
                // parts are MSB first; walk from the LSB end.
                let mut pos = 0u32;
                let mut picked: Vec<Expr> = Vec::new();
                for part in parts.iter().rev() {
                    let plo = pos;
                    let phi = pos + part.width - 1;
                    pos += part.width;
                    if phi < lo || plo > hi {
                        continue;
                    }
                    let a = lo.max(plo) - plo;
                    let b = hi.min(phi) - plo;
                    picked.push(part.slice(b, a));
                }
                picked.reverse();
                concat(&picked)
            }
            Node::Repl(_, a) if a.width == 1 => Expr::repl(w, a),
            _ => err(format!(
                "slice [{hi}:{lo}] of an unnamed {}-bit expression; name it with a wire first",
                self.width
            )),
        }
    }

    /// Bit `i`.
    pub fn bit(&self, i: u32) -> Expr {
        self.slice(i, i)
    }

    /// Most significant bit.
    pub fn msb(&self) -> Expr {
        self.bit(self.width.saturating_sub(1))
    }

    /// Replication `{n{x}}`.
    pub fn repl(n: u32, x: &Expr) -> Expr {
        if x.is_err() {
            return x.clone();
        }
        if n == 0 || n * x.width > MAX_WIDTH {
            return err(format!("replication {n} x {} bits", x.width));
        }
        if n == 1 {
            return x.clone();
        }
        if let Some(v) = x.const_val() {
            let mut r = 0u128;
            for _ in 0..n {
                r = (r << x.width) | v;
            }
            return Expr::c(r, n * x.width);
        }
        Expr {
            node: Node::Repl(n, Box::new(x.clone())),
            width: n * x.width,
        }
    }

    /// Zero extension to `w` bits (`w` ≥ width).
    pub fn zext(&self, w: u32) -> Expr {
        if self.is_err() || w == self.width {
            return self.clone();
        }
        if w < self.width {
            return err(format!("zext of {} bits to {w}", self.width));
        }
        concat(&[Expr::c(0, w - self.width), self.clone()])
    }

    /// Sign extension to `w` bits (`w` ≥ width).
    pub fn sext(&self, w: u32) -> Expr {
        if self.is_err() || w == self.width {
            return self.clone();
        }
        if w < self.width {
            return err(format!("sext of {} bits to {w}", self.width));
        }
        concat(&[Expr::repl(w - self.width, &self.msb()), self.clone()])
    }

    /// Bitwise not.
    pub fn not(&self) -> Expr {
        if self.is_err() {
            return self.clone();
        }
        match &self.node {
            Node::Const(v, _) => Expr::c(!v & mask(self.width), self.width),
            Node::Not(a) => (**a).clone(),
            _ => Expr {
                node: Node::Not(Box::new(self.clone())),
                width: self.width,
            },
        }
    }

    fn bin(op: BinOp, a: &Expr, b: &Expr) -> Expr {
        if a.is_err() {
            return a.clone();
        }
        if b.is_err() {
            return b.clone();
        }
        if a.width != b.width {
            return err(format!("{op:?} of {} and {} bits", a.width, b.width));
        }
        let w = a.width;
        let m = mask(w);
        if let (Some(x), Some(y)) = (a.const_val(), b.const_val()) {
            let v = match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::And => x & y,
                BinOp::Or => x | y,
                BinOp::Xor => x ^ y,
            };
            return Expr::c(v & m, w);
        }
        // Identities with one constant operand.
        for (k, other, k_first) in [(a, b, true), (b, a, false)] {
            if let Some(v) = k.const_val() {
                match op {
                    BinOp::Add | BinOp::Or | BinOp::Xor if v == 0 => return other.clone(),
                    BinOp::Sub if v == 0 && !k_first => return other.clone(),
                    BinOp::And if v == 0 => return Expr::c(0, w),
                    BinOp::And if v == m => return other.clone(),
                    BinOp::Or if v == m => return Expr::c(m, w),
                    BinOp::Xor if v == m => return other.not(),
                    _ => {}
                }
            }
        }
        if a == b {
            match op {
                BinOp::And | BinOp::Or => return a.clone(),
                BinOp::Xor | BinOp::Sub => return Expr::c(0, w),
                BinOp::Add => {}
            }
        }
        Expr {
            node: Node::Bin(op, Box::new(a.clone()), Box::new(b.clone())),
            width: w,
        }
    }

    /// `self + b`.
    pub fn add(&self, b: &Expr) -> Expr {
        Expr::bin(BinOp::Add, self, b)
    }
    /// `self - b`.
    pub fn sub(&self, b: &Expr) -> Expr {
        Expr::bin(BinOp::Sub, self, b)
    }
    /// `self & b`.
    pub fn and(&self, b: &Expr) -> Expr {
        Expr::bin(BinOp::And, self, b)
    }
    /// `self | b`.
    pub fn or(&self, b: &Expr) -> Expr {
        Expr::bin(BinOp::Or, self, b)
    }
    /// `self ^ b`.
    pub fn xor(&self, b: &Expr) -> Expr {
        Expr::bin(BinOp::Xor, self, b)
    }

    fn cmp(op: CmpOp, a: &Expr, b: &Expr) -> Expr {
        if a.is_err() {
            return a.clone();
        }
        if b.is_err() {
            return b.clone();
        }
        if a.width != b.width {
            return err(format!("{op:?} of {} and {} bits", a.width, b.width));
        }
        let m = mask(a.width);
        if let (Some(x), Some(y)) = (a.const_val(), b.const_val()) {
            let r = match op {
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
                CmpOp::Lt => x < y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Ge => x >= y,
            };
            return Expr::bit_c(r);
        }
        // Trivial comparisons against the ends of the range.
        if let Some(y) = b.const_val() {
            match op {
                CmpOp::Lt if y == 0 => return Expr::bit_c(false),
                CmpOp::Ge if y == 0 => return Expr::bit_c(true),
                CmpOp::Le if y == m => return Expr::bit_c(true),
                CmpOp::Gt if y == m => return Expr::bit_c(false),
                CmpOp::Eq | CmpOp::Ne if a.width == 1 => {
                    let same = (y == 1) == (op == CmpOp::Eq);
                    return if same { a.clone() } else { a.not() };
                }
                CmpOp::Eq if y == 0 => return a.red_or().not(),
                CmpOp::Ne if y == 0 => return a.red_or(),
                CmpOp::Eq if y == m => return a.red_and(),
                CmpOp::Gt if y == 0 => return a.red_or(),
                _ => {}
            }
        }
        if a == b {
            return Expr::bit_c(matches!(op, CmpOp::Eq | CmpOp::Le | CmpOp::Ge));
        }
        Expr {
            node: Node::Cmp(op, Box::new(a.clone()), Box::new(b.clone())),
            width: 1,
        }
    }

    /// `self == b`.
    pub fn eq(&self, b: &Expr) -> Expr {
        Expr::cmp(CmpOp::Eq, self, b)
    }
    /// `self != b`.
    pub fn ne(&self, b: &Expr) -> Expr {
        Expr::cmp(CmpOp::Ne, self, b)
    }
    /// Unsigned `self < b`.
    pub fn lt(&self, b: &Expr) -> Expr {
        Expr::cmp(CmpOp::Lt, self, b)
    }
    /// Unsigned `self <= b`.
    pub fn le(&self, b: &Expr) -> Expr {
        Expr::cmp(CmpOp::Le, self, b)
    }
    /// Unsigned `self > b`.
    pub fn gt(&self, b: &Expr) -> Expr {
        Expr::cmp(CmpOp::Gt, self, b)
    }
    /// Unsigned `self >= b`.
    pub fn ge(&self, b: &Expr) -> Expr {
        Expr::cmp(CmpOp::Ge, self, b)
    }
    /// `self == v` (constant of the same width).
    pub fn eq_c(&self, v: u128) -> Expr {
        if v & !mask(self.width) != 0 {
            return Expr::bit_c(false);
        }
        self.eq(&Expr::c(v, self.width.max(1)))
    }

    /// Two's complement `self < b` (both the same width), as an unsigned compare with the
    /// sign bits flipped. `self` and `b` must be sliceable (signals, slices or constants).
    pub fn slt(&self, b: &Expr) -> Expr {
        if self.width != b.width {
            return err(format!("slt of {} and {} bits", self.width, b.width));
        }
        let flip = |x: &Expr| -> Expr {
            if x.width == 1 {
                return x.not();
            }
            // A named signed constant stays named: `NAME_OB`, its offset-binary form.
            if let Node::Const(v, Some(n)) = &x.node {
                if let Some((i, what)) = &n.signed {
                    let mut e = Expr::c(v ^ (1u128 << (x.width - 1)), x.width);
                    if let Node::Const(_, slot) = &mut e.node {
                        *slot = Some(std::sync::Arc::new(ConstName {
                            name: format!("{}_OB", n.name),
                            signed: Some((
                                *i,
                                format!("{what}; offset binary (sign bit flipped) for an unsigned compare"),
                            )),
                        }));
                    }
                    return e;
                }
            }
            concat(&[x.msb().not(), x.slice(x.width - 2, 0)])
        };
        flip(self).lt(&flip(b))
    }

    fn red(op: RedOp, a: &Expr) -> Expr {
        if a.is_err() {
            return a.clone();
        }
        if a.width == 1 {
            return a.clone();
        }
        if let Some(v) = a.const_val() {
            return Expr::bit_c(match op {
                RedOp::And => v == mask(a.width),
                RedOp::Or => v != 0,
            });
        }
        if let Node::Concat(parts) = &a.node {
            // Drop constant parts that cannot change the result.
            let mut rest: Vec<Expr> = Vec::new();
            for p in parts {
                match (op, p.const_val()) {
                    (RedOp::Or, Some(0)) => {}
                    (RedOp::Or, Some(_)) => return Expr::bit_c(true),
                    (RedOp::And, Some(v)) if v == mask(p.width) => {}
                    (RedOp::And, Some(_)) => return Expr::bit_c(false),
                    _ => rest.push(p.clone()),
                }
            }
            if rest.len() < parts.len() {
                if rest.is_empty() {
                    return Expr::bit_c(op == RedOp::And);
                }
                return Expr::red(op, &concat(&rest));
            }
        }
        Expr {
            node: Node::Red(op, Box::new(a.clone())),
            width: 1,
        }
    }

    /// `|self`.
    pub fn red_or(&self) -> Expr {
        Expr::red(RedOp::Or, self)
    }
    /// `&self`.
    pub fn red_and(&self) -> Expr {
        Expr::red(RedOp::And, self)
    }

    /// `sel ? a : b` (`sel` 1 bit, `a` and `b` the same width).
    pub fn mux(sel: &Expr, a: &Expr, b: &Expr) -> Expr {
        for x in [sel, a, b] {
            if x.is_err() {
                return x.clone();
            }
        }
        if sel.width != 1 || a.width != b.width {
            return err(format!(
                "mux with a {}-bit select and {}/{}-bit arms",
                sel.width, a.width, b.width
            ));
        }
        match sel.const_val() {
            Some(1) => return a.clone(),
            Some(_) => return b.clone(),
            None => {}
        }
        if a == b {
            return a.clone();
        }
        if a.width == 1 {
            match (a.const_val(), b.const_val()) {
                (Some(1), Some(0)) => return sel.clone(),
                (Some(0), Some(1)) => return sel.not(),
                (Some(0), None) => return sel.not().and(b),
                (Some(1), None) => return sel.or(b),
                (None, Some(0)) => return sel.and(a),
                (None, Some(1)) => return sel.not().or(a),
                _ => {}
            }
        }
        Expr {
            node: Node::Mux(
                Box::new(sel.clone()),
                Box::new(a.clone()),
                Box::new(b.clone()),
            ),
            width: a.width,
        }
    }

    /// Logical shift of `self` by the unsigned `amount`.
    pub fn shift(&self, dir: ShiftDir, amount: &Expr) -> Expr {
        if self.is_err() {
            return self.clone();
        }
        if amount.is_err() {
            return amount.clone();
        }
        if let Some(n) = amount.const_val() {
            let w = self.width;
            if n == 0 {
                return self.clone();
            }
            if n >= w as u128 {
                return Expr::c(0, w);
            }
            let n = n as u32;
            let folded = match dir {
                ShiftDir::Left => concat(&[self.slice(w - 1 - n, 0), Expr::c(0, n)]),
                ShiftDir::Right => concat(&[Expr::c(0, n), self.slice(w - 1, n)]),
            };
            if folded.error().is_none() {
                return folded;
            }
        }
        Expr {
            node: Node::Shift(dir, Box::new(self.clone()), Box::new(amount.clone())),
            width: self.width,
        }
    }

    /// `self << amount`.
    pub fn shl(&self, amount: &Expr) -> Expr {
        self.shift(ShiftDir::Left, amount)
    }
    /// `self >> amount`.
    pub fn shr(&self, amount: &Expr) -> Expr {
        self.shift(ShiftDir::Right, amount)
    }

    /// A decision table on `sel`: `arms` (value → expression) and a default, all the same width.
    pub fn case(sel: &Expr, arms: Vec<(u128, Expr)>, default: &Expr) -> Expr {
        if sel.is_err() {
            return sel.clone();
        }
        if default.is_err() {
            return default.clone();
        }
        for (v, e) in &arms {
            if e.is_err() {
                return e.clone();
            }
            if e.width != default.width || v & !mask(sel.width) != 0 {
                return err("case arm width or value mismatch");
            }
        }
        if let Some(v) = sel.const_val() {
            return arms
                .iter()
                .find(|(a, _)| *a == v)
                .map(|(_, e)| e.clone())
                .unwrap_or_else(|| default.clone());
        }
        Expr {
            node: Node::Case(Box::new(sel.clone()), arms, Box::new(default.clone())),
            width: default.width,
        }
    }

    /// Delay estimate of this node alone (not counting operands, nor the fan-out of the
    /// signals it reads: [`crate::pipeline::depths`] adds that), in the pipeliner's unit, a
    /// tenth of a logic level ([`delay`]). Used to place pipeline registers.
    pub fn cost(&self) -> u32 {
        use delay::*;
        // bits needed to write w - 1 (a shift by up to w - 1 positions), at least 1
        let lg = |w: u32| 32 - w.saturating_sub(1).max(1).leading_zeros();
        // LUT4 levels of a tree of fan-in w: ⌈log4 w⌉
        let log4 = |w: u32| lg(w).div_ceil(2);
        match &self.node {
            Node::Const(..)
            | Node::Sig(_)
            | Node::Slice(..)
            | Node::Concat(_)
            | Node::Repl(..)
            | Node::Not(_)
            | Node::Error(_) => 0,
            // Adders and magnitude compares map to carry chains (ECP5 CCU2C, iCE40
            // SB_CARRY): a fixed cost to enter and leave the chain plus a ripple per bit.
            Node::Bin(BinOp::Add | BinOp::Sub, a, _)
            | Node::Cmp(CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, a, _) => {
                CARRY_IN_OUT + a.width.div_ceil(CARRY_BITS_PER_TENTH)
            }
            // Bitwise logic: one LUT per bit (yosys/abc merge it with its neighbours).
            Node::Bin(..) => LEVEL,
            // Equality: one LUT compares two bit pairs, then an AND tree of fan-in 4.
            Node::Cmp(_, a, _) if a.width <= 2 => LEVEL,
            Node::Cmp(_, a, _) => LEVEL * (1 + log4(a.width.div_ceil(2))),
            Node::Red(_, a) => LEVEL * log4(a.width).max(1),
            // A 2:1 mux is one LUT3; a wide select's fan-out is the reader's load.
            Node::Mux(..) => LEVEL,
            // A barrel shift: one 2:1 mux level per bit of the amount that can move a bit of
            // the operand, plus one when larger amounts must clear the result.
            Node::Shift(_, a, n) => {
                // constant bits of the amount (`{n_hi, 2'b00}`) select nothing
                let var = match &n.node {
                    Node::Concat(v) => v
                        .iter()
                        .filter(|x| x.const_val().is_none())
                        .map(|x| x.width)
                        .sum(),
                    _ => n.width,
                };
                let useful = var.min(lg(a.width));
                LEVEL * (useful + (var > useful) as u32)
            }
            // A decision table: a function of the selector's bits, about one LUT4 level per
            // three selector bits beyond the first (LUT4 trees; ECP5's PFUMX makes LUT5s),
            // plus a mux level when an arm is not a constant.
            Node::Case(s, arms, d) => {
                let lut = s.width.saturating_sub(1).div_ceil(3).max(1);
                let data =
                    arms.iter().any(|(_, a)| a.const_val().is_none()) || d.const_val().is_none();
                LEVEL * (lut + data as u32)
            }
        }
    }
}

/// The pipeliner's delay model: costs in tenths of a logic level, where a level is one LUT4
/// and the route into it. The constants come from nextpnr's ECP5 timing of the committed
/// QoR cores (critical paths of `fp8gen synth -u fma --keep`, report.json; docs/qor.md
/// "Delay model"): LUT4 0.24 ns plus a route of 0.5 to 1.0 ns, about 1.05 ns a level; a
/// CCU2C carry chain costs 0.45 ns to enter, 0.071 ns per 2 bits and 0.44 ns to leave. The
/// ratio of carry ripple to a LUT level is alike on iCE40 (SB_CARRY); `fpga::delay` turns
/// levels into nanoseconds per target.
pub mod delay {
    /// One LUT4 level with the route into it.
    pub const LEVEL: u32 = 10;
    /// A carry chain's fixed cost: the route and LUT into its first cell (one level) and the
    /// carry-out to the sum output (0.44 ns).
    pub const CARRY_IN_OUT: u32 = 14;
    /// Carry-chain bits per tenth of a level (0.036 ns a bit against 1.05 ns a level).
    pub const CARRY_BITS_PER_TENTH: u32 = 3;
    /// Extra routing delay of a net per factor of 4 in its load beyond 4 LUT inputs (a mux
    /// select driving 64 bits: 2 · 2 = 0.4 level); see [`crate::pipeline::fanout_delay`].
    pub const FANOUT_PER_LOG4: u32 = 2;
}

/// Concatenation, most significant part first; adjacent constants are merged.
pub fn concat(parts: &[Expr]) -> Expr {
    let mut out: Vec<Expr> = Vec::new();
    let mut w = 0u32;
    for p in parts {
        if p.is_err() {
            return p.clone();
        }
        let flat: Vec<Expr> = match &p.node {
            Node::Concat(v) => v.clone(),
            _ => vec![p.clone()],
        };
        for q in flat {
            w += q.width;
            if let (Some(last), Some(v)) = (out.last(), q.const_val()) {
                if let Some(lv) = last.const_val() {
                    if last.width + q.width <= MAX_WIDTH {
                        let nw = last.width + q.width;
                        out.pop();
                        out.push(Expr::c((lv << q.width) | v, nw));
                        continue;
                    }
                }
            }
            // Merge adjacent slices of the same signal.
            if let (Some(Node::Slice(s1, _h1, l1)), Node::Slice(s2, h2, l2)) =
                (out.last().map(|e| &e.node), &q.node)
            {
                if s1 == s2 && *l1 == h2 + 1 {
                    let (s, l) = (*s1, *l2);
                    let last = out.pop().unwrap_or_else(|| err("unreachable"));
                    let nw = last.width + q.width;
                    out.push(Expr {
                        node: Node::Slice(s, l + nw - 1, l),
                        width: nw,
                    });
                    continue;
                }
            }
            out.push(q);
        }
    }
    if w == 0 || w > MAX_WIDTH {
        return err(format!("concatenation of {w} bits"));
    }
    if out.len() == 1 {
        return out.pop().unwrap_or_else(|| err("unreachable"));
    }
    Expr {
        node: Node::Concat(out),
        width: w,
    }
}

/// OR of 1-bit terms (0 when empty).
pub fn any(terms: &[Expr]) -> Expr {
    terms.iter().fold(Expr::bit_c(false), |acc, t| acc.or(t))
}

/// AND of 1-bit terms (1 when empty).
pub fn all(terms: &[Expr]) -> Expr {
    terms.iter().fold(Expr::bit_c(true), |acc, t| acc.and(t))
}

/// What a signal is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SigKind {
    /// Data input port.
    Input,
    /// Output port driven by an expression.
    Output(Expr),
    /// Combinational wire.
    Wire(Expr),
    /// Pipeline register: `src` (a signal or a slice of one) delayed by one clock
    /// (created by the pipeliner).
    Reg(Expr),
    /// A state register of the design (an accumulator, a sticky flag, a lane counter …),
    /// created by [`ModuleBuilder::state`]: on every rising edge of `clk_i` it loads `next`
    /// when `enable` is 1 (always when `None`); with `reset: Some(v)` a synchronous
    /// active-low `rst_ni` sets it to the constant `v` first (`None`: no reset, a data
    /// register whose validity travels elsewhere). `next` and `enable` may read signals
    /// defined after the register (the register breaks the loop), unlike a wire's
    /// definition. Printed in the module's one state `always` block.
    State {
        /// The value loaded at the clock edge (an error node until
        /// [`ModuleBuilder::set_next`] sets it).
        next: Expr,
        /// Synchronous reset value (`rst_ni = 0`), or no reset.
        reset: Option<u128>,
        /// Load enable (1 bit); `None` loads every cycle.
        enable: Option<Expr>,
    },
    /// An output port of a module instance, driven by the instance: the
    /// [`Item::Instance`] that lists this signal among its outputs declares and connects it.
    InstanceOut,
}

/// A port of a module: of a finished [`crate::emit::Netlist`] (in declaration order), or of
/// a module that [`ModuleBuilder::instance`] instantiates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortDecl {
    /// Name.
    pub name: String,
    /// Input (true) or output.
    pub input: bool,
    /// Width.
    pub width: u32,
}

/// A handle on a state register created by [`ModuleBuilder::state`]: the signal it reads as
/// ([`StateReg::q`]) and the key [`ModuleBuilder::set_next`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateReg {
    /// The register's signal.
    pub id: SigId,
    /// Its width.
    pub width: u32,
}

impl StateReg {
    /// The register's current value (its output).
    pub fn q(&self) -> Expr {
        Expr {
            node: Node::Sig(self.id),
            width: self.width,
        }
    }
}

/// A module instance ([`Item::Instance`]): a sub-module of the same file placed in this
/// module, its ports connected by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The instantiated module's name.
    pub module: String,
    /// The instance name (`u_fma`, …).
    pub name: String,
    /// Whether the sub-module has `clk_i` and `rst_ni` (connected to this module's own,
    /// which makes this module clocked).
    pub clocked: bool,
    /// Input connections (port, driving expression), in the sub-module's port order.
    pub inputs: Vec<(String, Expr)>,
    /// Output connections (port, [`SigKind::InstanceOut`] signal), in port order.
    pub outputs: Vec<(String, SigId)>,
}

/// A named signal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signal {
    /// Verilog identifier.
    pub name: String,
    /// Width in bits.
    pub width: u32,
    /// Definition.
    pub kind: SigKind,
    /// Comment printed after the declaration.
    pub note: Option<String>,
}

/// One entry of the module body, in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A comment block (each line printed as `// line`).
    Comment(Vec<String>),
    /// A signal definition (a wire, an output's `assign`, a state register's declaration).
    Def(SigId),
    /// A module instance: declares its output signals and connects its ports. Instances are
    /// never removed as dead logic, so what drives their inputs stays live.
    Instance(Instance),
}

/// Builds one module: inputs, wires (in definition order, each referring only to earlier
/// signals), outputs; [`ModuleBuilder::finish`] pipelines it and removes dead logic.
///
/// A wrapper module may also hold state registers ([`ModuleBuilder::state`]) and instances
/// of sub-modules ([`ModuleBuilder::instance`]). The one exception to "each definition
/// refers only to earlier signals" is a state register's next value and enable
/// ([`ModuleBuilder::set_next`]), which may read any signal: the register breaks the loop.
/// Wires, outputs and instance inputs still read only earlier signals, so the module has no
/// combinational loop. Such a module is clocked (`clk_i`, `rst_ni`) and is not pipelined
/// (`finish` with `stages > 0` is an error); the cores it instantiates are.
#[derive(Clone, Debug, Default)]
pub struct ModuleBuilder {
    /// Signals (ports, wires, registers).
    pub sigs: Vec<Signal>,
    /// Body items in order.
    pub items: Vec<Item>,
    /// Port order (data ports only; control ports are added by `finish`).
    pub ports: Vec<SigId>,
    /// The first error met while building (reported by `finish`).
    pub error: Option<String>,
    /// The `valid_i` control port as a signal, once [`ModuleBuilder::valid_in`] asked for it.
    pub valid_in: Option<SigId>,
    /// The `valid_o` control port's signal when [`ModuleBuilder::set_valid_out`] drives it
    /// (otherwise `finish` drives it: `valid_i` delayed by the pipeline).
    pub valid_out: Option<SigId>,
    /// Wires printed with `(* keep *)` ([`ModuleBuilder::wire_keep`]).
    pub keep: Vec<SigId>,
}

impl ModuleBuilder {
    /// An empty module.
    pub fn new() -> ModuleBuilder {
        ModuleBuilder::default()
    }

    fn unique(&self, name: &str) -> String {
        if !self.sigs.iter().any(|s| s.name == name) {
            return name.to_string();
        }
        let mut i = 1;
        loop {
            let n = format!("{name}_{i}");
            if !self.sigs.iter().any(|s| s.name == n) {
                return n;
            }
            i += 1;
        }
    }

    fn push(&mut self, name: &str, width: u32, kind: SigKind) -> SigId {
        let name = self.unique(name);
        self.sigs.push(Signal {
            name,
            width,
            kind,
            note: None,
        });
        self.sigs.len() - 1
    }

    fn note_error(&mut self, e: &Expr, what: &str) {
        if self.error.is_none() {
            if let Some(m) = e.error() {
                self.error = Some(format!("{what}: {m}"));
            }
        }
    }

    /// A reference to a whole signal.
    pub fn sig(&self, id: SigId) -> Expr {
        Expr {
            node: Node::Sig(id),
            width: self.sigs[id].width,
        }
    }

    /// Declares a data input port.
    pub fn input(&mut self, name: &str, width: u32) -> Expr {
        let id = self.push(name, width, SigKind::Input);
        self.ports.push(id);
        self.sig(id)
    }

    /// Declares a data output port driven by `e`.
    pub fn output(&mut self, name: &str, e: Expr) {
        self.note_error(&e, name);
        let w = e.width.max(1);
        let id = self.push(name, w, SigKind::Output(e));
        self.ports.push(id);
        self.items.push(Item::Def(id));
    }

    /// Names `e` as a wire (constants and whole-signal references are returned unchanged).
    pub fn wire(&mut self, name: &str, e: Expr) -> Expr {
        self.note_error(&e, name);
        if e.error().is_some() || matches!(e.node, Node::Const(..) | Node::Sig(_)) {
            return e;
        }
        let id = self.push(name, e.width, SigKind::Wire(e));
        self.items.push(Item::Def(id));
        self.sig(id)
    }

    /// Like [`ModuleBuilder::wire`], with a trailing comment on the declaration.
    pub fn wire_note(&mut self, name: &str, e: Expr, note: &str) -> Expr {
        let r = self.wire(name, e);
        if let Node::Sig(id) = r.node {
            if self.sigs[id].note.is_none() && matches!(self.sigs[id].kind, SigKind::Wire(_)) {
                self.sigs[id].note = Some(note.to_string());
            }
        }
        r
    }

    /// Like [`ModuleBuilder::wire`], printed as `(* keep *) wire …`: synthesis keeps the
    /// sum as a signal of its own. Yosys' `alumacc` otherwise merges a chain of adders whose
    /// inner sums have one reader into one multi-operand `$macc`, which it builds from
    /// LUT full adders (two LUT4 per bit and operand on ECP5) instead of one carry chain
    /// per adder (one LUT4 per bit).
    pub fn wire_keep(&mut self, name: &str, e: Expr) -> Expr {
        let r = self.wire(name, e);
        if let Node::Sig(id) = r.node {
            if matches!(self.sigs[id].kind, SigKind::Wire(_)) && !self.keep.contains(&id) {
                self.keep.push(id);
            }
        }
        r
    }

    /// A comment block (lines without the `//`).
    pub fn comment(&mut self, lines: &[&str]) {
        self.items
            .push(Item::Comment(lines.iter().map(|s| s.to_string()).collect()));
    }

    /// A comment block from owned lines.
    pub fn comment_owned(&mut self, lines: Vec<String>) {
        self.items.push(Item::Comment(lines));
    }

    fn fail(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some(msg);
        }
    }

    /// The `valid_i` control port as an expression (declared by `finish` in its usual place,
    /// after `clk_i`/`rst_ni`), for a module that routes it itself (to an instance, an
    /// enable …).
    pub fn valid_in(&mut self) -> Expr {
        if let Some(id) = self.valid_in {
            return self.sig(id);
        }
        let id = self.push("valid_i", 1, SigKind::Input);
        if self.sigs[id].name != "valid_i" {
            self.fail("valid_in: a signal named valid_i already exists".into());
        }
        self.valid_in = Some(id);
        self.sig(id)
    }

    /// Drives the `valid_o` control port with `e` (1 bit) instead of the pipeline's valid
    /// chain; only for modules finished with 0 stages.
    pub fn set_valid_out(&mut self, e: Expr) {
        self.note_error(&e, "valid_o");
        if self.valid_out.is_some() {
            return self.fail("valid_o driven twice".into());
        }
        if e.width != 1 {
            return self.fail(format!("valid_o driven by a {}-bit expression", e.width));
        }
        let id = self.push("valid_o", 1, SigKind::Output(e));
        if self.sigs[id].name != "valid_o" {
            self.fail("set_valid_out: a signal named valid_o already exists".into());
        }
        self.valid_out = Some(id);
        self.items.push(Item::Def(id));
    }

    /// Declares a state register `name` of `width` bits with the synchronous reset value
    /// `reset` (`None`: no reset), at this point of the body. Its next value and enable are
    /// given later by [`ModuleBuilder::set_next`] (they may read signals defined after it).
    pub fn state(&mut self, name: &str, width: u32, reset: Option<u128>) -> StateReg {
        if width == 0 || width > MAX_WIDTH {
            self.fail(format!("state register {name}: width {width} out of range"));
        } else if reset.is_some_and(|v| v & !mask(width) != 0) {
            self.fail(format!(
                "state register {name}: reset value does not fit in {width} bits"
            ));
        }
        let next = err(format!(
            "state register {name} has no next value (ModuleBuilder::set_next)"
        ));
        let id = self.push(
            name,
            width,
            SigKind::State {
                next,
                reset,
                enable: None,
            },
        );
        self.items.push(Item::Def(id));
        StateReg { id, width }
    }

    /// Sets what the state register `reg` loads at each clock edge: `next` (as wide as the
    /// register) when `enable` (1 bit) is 1, or every cycle when `enable` is `None`.
    pub fn set_next(&mut self, reg: &StateReg, next: Expr, enable: Option<Expr>) {
        let name = match self.sigs.get(reg.id) {
            Some(s) => s.name.clone(),
            None => return self.fail(format!("set_next: no signal {}", reg.id)),
        };
        self.note_error(&next, &name);
        if let Some(e) = &enable {
            self.note_error(e, &name);
        }
        if next.width != reg.width {
            return self.fail(format!(
                "state register {name}: next value of {} bits for {} bits",
                next.width, reg.width
            ));
        }
        if enable.as_ref().is_some_and(|e| e.width != 1) {
            return self.fail(format!("state register {name}: enable is not 1 bit"));
        }
        match &mut self.sigs[reg.id].kind {
            SigKind::State {
                next: n,
                enable: en,
                ..
            } => {
                if n.error().is_none() {
                    return self.fail(format!("state register {name}: next value set twice"));
                }
                *n = next;
                *en = enable;
            }
            _ => self.fail(format!("set_next: {name} is not a state register")),
        }
    }

    /// Places an instance `name` of the module `module`, whose ports are `ports` (in
    /// declaration order). Every input port but `clk_i`/`rst_ni` (connected to this module's
    /// own) must be driven by one entry of `inputs` (port, expression of the port's width);
    /// every output port must be named in `outputs` (port, name of the wire it drives).
    /// Returns the output wires in the order of `outputs` (error values on a mismatch, which
    /// `finish` reports).
    pub fn instance(
        &mut self,
        module: &str,
        name: &str,
        ports: &[PortDecl],
        inputs: &[(&str, Expr)],
        outputs: &[(&str, &str)],
    ) -> Vec<Expr> {
        let what = format!("instance {name} of {module}");
        let failed = |b: &mut ModuleBuilder, msg: String| -> Vec<Expr> {
            b.fail(format!("{what}: {msg}"));
            outputs.iter().map(|_| err(msg.clone())).collect()
        };
        if self
            .items
            .iter()
            .any(|it| matches!(it, Item::Instance(i) if i.name == name))
        {
            return failed(self, "instance name used twice".into());
        }
        let has = |p: &str| ports.iter().any(|d| d.name == p && d.input);
        let clocked = has("clk_i");
        if clocked != has("rst_ni") {
            return failed(self, "clk_i without rst_ni or the reverse".into());
        }
        for (p, e) in inputs {
            if let Some(m) = e.error() {
                return failed(self, format!("input {p}: {m}"));
            }
            match ports.iter().find(|d| d.name == *p) {
                Some(d) if d.input && d.width == e.width && !matches!(*p, "clk_i" | "rst_ni") => {}
                Some(d) if d.input && d.width != e.width => {
                    return failed(
                        self,
                        format!("input {p} of {} bits driven by {} bits", d.width, e.width),
                    )
                }
                _ => return failed(self, format!("{p} is not a data input port")),
            }
        }
        for (p, _) in outputs {
            if !ports.iter().any(|d| d.name == *p && !d.input) {
                return failed(self, format!("{p} is not an output port"));
            }
        }
        let mut conn_in = Vec::new();
        let mut conn_out = Vec::new();
        let mut out_ids = vec![0; outputs.len()];
        for d in ports {
            if d.input {
                if matches!(d.name.as_str(), "clk_i" | "rst_ni") {
                    continue;
                }
                let mut it = inputs.iter().filter(|(p, _)| *p == d.name);
                match (it.next(), it.next()) {
                    (Some((_, e)), None) => conn_in.push((d.name.clone(), e.clone())),
                    (None, _) => return failed(self, format!("input {} not connected", d.name)),
                    _ => return failed(self, format!("input {} connected twice", d.name)),
                }
            } else {
                let pos: Vec<usize> = outputs
                    .iter()
                    .enumerate()
                    .filter(|(_, (p, _))| *p == d.name)
                    .map(|(k, _)| k)
                    .collect();
                match pos[..] {
                    [k] => {
                        let id = self.push(outputs[k].1, d.width, SigKind::InstanceOut);
                        out_ids[k] = id;
                        conn_out.push((d.name.clone(), id));
                    }
                    [] => return failed(self, format!("output {} not connected", d.name)),
                    _ => return failed(self, format!("output {} connected twice", d.name)),
                }
            }
        }
        self.items.push(Item::Instance(Instance {
            module: module.to_string(),
            name: name.to_string(),
            clocked,
            inputs: conn_in,
            outputs: conn_out,
        }));
        out_ids.iter().map(|&id| self.sig(id)).collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Constant folding: table-driven known answers, and a randomized check that every
    //! folding constructor means what the unfolded node means (two evaluation paths).
    use super::*;

    /// Evaluates `e` with signal `i` holding `env[i]` (a reference evaluator of the node
    /// semantics, Verilog's for the widths used here).
    pub(crate) fn eval(e: &Expr, env: &[u128]) -> u128 {
        let m = mask(e.width);
        let v = match &e.node {
            Node::Const(v, _) => *v,
            Node::Sig(s) => env[*s],
            Node::Slice(s, h, l) => (env[*s] >> l) & mask(h - l + 1),
            Node::Concat(v) => v.iter().fold(0, |acc, x| (acc << x.width) | eval(x, env)),
            Node::Repl(n, a) => (0..*n).fold(0, |acc, _| (acc << a.width) | eval(a, env)),
            Node::Not(a) => !eval(a, env),
            Node::Red(RedOp::And, a) => (eval(a, env) == mask(a.width)) as u128,
            Node::Red(RedOp::Or, a) => (eval(a, env) != 0) as u128,
            Node::Bin(op, a, b) => {
                let (x, y) = (eval(a, env), eval(b, env));
                match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Xor => x ^ y,
                }
            }
            Node::Cmp(op, a, b) => {
                let (x, y) = (eval(a, env), eval(b, env));
                (match op {
                    CmpOp::Eq => x == y,
                    CmpOp::Ne => x != y,
                    CmpOp::Lt => x < y,
                    CmpOp::Le => x <= y,
                    CmpOp::Gt => x > y,
                    CmpOp::Ge => x >= y,
                }) as u128
            }
            Node::Mux(s, a, b) => {
                if eval(s, env) == 1 {
                    eval(a, env)
                } else {
                    eval(b, env)
                }
            }
            Node::Shift(d, a, n) => {
                let (x, k) = (eval(a, env), eval(n, env));
                if k >= 128 {
                    0
                } else {
                    match d {
                        ShiftDir::Left => x << k,
                        ShiftDir::Right => x >> k,
                    }
                }
            }
            Node::Case(s, arms, d) => {
                let k = eval(s, env);
                arms.iter()
                    .find(|(v, _)| *v == k)
                    .map_or_else(|| eval(d, env), |(_, a)| eval(a, env))
            }
            Node::Error(m) => panic!("evaluated an error node: {m}"),
        };
        v & m
    }

    fn sig(id: SigId, w: u32) -> Expr {
        Expr {
            node: Node::Sig(id),
            width: w,
        }
    }

    fn raw(node: Node, width: u32) -> Expr {
        Expr { node, width }
    }

    #[test]
    fn known_folds() {
        let x = sig(0, 8);
        let c = |v, w| Expr::c(v, w);
        let cases: Vec<(&str, Expr, Expr)> = vec![
            ("const + const wraps", c(250, 8).add(&c(10, 8)), c(4, 8)),
            ("const - const wraps", c(3, 8).sub(&c(5, 8)), c(254, 8)),
            ("x + 0", x.add(&c(0, 8)), x.clone()),
            ("x - 0", x.sub(&c(0, 8)), x.clone()),
            ("x & 0", x.and(&c(0, 8)), c(0, 8)),
            ("x & ones", x.and(&c(0xff, 8)), x.clone()),
            ("x | ones", x.or(&c(0xff, 8)), c(0xff, 8)),
            ("x ^ ones", x.xor(&c(0xff, 8)), x.not()),
            ("x ^ x", x.xor(&x), c(0, 8)),
            ("x - x", x.sub(&x), c(0, 8)),
            ("~~x", x.not().not(), x.clone()),
            ("x == x", x.eq(&x), Expr::bit_c(true)),
            ("x < x", x.lt(&x), Expr::bit_c(false)),
            ("x == 0", x.eq_c(0), x.red_or().not()),
            ("x == 0x1ff never", x.eq_c(0x1ff), Expr::bit_c(false)),
            ("x != 0", x.ne(&c(0, 8)), x.red_or()),
            ("x == ones", x.eq_c(0xff), x.red_and()),
            ("const[5:2]", c(0b1011_0100, 8).slice(5, 2), c(0b1101, 4)),
            ("x[7:0]", x.slice(7, 0), x.clone()),
            ("x[5:2][2:1]", x.slice(5, 2).slice(2, 1), x.slice(4, 3)),
            (
                "{x, 4'h3}[5:2]",
                concat(&[x.clone(), c(3, 4)]).slice(5, 2),
                concat(&[x.slice(1, 0), c(0, 2)]),
            ),
            // adjacent slices merge (the emitter prints a whole-signal slice as the name)
            (
                "{x[7:4], x[3:0]}",
                concat(&[x.slice(7, 4), x.slice(3, 0)]),
                raw(Node::Slice(0, 7, 0), 8),
            ),
            ("{2'b10, 2'b01}", concat(&[c(2, 2), c(1, 2)]), c(0b1001, 4)),
            ("{3{2'b10}}", Expr::repl(3, &c(2, 2)), c(0b101010, 6)),
            ("zext(x, 8)", x.zext(8), x.clone()),
            (
                "|{4'h0, x}",
                concat(&[c(0, 4), x.clone()]).red_or(),
                x.red_or(),
            ),
            (
                "&{4'h3, x}",
                concat(&[c(3, 4), x.clone()]).red_and(),
                Expr::bit_c(false),
            ),
            (
                "1 ? x : y",
                Expr::mux(&Expr::bit_c(true), &x, &sig(1, 8)),
                x.clone(),
            ),
            ("s ? x : x", Expr::mux(&sig(2, 1), &x, &x), x.clone()),
            (
                "s ? 1 : 0",
                Expr::mux(&sig(2, 1), &Expr::bit_c(true), &Expr::bit_c(false)),
                sig(2, 1),
            ),
            ("x << 0", x.shl(&c(0, 3)), x.clone()),
            ("x << 3", x.shl(&c(3, 3)), concat(&[x.slice(4, 0), c(0, 3)])),
            ("x >> 9", x.shr(&c(9, 4)), c(0, 8)),
            (
                "case on a constant",
                Expr::case(&c(2, 2), vec![(1, c(7, 4)), (2, c(9, 4))], &c(0, 4)),
                c(9, 4),
            ),
            (
                "case default on a constant",
                Expr::case(&c(3, 2), vec![(1, c(7, 4))], &c(5, 4)),
                c(5, 4),
            ),
        ];
        for (what, got, want) in cases {
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn construction_errors_are_values_not_panics() {
        let x = sig(0, 8);
        let cases: Vec<(Expr, &str)> = vec![
            (x.add(&sig(1, 4)), "Add of 8 and 4 bits"),
            (Expr::c(300, 8), "constant 300 does not fit in 8 bits"),
            (x.slice(8, 0), "slice [8:0] of a 8-bit expression"),
            (
                x.add(&x).slice(3, 0),
                "slice [3:0] of an unnamed 8-bit expression; name it with a wire first",
            ),
            (
                Expr::mux(&x, &x, &x),
                "mux with a 8-bit select and 8/8-bit arms",
            ),
            (x.zext(4), "zext of 8 bits to 4"),
            // an error propagates through later operations
            (
                Expr::c(300, 8).add(&x).not(),
                "constant 300 does not fit in 8 bits",
            ),
        ];
        for (e, msg) in cases {
            assert_eq!(e.error().as_deref(), Some(msg));
        }
    }

    #[test]
    fn state_and_instance_misuse_is_reported_by_finish() {
        type Build = Box<dyn Fn(&mut ModuleBuilder)>;
        let cases: Vec<(&str, Build)> = vec![
            (
                "state register acc_q has no next value (ModuleBuilder::set_next)",
                Box::new(|b| {
                    let acc = b.state("acc_q", 8, Some(0));
                    b.output("r_o", acc.q());
                }),
            ),
            (
                "state register acc_q: next value of 4 bits for 8 bits",
                Box::new(|b| {
                    let acc = b.state("acc_q", 8, Some(0));
                    b.set_next(&acc, acc.q().slice(3, 0), None);
                }),
            ),
            (
                "state register acc_q: enable is not 1 bit",
                Box::new(|b| {
                    let acc = b.state("acc_q", 8, None);
                    b.set_next(&acc, acc.q(), Some(acc.q()));
                }),
            ),
            (
                "state register acc_q: next value set twice",
                Box::new(|b| {
                    let acc = b.state("acc_q", 8, Some(0));
                    b.set_next(&acc, acc.q(), None);
                    b.set_next(&acc, acc.q(), None);
                }),
            ),
            (
                "state register f_q: reset value does not fit in 1 bits",
                Box::new(|b| {
                    b.state("f_q", 1, Some(2));
                }),
            ),
            (
                "instance u of sub: input a_i not connected",
                Box::new(|b| {
                    let v = b.valid_in();
                    b.instance("sub", "u", &sub_ports(), &[("valid_i", v)], &[]);
                }),
            ),
            (
                "instance u of sub: input a_i of 8 bits driven by 4 bits",
                Box::new(|b| {
                    let a = b.input("a_i", 4);
                    b.instance("sub", "u", &sub_ports(), &[("a_i", a)], &[]);
                }),
            ),
            (
                "instance u of sub: output valid_o not connected",
                Box::new(|b| {
                    let v = b.valid_in();
                    let a = b.input("a_i", 8);
                    let o = b.instance(
                        "sub",
                        "u",
                        &sub_ports(),
                        &[("valid_i", v), ("a_i", a)],
                        &[("r_o", "r")],
                    );
                    assert_eq!(o.len(), 1);
                    assert!(o[0].error().is_some(), "an error value, not a panic");
                }),
            ),
            (
                "instance u of sub: q_o is not an output port",
                Box::new(|b| {
                    b.instance("sub", "u", &sub_ports(), &[], &[("q_o", "q")]);
                }),
            ),
        ];
        fn sub_ports() -> Vec<PortDecl> {
            let port = |name: &str, input: bool, width: u32| PortDecl {
                name: name.into(),
                input,
                width,
            };
            vec![
                port("valid_i", true, 1),
                port("a_i", true, 8),
                port("r_o", false, 8),
                port("valid_o", false, 1),
            ]
        }
        for (msg, build) in cases {
            let mut b = ModuleBuilder::new();
            build(&mut b);
            let e = b.finish("t", vec![], 0).expect_err(msg);
            assert!(e.ends_with(msg), "{e:?} should end with {msg:?}");
        }
    }

    /// Small deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn folding_preserves_meaning() {
        // Operands: 6-bit signals 0..3, 1-bit signal 4, and constants, including the
        // identities' special values (0, all ones) often.
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let w = 6;
        let mut checked = 0;
        for _ in 0..4000 {
            let operand = |rng: &mut Rng| -> Expr {
                match rng.below(6) {
                    0 => Expr::c(0, w),
                    1 => Expr::c(mask(w), w),
                    2 => Expr::c(rng.below(64) as u128, w),
                    k => sig(k as usize - 3, w),
                }
            };
            let (a, b) = (operand(&mut rng), operand(&mut rng));
            let s1 = match rng.below(3) {
                0 => Expr::bit_c(rng.below(2) == 1),
                _ => sig(4, 1),
            };
            let k = rng.below(10) as u128;
            let sh = Expr::c(k.min(7), 3);
            // Each case: the folding constructor and the node it would build unfolded.
            type Bin = fn(&Expr, &Expr) -> Expr;
            let bins: [(Bin, BinOp); 5] = [
                (Expr::add, BinOp::Add),
                (Expr::sub, BinOp::Sub),
                (Expr::and, BinOp::And),
                (Expr::or, BinOp::Or),
                (Expr::xor, BinOp::Xor),
            ];
            let cmps: [(Bin, CmpOp); 3] = [
                (Expr::eq, CmpOp::Eq),
                (Expr::ne, CmpOp::Ne),
                (Expr::gt, CmpOp::Gt),
            ];
            let (x, y) = (Box::new(a.clone()), Box::new(b.clone()));
            let (folded, unfolded) = match rng.below(14) as usize {
                i @ 0..=4 => (bins[i].0(&a, &b), raw(Node::Bin(bins[i].1, x, y), w)),
                i @ 5..=7 => (
                    cmps[i - 5].0(&a, &b),
                    raw(Node::Cmp(cmps[i - 5].1, x, y), 1),
                ),
                8 => (a.red_or(), raw(Node::Red(RedOp::Or, x), 1)),
                9 => (a.red_and(), raw(Node::Red(RedOp::And, x), 1)),
                10 => (
                    Expr::mux(&s1, &a, &b),
                    raw(Node::Mux(s1.clone().into(), x, y), w),
                ),
                11 => (
                    a.shl(&sh),
                    raw(Node::Shift(ShiftDir::Left, x, sh.into()), w),
                ),
                12 => (
                    a.shr(&sh),
                    raw(Node::Shift(ShiftDir::Right, x, sh.into()), w),
                ),
                _ => {
                    let lo = (k % 6) as u32;
                    let hi = lo + rng.below((w - lo) as u64) as u32;
                    let c = concat(&[a.clone(), b.clone()]);
                    (
                        c.slice(hi + 3, lo),
                        raw(Node::Slice(9, hi + 3, lo), hi + 3 - lo + 1),
                    )
                }
            };
            assert!(folded.error().is_none(), "{folded:?}");
            for _ in 0..8 {
                let mut env: Vec<u128> = (0..4).map(|_| rng.below(64) as u128).collect();
                env.push(rng.below(2) as u128);
                // signal 9 stands for the unfolded concatenation {a, b}
                while env.len() < 9 {
                    env.push(0);
                }
                env.push((eval(&a, &env) << w) | eval(&b, &env));
                assert_eq!(
                    eval(&folded, &env),
                    eval(&unfolded, &env),
                    "folded {folded:?} vs {unfolded:?} at {env:?}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 32000);
    }
}
