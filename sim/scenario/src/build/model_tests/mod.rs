//! Tests of the model's components that need a world built from a
//! scenario (the model crate cannot build one).

mod flows;
mod nic_buffers;
mod pfc;
mod reroute;
