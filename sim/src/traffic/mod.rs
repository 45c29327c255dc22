//! Traffic: the flows of a capacity study. So far the flow size
//! distributions ([`SizeCdf`]) that generated traffic draws from.

mod cdf;

pub use cdf::{CdfError, SizeCdf};
