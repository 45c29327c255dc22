//! The front-ends of `roce-pcap analyze` and `roce-pcap compare`: their
//! flags, and the outputs they write. Each puts together an analysis (or
//! two, [`crate::compare`]) with the exporters ([`crate::export`]), the
//! plots ([`crate::plot`]) and the HTML page ([`crate::html`]), all of
//! which read the analysis; so they sit here, above them, and not in the
//! module of the analysis they run. The subcommands that use one module
//! only keep their front-end in it (`dissect`, `plot::cli`, `infer::cli`).

pub mod analyze;
pub mod compare;
