//! The workspace's layering, as the crates and modules must keep it: the
//! model reads no scenario or ns-3 format (no toml, no serde_json among its
//! dependencies, no path to the crates above it), no module imports one
//! that imports it back (`scripts/module-cycles`), and no source file holds
//! more than 800 lines.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `[dependencies]` (and target-specific dependencies) of a crate's
/// manifest, by name.
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let mut names: Vec<String> = doc
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(targets) = doc.get("target").and_then(|t| t.as_table()) {
        for t in targets.values() {
            if let Some(d) = t.get("dependencies").and_then(|d| d.as_table()) {
                names.extend(d.keys().cloned());
            }
        }
    }
    names
}

#[test]
fn the_model_depends_on_no_format_and_on_no_crate_above_it() {
    let deps = dependencies(&root().join("sim/model/Cargo.toml"));
    assert!(deps.iter().any(|d| d == "roce-codec"), "{deps:?}");
    for above in [
        "toml",
        "toml_edit",
        "serde_json",
        "rocesim-scenario",
        "rocesim-ns3",
        "rocesim",
    ] {
        assert!(
            !deps.iter().any(|d| d == above),
            "the model depends on {above}"
        );
    }
    // The ns-3 formats sit at the edge, below the scenario crate that reads
    // them: rocesim-ns3 depends on the model, not on the scenario.
    let ns3 = dependencies(&root().join("sim/ns3/Cargo.toml"));
    assert!(!ns3.iter().any(|d| d == "rocesim-scenario"), "{ns3:?}");
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let script = root().join("scripts/module-cycles");
    let out = match Command::new("python3").arg(&script).output() {
        Ok(out) => out,
        Err(e) if std::env::var_os("ROCESIM_CI").is_none() => {
            eprintln!("skipped: python3 cannot run {}: {e}", script.display());
            return;
        }
        Err(e) => panic!("python3 {}: {e}", script.display()),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim().is_empty(),
        "import cycles:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn no_source_file_is_over_800_lines() {
    fn walk(dir: &Path, long: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, long);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let lines = std::fs::read_to_string(&p).unwrap().lines().count();
                if lines > 800 {
                    long.push(format!("{}: {lines} lines", p.display()));
                }
            }
        }
    }
    let mut long = Vec::new();
    for krate in [
        "codec",
        "capture",
        "analyzer",
        "testkit",
        "sim",
        "sim/model",
        "sim/scenario",
        "sim/ns3",
    ] {
        walk(&root().join(krate).join("src"), &mut long);
    }
    assert!(long.is_empty(), "{long:#?}");
}
