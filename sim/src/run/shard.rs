//! Sweeps larger than one machine: `rocesim sweep --shard K/N` runs the
//! K-th of N disjoint slices of the grid, and `rocesim sweep merge` joins
//! the slices into the outputs one unsharded sweep would have written.
//!
//! ```text
//!   grid point i (axes × seeds, grid order) ──▶ shard i mod N
//!   shard K: runs its points ──▶ DIR_K/{sweep.csv, sweep.json, shard.json}
//!   merge DIR_0 .. DIR_N-1 ──check: same sweep, every K once──▶ rows by i ──▶ sweep.csv (byte-identical), .json, .png/.svg
//! ```
//!
//! Points go to shards round-robin, not in blocks, so that shards get a
//! similar mix of cheap and expensive points (the first axis is often a
//! size that makes later points slower). Each shard's `shard.json` holds
//! what the merge needs to prove the shards belong together: the
//! scenario's name and a CRC of its file, the fixed `--set`s, the axes, the
//! seeds and the shard count, plus its rows with their grid indices. Job
//! arrays give each task its index in the environment: `--shard auto/N`
//! reads `SLURM_ARRAY_TASK_ID` (Slurm, `sbatch --array=0-(N-1)`) or
//! `JOB_COMPLETION_INDEX` (a Kubernetes Indexed Job).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::RunError;
use super::grid::{Axis, SweepRow};

/// The file each shard writes beside its partial `sweep.csv`.
pub const MANIFEST: &str = "shard.json";

/// The environment variables a job array sets, in the order they are read.
const INDEX_VARS: [&str; 2] = ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"];

/// One slice of a sweep's grid: the points whose index is `index` mod `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parses `K/N` or `auto/N` (K from the job array's environment).
    pub fn parse(s: &str) -> Result<Shard, RunError> {
        Shard::parse_with(s, |v| std::env::var(v).ok())
    }

    fn parse_with(s: &str, env: impl Fn(&str) -> Option<String>) -> Result<Shard, RunError> {
        let usage = |why: &str| {
            RunError::Usage(format!(
                "--shard {s}: {why} (K/N with 0 <= K < N, or auto/N to read K from {} or {})",
                INDEX_VARS[0], INDEX_VARS[1]
            ))
        };
        let (k, n) = s.split_once('/').ok_or_else(|| usage("expected K/N"))?;
        let count: usize = n
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| usage("N is not a positive number"))?;
        let (index, from) = if k.trim() == "auto" {
            let (var, v) = INDEX_VARS
                .iter()
                .find_map(|&var| env(var).map(|v| (var, v)))
                .ok_or_else(|| usage("no job-array index in the environment"))?;
            let i = v.trim().parse::<usize>().map_err(|_| {
                RunError::Usage(format!("--shard {s}: {var}={v:?} is not a shard index"))
            })?;
            (i, Some(var))
        } else {
            let i = k
                .trim()
                .parse::<usize>()
                .map_err(|_| usage("K is not a number"))?;
            (i, None)
        };
        if index >= count {
            return Err(match from {
                Some(var) => RunError::Usage(format!(
                    "--shard {s}: {var}={index} is not below N={count} (an array of {count} tasks is indexed 0..={})",
                    count - 1
                )),
                None => usage("K must be below N"),
            });
        }
        Ok(Shard { index, count })
    }

    /// Whether grid point `i` belongs to this shard.
    pub fn takes(&self, point: usize) -> bool {
        point % self.count == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What identifies a sweep: shards of one sweep agree on all of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepId {
    pub scenario: String,
    /// CRC-32 of the scenario file's bytes: shards run from a changed file
    /// are not one sweep.
    pub scenario_crc32: u32,
    /// `--set KEY=V` options that are not axes.
    pub sets: Vec<String>,
    pub axes: Vec<(String, Vec<String>)>,
    pub seeds: Vec<u64>,
    /// Grid points in the whole sweep.
    pub points: usize,
}

impl SweepId {
    pub fn new(
        scenario: &str,
        file: &Path,
        sets: &[String],
        axes: &[Axis],
        seeds: &[u64],
    ) -> Result<SweepId, RunError> {
        let bytes =
            std::fs::read(file).map_err(|e| RunError::Usage(format!("{}: {e}", file.display())))?;
        let points = axes.iter().map(|a| a.values.len()).product::<usize>() * seeds.len();
        Ok(SweepId {
            scenario: scenario.to_string(),
            scenario_crc32: crc32fast::hash(&bytes),
            sets: sets.to_vec(),
            axes: axes
                .iter()
                .map(|a| (a.key.clone(), a.values.clone()))
                .collect(),
            seeds: seeds.to_vec(),
            points,
        })
    }

    pub fn axes(&self) -> Vec<Axis> {
        self.axes
            .iter()
            .map(|(key, values)| Axis {
                key: key.clone(),
                values: values.clone(),
            })
            .collect()
    }
}

/// A shard's `shard.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Manifest {
    sweep: SweepId,
    shard: Shard,
    rows: Vec<SweepRow>,
}

