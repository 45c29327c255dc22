//! Why a run or a sweep failed, by the exit status `rocesim` gives it.

use thiserror::Error;

use crate::scenario::Diagnostic;

/// A failed run, check, sweep or merge.
#[derive(Debug, Error)]
pub enum RunError {
    /// The scenario (or a `--set`) is wrong: exit status 2.
    #[error(transparent)]
    Scenario(#[from] Diagnostic),
    /// A flag is wrong: exit status 2.
    #[error("{0}")]
    Usage(String),
    /// Writing the outputs failed: exit status 1.
    #[error("{0}")]
    Output(String),
}
