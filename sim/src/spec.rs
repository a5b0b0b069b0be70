//! Description of a core's interface: top module name, ports (name, direction, width, role)
//! and pipeline latency — everything the harness generator needs, nothing about the unit.
//!
//! A vector seen by the Rust API is one `u64` per *data* input port (in port order) and one
//! `u64` per *data* output port. Clock, reset and the valid handshake are driven by the
//! harness itself and never appear in vectors.

use serde::{Deserialize, Serialize};

use crate::error::{Result, SimError};
pub use iface::{width_mask, Direction, Port, Role};

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
    /// Stream mode of a stateful core: `valid_in`/`valid_out` are ordinary data, every input
    /// row is one clock cycle and output row `i` is what the core shows `latency` cycles
    /// later; the caller's model, not the harness, knows when results are due.
    #[serde(default)]
    pub stream: bool,
}

impl CoreSpec {
    /// A combinational core.
    pub fn combinational(top: impl Into<String>, ports: Vec<Port>) -> Self {
        CoreSpec {
            top: top.into(),
            ports,
            latency: 0,
            stream: false,
        }
    }

    /// A clocked core of the given latency; `ports` must contain a [`Role::Clock`] port.
    pub fn pipelined(top: impl Into<String>, ports: Vec<Port>, latency: u32) -> Self {
        CoreSpec {
            top: top.into(),
            ports,
            latency,
            stream: false,
        }
    }

    /// A clocked core driven in stream mode (see [`CoreSpec::stream`]): one row per cycle;
    /// output row `i` is what the core shows `latency` cycles after input row `i`.
    pub fn stream(top: impl Into<String>, ports: Vec<Port>, latency: u32) -> Self {
        CoreSpec {
            top: top.into(),
            ports,
            latency,
            stream: true,
        }
    }

    /// The interface of a manifest: clocked cores are driven through their valid handshake
    /// with the declared latency; on a combinational core `valid_in`/`valid_out` are data.
    pub fn from_manifest(m: &iface::Manifest) -> Self {
        CoreSpec {
            top: m.top.clone(),
            ports: m.ports.clone(),
            latency: m.latency,
            stream: false,
        }
    }

    /// Whether the harness treats `p` as part of the vectors: every role but clock and
    /// resets, and the valid handshake only on combinational cores and in stream mode.
    pub fn is_data(&self, p: &Port) -> bool {
        p.role.is_data(self.is_clocked(), self.stream)
    }

    /// Data input ports, in vector order.
    pub fn data_inputs(&self) -> impl Iterator<Item = &Port> {
        self.ports
            .iter()
            .filter(|p| self.is_data(p) && p.direction == Direction::Input)
    }

    /// Data output ports, in vector order.
    pub fn data_outputs(&self) -> impl Iterator<Item = &Port> {
        self.ports
            .iter()
            .filter(|p| self.is_data(p) && p.direction == Direction::Output)
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
    pub fn port_with_role(&self, role: Role) -> Option<&Port> {
        self.ports.iter().find(|p| p.role == role)
    }

    /// Whether the core has a clock (and is driven cycle by cycle).
    pub fn is_clocked(&self) -> bool {
        self.port_with_role(Role::Clock).is_some()
    }

    /// Whether the harness drives a `valid_in`/`valid_out` handshake (clocked, not stream).
    pub fn has_valid(&self) -> bool {
        self.is_clocked() && !self.stream && self.port_with_role(Role::ValidIn).is_some()
    }

    /// Checks the port list ([`iface::check_ports`]: names, widths, roles, latency) and
    /// that stream mode has a clock; the error names the offending port.
    pub fn validate(&self) -> Result<()> {
        iface::check_ports(&self.top, &self.ports, self.latency, iface::MAX_PORT_WIDTH)
            .map_err(SimError::InvalidSpec)?;
        if self.stream && !self.is_clocked() {
            return Err(SimError::InvalidSpec(
                "stream mode needs a clocked core".into(),
            ));
        }
        Ok(())
    }
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
        assert!(err.contains("no clock port (role clock)"), "{err}");

        let spec = CoreSpec::pipelined(
            "m",
            vec![
                Port::control("clk", Role::Clock),
                Port::control("v", Role::ValidIn),
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
            "formats":{"x":"e4m3","y":"e4m3","r":"e4m3"},"modes":{},
            "latency":2,"ports":[
            {"name":"clk","direction":"input","width":1,"role":"clock"},
            {"name":"rst_n","direction":"input","width":1,"role":"reset_n"},
            {"name":"valid_i","direction":"input","width":1,"role":"valid_in"},
            {"name":"x_i","direction":"input","width":8,"role":"x"},
            {"name":"rm_i","direction":"input","width":4,"role":"rounding"},
            {"name":"r_o","direction":"output","width":8,"role":"result"},
            {"name":"flags_o","direction":"output","width":4,"role":"flags"},
            {"name":"valid_o","direction":"output","width":1,"role":"valid_out"}]}"#;
        let m = iface::Manifest::from_json(text).unwrap();
        let spec = CoreSpec::from_manifest(&m);
        spec.validate().unwrap();
        assert_eq!(spec.latency, 2);
        assert_eq!(spec.n_inputs(), 2);
        assert_eq!(spec.n_outputs(), 2);
        assert!(spec.has_valid());
        assert_eq!(spec.port_with_role(Role::ResetN).unwrap().name, "rst_n");
        let mut st = spec.clone();
        st.stream = true;
        assert!(!st.has_valid());
        assert_eq!((st.n_inputs(), st.n_outputs()), (3, 3));
    }

    #[test]
    fn roles_round_trip_through_json() {
        let p = Port::control("valid_o", Role::ValidOut);
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
