//! `manifest.json` and the port vocabulary, from the shared interface crate (`iface`): the
//! description of a generated (or user-supplied) core that `fp8gen verify --from DIR`, the
//! simulator and the FPGA flow read.

pub use iface::{
    Direction, FileList, Formats, Manifest, ManifestError, Modes, ParamValue, Port, Role, Unit,
    MANIFEST_SCHEMA, ROUNDING_ENCODING, SATURATION_ENCODING,
};
