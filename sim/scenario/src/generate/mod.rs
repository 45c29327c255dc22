//! Generators: fabrics ([`topology`]: fat-tree, leaf-spine) and traffic
//! ([`traffic`]: patterns, arrival processes, size distributions) that a
//! scenario expands before its world is built.

pub mod topology;
pub mod traffic;