/// The text of `shard.json` for one shard's rows.
pub fn manifest_json(id: &SweepId, shard: Shard, rows: &[SweepRow]) -> String {
    let m = Manifest {
        sweep: id.clone(),
        shard,
        rows: rows.to_vec(),
    };
    serde_json::to_string_pretty(&m).expect("plain JSON values") + "\n"
}

/// A whole sweep put back together from its shards.
#[derive(Debug)]
pub struct Merged {
    pub sweep: SweepId,
    /// Every grid point's row, in grid order.
    pub rows: Vec<SweepRow>,
}

/// Reads the shards in `dirs` and joins them: they must be shards of one
/// sweep, every shard present exactly once, every grid point run.
pub fn merge(dirs: &[PathBuf]) -> Result<Merged, RunError> {
    let mut found: Vec<(PathBuf, Manifest)> = Vec::new();
    for d in dirs {
        let path = d.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            RunError::Usage(format!(
                "{}: {e} (not the output of `rocesim sweep --shard K/N`?)",
                path.display()
            ))
        })?;
        let m: Manifest = serde_json::from_str(&text)
            .map_err(|e| RunError::Usage(format!("{}: {e}", path.display())))?;
        found.push((d.clone(), m));
    }
    let Some((first_dir, first)) = found.first() else {
        return Err(RunError::Usage(
            "sweep merge: no shard directories given".into(),
        ));
    };
    let (id, count) = (first.sweep.clone(), first.shard.count);
    for (d, m) in &found[1..] {
        if m.sweep != id || m.shard.count != count {
            return Err(RunError::Usage(format!(
                "{} is shard {} of another sweep than {} (shard {}): {}",
                d.display(),
                m.shard,
                first_dir.display(),
                first.shard,
                what_differs(&id, count, &m.sweep, m.shard.count)
            )));
        }
    }
    let mut by_index: Vec<Option<&PathBuf>> = vec![None; count];
    for (d, m) in &found {
        if let Some(other) = by_index[m.shard.index] {
            return Err(RunError::Usage(format!(
                "shard {} is given twice: {} and {}",
                m.shard,
                other.display(),
                d.display()
            )));
        }
        by_index[m.shard.index] = Some(d);
    }
    let missing: Vec<String> = (0..count)
        .filter(|&k| by_index[k].is_none())
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(RunError::Usage(format!(
            "shard{} {} missing: no directory given holds {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" },
        )));
    }
    let mut rows: Vec<Option<SweepRow>> = vec![None; id.points];
    for (d, m) in found {
        for r in m.rows {
            let i = r.point;
            let belongs = i < id.points && m.shard.takes(i);
            if !belongs || rows[i].is_some() {
                return Err(RunError::Usage(format!(
                    "{}: grid point {i} does not belong to shard {} or appears twice",
                    d.join(MANIFEST).display(),
                    m.shard
                )));
            }
            rows[i] = Some(r);
        }
    }
    if let Some(i) = rows.iter().position(Option::is_none) {
        return Err(RunError::Usage(format!(
            "grid point {i} has no result in shard {}/{count} (an interrupted shard?)",
            i % count
        )));
    }
    Ok(Merged {
        sweep: id,
        rows: rows.into_iter().map(|r| r.expect("checked")).collect(),
    })
}

fn what_differs(a: &SweepId, an: usize, b: &SweepId, bn: usize) -> String {
    if an != bn {
        format!("{an} shards against {bn}")
    } else if a.scenario != b.scenario || a.scenario_crc32 != b.scenario_crc32 {
        format!(
            "scenario {} (CRC {:08x}) against {} (CRC {:08x})",
            a.scenario, a.scenario_crc32, b.scenario, b.scenario_crc32
        )
    } else if a.sets != b.sets {
        format!("--set {:?} against {:?}", a.sets, b.sets)
    } else if a.axes != b.axes {
        "different --set axes".into()
    } else {
        "different --seeds".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn shards_parse_and_take_round_robin() {
        let s = Shard::parse_with("1/3", env(&[])).unwrap();
        assert_eq!(s, Shard { index: 1, count: 3 });
        let taken: Vec<usize> = (0..8).filter(|&i| s.takes(i)).collect();
        assert_eq!(taken, [1, 4, 7]);
        assert!(Shard::parse_with("3/3", env(&[])).is_err());
        assert!(Shard::parse_with("1", env(&[])).is_err());
        assert!(Shard::parse_with("0/0", env(&[])).is_err());
    }

    #[test]
    fn auto_reads_the_job_array_index() {
        let slurm = Shard::parse_with("auto/4", env(&[("SLURM_ARRAY_TASK_ID", "2")])).unwrap();
        assert_eq!(slurm.index, 2);
        let k8s = Shard::parse_with("auto/4", env(&[("JOB_COMPLETION_INDEX", "3")])).unwrap();
        assert_eq!(k8s.index, 3);
        let e = Shard::parse_with("auto/4", env(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no job-array index"), "{e}");
        let e = Shard::parse_with("auto/4", env(&[("JOB_COMPLETION_INDEX", "4")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("JOB_COMPLETION_INDEX=4 is not below N=4"), "{e}");
    }
}
