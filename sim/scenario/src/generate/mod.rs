//! Generators: fabrics ([`topology`]: fat-tree, leaf-spine; [`rail`]:
//! rail-optimized GPU clusters) and traffic
//! ([`traffic`]: patterns, arrival processes, size distributions) that a
//! scenario expands before its world is built.

pub mod rail;
pub mod topology;
pub mod traffic;
