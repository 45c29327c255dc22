//! What the benches share: settings from the environment.

use std::fmt::Debug;
use std::str::FromStr;

/// The number in the environment variable `name` (`ROCE_BENCH_FRAMES=...`),
/// or `default` when it is not set; a value that is not a number stops the
/// bench, naming the variable.
pub fn env_or<T: FromStr>(name: &str, default: T) -> T
where
    T::Err: Debug,
{
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}
