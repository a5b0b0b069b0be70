//! Description of a core's interface: top module name, ports (name, direction, width, role)
//! and pipeline latency — everything the harness generator needs, nothing about the unit.
//!
//! A vector seen by the Rust API is one `u64` per *data* input port (in port order) and one
//! `u64` per *data* output port. Clock, reset and the valid handshake are driven by the
//! harness itself and never appear in vectors.

use serde::{Deserialize, Serialize};

use crate::error::{Result, SimError};

/// Direction of a port, seen from the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Driven by the harness.
    Input,
    /// Read by the harness.
    Output,
}

/// What the harness does with a port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortRole {
    /// An operand or a result: part of every vector.
    #[default]
    Data,
    /// The clock (rising edge); 1 bit input.
    Clock,
    /// Synchronous or asynchronous reset, active high; 1 bit input.
    Reset,
    /// Reset, active low; 1 bit input.
    ResetN,
    /// Input handshake: high for cycles that carry a vector; 1 bit input.
    ValidIn,
    /// Output handshake: must follow `valid_in` after exactly `latency` cycles; 1 bit output.
    ValidOut,
}

/// One port of the core.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Port {
    /// Verilog identifier of the port.
    pub name: String,
    /// Input or output.
    pub direction: Direction,
    /// Width in bits, 1..=64.
    pub width: u32,
    /// What the harness does with it.
    #[serde(default)]
    pub role: PortRole,
}

impl Port {
    /// A data input of `width` bits.
    pub fn input(name: impl Into<String>, width: u32) -> Self {
        Port {
            name: name.into(),
            direction: Direction::Input,
            width,
            role: PortRole::Data,
        }
    }

    /// A data output of `width` bits.
    pub fn output(name: impl Into<String>, width: u32) -> Self {
        Port {
            name: name.into(),
            direction: Direction::Output,
            width,
            role: PortRole::Data,
        }
    }

    /// A 1-bit port with a control role (clock, reset, valid); its direction follows the role.
    pub fn control(name: impl Into<String>, role: PortRole) -> Self {
        let direction = if role == PortRole::ValidOut {
            Direction::Output
        } else {
            Direction::Input
        };
        Port {
            name: name.into(),
            direction,
            width: 1,
            role,
        }
    }

    /// Mask of the port's `width` low bits.
    pub fn mask(&self) -> u64 {
        width_mask(self.width)
    }

    /// Number of hex digits needed to print a value of this port.
    pub fn hex_digits(&self) -> usize {
        self.width.div_ceil(4).max(1) as usize
    }

    /// Whether the port is part of the vectors (operand or result).
    pub fn is_data(&self) -> bool {
        self.role == PortRole::Data
    }
}

/// Mask of the `width` low bits (`width` ≤ 64).
pub fn width_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// The interface of a core: what the harness generator needs to drive it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CoreSpec {
    /// Name of the top module in the Verilog source.
    pub top: String,
    /// All ports of the top module, in declaration order.
    pub ports: Vec<Port>,
    /// Pipeline latency in cycles (0 = combinational). Must be 0 without a clock.
    #[serde(default)]
    pub latency: u32,
}

impl CoreSpec {
    /// A combinational core.
    pub fn combinational(top: impl Into<String>, ports: Vec<Port>) -> Self {
        CoreSpec {
            top: top.into(),
            ports,
            latency: 0,
        }
    }

    /// A clocked core of the given latency; `ports` must contain a [`PortRole::Clock`] port.
    pub fn pipelined(top: impl Into<String>, ports: Vec<Port>, latency: u32) -> Self {
        CoreSpec {
            top: top.into(),
            ports,
            latency,
        }
    }

    /// Data input ports, in vector order.
    pub fn data_inputs(&self) -> impl Iterator<Item = &Port> {
        self.ports
            .iter()
            .filter(|p| p.is_data() && p.direction == Direction::Input)
    }

    /// Data output ports, in vector order.
    pub fn data_outputs(&self) -> impl Iterator<Item = &Port> {
        self.ports
            .iter()
            .filter(|p| p.is_data() && p.direction == Direction::Output)
    }

    /// Number of `u64` words in one input vector.
    pub fn n_inputs(&self) -> usize {
        self.data_inputs().count()
    }

    /// Number of `u64` words in one output vector.
    pub fn n_outputs(&self) -> usize {
        self.data_outputs().count()
    }

    /// The port with the given role, if any.
    pub fn port_with_role(&self, role: PortRole) -> Option<&Port> {
        self.ports.iter().find(|p| p.role == role)
    }

