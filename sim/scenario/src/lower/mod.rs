//! The generators a scenario names, lowered into its explicit form before
//! a world is built: `[topology]` into switches, hosts and links
//! ([`topology`]), `[[traffic]]` into workloads and flows ([`traffic`]).
//! Both run as the file loads ([`crate::load()`]), so errors point at the
//! keys the user wrote.

pub(crate) mod rail;
pub mod topology;
pub mod traffic;