    /// Whether the core has a clock (and is driven cycle by cycle).
    pub fn is_clocked(&self) -> bool {
        self.port_with_role(PortRole::Clock).is_some()
    }

    /// Whether the core has a `valid_in`/`valid_out` handshake.
    pub fn has_valid(&self) -> bool {
        self.port_with_role(PortRole::ValidIn).is_some()
    }

    /// Checks names, widths, roles and latency; the error names the offending port.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(SimError::InvalidSpec(m));
        if !is_identifier(&self.top) {
            return bad(format!(
                "top module name `{}` is not a plain Verilog identifier",
                self.top
            ));
        }
        if self.ports.is_empty() {
            return bad(format!("module `{}` has no ports", self.top));
        }
        let mut names: Vec<&str> = Vec::new();
        for p in &self.ports {
            if !is_identifier(&p.name) {
                return bad(format!(
                    "port name `{}` is not a plain Verilog identifier",
                    p.name
                ));
            }
            if names.contains(&p.name.as_str()) {
                return bad(format!("port `{}` is listed twice", p.name));
            }
            names.push(&p.name);
            if p.width == 0 || p.width > 64 {
                return bad(format!(
                    "port `{}` is {} bits wide; the harness supports 1..=64 bits per port \
                     (split wider buses into several ports)",
                    p.name, p.width
                ));
            }
            let (want_dir, is_control) = match p.role {
                PortRole::Data => (p.direction, false),
                PortRole::ValidOut => (Direction::Output, true),
                _ => (Direction::Input, true),
            };
            if p.direction != want_dir {
                return bad(format!(
                    "port `{}` has role {:?} but is declared as {:?}",
                    p.name, p.role, p.direction
                ));
            }
            if is_control && p.width != 1 {
                return bad(format!(
                    "port `{}` has role {:?} and must be 1 bit wide, not {}",
                    p.name, p.role, p.width
                ));
            }
        }
        for role in [
            PortRole::Clock,
            PortRole::Reset,
            PortRole::ResetN,
            PortRole::ValidIn,
            PortRole::ValidOut,
        ] {
            if self.ports.iter().filter(|p| p.role == role).count() > 1 {
                return bad(format!("more than one port has role {role:?}"));
            }
        }
        if self.port_with_role(PortRole::Reset).is_some()
            && self.port_with_role(PortRole::ResetN).is_some()
        {
            return bad("both an active-high and an active-low reset are listed".into());
        }
        let clocked = self.is_clocked();
        if !clocked {
            if self.latency != 0 {
                return bad(format!(
                    "latency is {} but no port has role Clock",
                    self.latency
                ));
            }
            if let Some(p) = self.ports.iter().find(|p| !p.is_data()) {
                return bad(format!(
                    "port `{}` has role {:?} but the core has no clock port",
                    p.name, p.role
                ));
            }
        }
        if self.port_with_role(PortRole::ValidIn).is_some()
            != self.port_with_role(PortRole::ValidOut).is_some()
        {
            return bad("valid_in and valid_out must be given together".into());
        }
        if self.n_inputs() == 0 {
            return bad(format!("module `{}` has no data input", self.top));
        }
        if self.n_outputs() == 0 {
            return bad(format!("module `{}` has no data output", self.top));
        }
        Ok(())
    }
}

/// A core described by a `manifest.json` (as written by `fp8gen gen`): its interface and the
/// path of its Verilog file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestCore {
    /// Interface (roles other than clock/reset/valid become [`PortRole::Data`]).
    pub spec: CoreSpec,
    /// The Verilog file, resolved against the manifest's directory.
    pub verilog_path: std::path::PathBuf,
}

impl ManifestCore {
    /// Reads the interface from a manifest file. Only `top`, `verilog`, `latency` and
    /// `ports` (`name`, `direction`, `width`, `role`) are used; port roles `clock`, `reset`,
    /// `reset_n`, `valid_in`, `valid_out` drive the harness, any other role is data.
    pub fn load(manifest_path: &std::path::Path) -> Result<ManifestCore> {
        let text = std::fs::read_to_string(manifest_path)
            .map_err(|e| SimError::io(format!("reading {}", manifest_path.display()), e))?;
        let dir = manifest_path
            .parent()
            .unwrap_or_else(|| std::path::Path::new("."));
        Self::from_json(&text, dir).map_err(|e| match e {
            SimError::InvalidSpec(m) => {
                SimError::InvalidSpec(format!("{}: {m}", manifest_path.display()))
            }
            other => other,
        })
    }

    /// Parses manifest JSON text; `dir` is where relative Verilog paths are resolved.
    pub fn from_json(text: &str, dir: &std::path::Path) -> Result<ManifestCore> {
        #[derive(Deserialize)]
        struct MPort {
            name: String,
            direction: Direction,
            width: u32,
            #[serde(default)]
            role: Option<String>,
        }
        #[derive(Deserialize)]
        struct M {
            top: String,
            verilog: String,
            #[serde(default)]
            latency: u32,
            ports: Vec<MPort>,
        }
        let m: M = serde_json::from_str(text)
            .map_err(|e| SimError::InvalidSpec(format!("malformed manifest: {e}")))?;
        let ports = m
            .ports
            .into_iter()
            .map(|p| {
                let role = match p.role.as_deref() {
                    Some("clock") => PortRole::Clock,
                    Some("reset") => PortRole::Reset,
                    Some("reset_n") => PortRole::ResetN,
                    Some("valid_in") => PortRole::ValidIn,
                    Some("valid_out") => PortRole::ValidOut,
                    _ => PortRole::Data,
                };
                Port {
                    name: p.name,
                    direction: p.direction,
                    width: p.width,
                    role,
                }
            })
            .collect();
        let spec = CoreSpec {
            top: m.top,
            ports,
            latency: m.latency,
        };
        spec.validate()?;
        Ok(ManifestCore {
            spec,
            verilog_path: dir.join(m.verilog),
        })
    }
}

/// Whether `s` is a plain (non-escaped) Verilog identifier that is also safe in C++.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_bad_port() {
        let spec = CoreSpec::combinational("m", vec![Port::input("a", 65), Port::output("y", 1)]);
        let err = spec.validate().unwrap_err().to_string();
        assert!(err.contains("`a`") && err.contains("65"), "{err}");

        let spec = CoreSpec::combinational("m", vec![Port::input("a", 8)]);
        assert!(spec.validate().is_err());

        let spec = CoreSpec::pipelined("m", vec![Port::input("a", 8), Port::output("y", 8)], 2);
        let err = spec.validate().unwrap_err().to_string();
        assert!(err.contains("Clock"), "{err}");

        let spec = CoreSpec::pipelined(
            "m",
            vec![
                Port::control("clk", PortRole::Clock),
                Port::control("v", PortRole::ValidIn),
                Port::input("a", 8),
                Port::output("y", 8),
            ],
            2,
        );
        assert!(spec.validate().is_err());
    }

    #[test]
    fn manifest_ports_map_to_harness_roles() {
        let text = r#"{"schema":1,"unit":"mul","top":"fp8_mul","verilog":"fp8_mul.v",
            "latency":2,"ports":[
            {"name":"clk","direction":"input","width":1,"role":"clock"},
            {"name":"rst_n","direction":"input","width":1,"role":"reset_n"},
            {"name":"valid_i","direction":"input","width":1,"role":"valid_in"},
            {"name":"x_i","direction":"input","width":8,"role":"x"},
            {"name":"rm_i","direction":"input","width":4,"role":"rounding"},
            {"name":"r_o","direction":"output","width":8,"role":"result"},
            {"name":"flags_o","direction":"output","width":4,"role":"flags"},
            {"name":"valid_o","direction":"output","width":1,"role":"valid_out"}]}"#;
        let m = ManifestCore::from_json(text, std::path::Path::new("/out")).unwrap();
        assert_eq!(m.verilog_path, std::path::Path::new("/out/fp8_mul.v"));
        assert_eq!(m.spec.latency, 2);
        assert_eq!(m.spec.n_inputs(), 2);
        assert_eq!(m.spec.n_outputs(), 2);
        assert_eq!(
            m.spec.port_with_role(PortRole::ResetN).unwrap().name,
            "rst_n"
        );
        let err = ManifestCore::from_json("{}", std::path::Path::new(".")).unwrap_err();
        assert!(err.to_string().contains("malformed manifest"), "{err}");
    }

    #[test]
    fn roles_round_trip_through_json() {
        let p = Port::control("valid_o", PortRole::ValidOut);
        let j = serde_json::to_string(&p).unwrap();
        assert!(
            j.contains("\"valid_out\"") && j.contains("\"output\""),
            "{j}"
        );
        let back: Port = serde_json::from_str(&j).unwrap();
        assert_eq!(back, p);
        let data: Port =
            serde_json::from_str(r#"{"name":"x_i","direction":"input","width":8}"#).unwrap();
        assert_eq!(data, Port::input("x_i", 8));
    }
}
