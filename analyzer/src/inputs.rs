//! What a command-line input is, and the captures it stands for.
//!
//! ```text
//!  FILE          one capture (pcap, pcapng, optionally gzip)          ─┐
//!  -             one capture on standard input                          ├─▶ the captures analyzed together,
//!  DIR           every capture in it, in name order                     │   in this order (the bond's slaves
//!                (e.g. eth0.pcap, eth1.pcap of one host's bond)         │   in enslave order when the names
//!  RUN DIR       a rocesim run directory (it holds summary.json):       │   say it: eth0, eth1, ...)
//!                the captures of its taps, in the order of `taps[]`  ───┘   + the run's summary.json
//! ```
//!
//! A run directory also says how fast the tapped ports are
//! (`ports[].rate_gbps`), which is the speed PFC pause quanta are turned
//! into time at when `--link-speed` is not given.

use std::path::{Path, PathBuf};

use roce_capture::read::is_stdin;
use serde_json::Value;

/// The file names read as captures in a directory.
pub const CAPTURE_SUFFIXES: [&str; 6] = [
    ".pcap",
    ".pcapng",
    ".cap",
    ".pcap.gz",
    ".pcapng.gz",
    ".cap.gz",
];

/// Why an input cannot be analyzed.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{dir}: no captures in this directory (looked for *.pcap, *.pcapng, *.cap, each optionally .gz)"
    )]
    NoCaptures { dir: PathBuf },
    #[error(
        "{dir}: a rocesim run directory without captures: its summary.json lists no taps (add a [[tap]] to the scenario, e.g. at = \"hostA.eth0\", and run it again)"
    )]
    RunWithoutCaptures { dir: PathBuf },
    #[error("{path}: not a rocesim summary: {message}")]
    Summary { path: PathBuf, message: String },
    #[error("{path}: listed in taps[] of {summary} but missing")]
    MissingTap { path: PathBuf, summary: PathBuf },
    #[error(
        "{dir}: the tapped ports run at different speeds ({speeds}); pause quanta are turned into time at one speed: give --link-speed"
    )]
    MixedSpeeds { dir: PathBuf, speeds: String },
}

/// A rocesim run directory's `summary.json`, kept as JSON: the simulator
/// adds keys (e.g. `counters`) that the report shows without knowing them.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub path: PathBuf,
    /// The file as written (its keys in order, for the report's tables).
    pub text: String,
    pub json: Value,
}

/// One capture a run's tap wrote: the port it was at and the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Tap {
    pub port: String,
    pub file: String,
}

impl RunSummary {
    fn read(path: PathBuf) -> Result<RunSummary, InputError> {
        let text = std::fs::read_to_string(&path).map_err(|source| InputError::Read {
            path: path.clone(),
            source,
        })?;
        let json: Value = serde_json::from_str(&text).map_err(|e| InputError::Summary {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if !json.is_object() {
            return Err(InputError::Summary {
                path,
                message: "the top level is not an object".into(),
            });
        }
        Ok(RunSummary { path, text, json })
    }

    /// `taps[]`: the captures in the order the scenario lists its taps.
    pub fn taps(&self) -> Result<Vec<Tap>, InputError> {
        let Some(taps) = self.json.get("taps") else {
            return Ok(Vec::new());
        };
        let bad = |message: String| InputError::Summary {
            path: self.path.clone(),
            message,
        };
        let taps = taps
            .as_array()
            .ok_or_else(|| bad("taps is not an array".into()))?;
        taps.iter()
            .enumerate()
            .map(|(i, t)| {
                let field = |k: &str| {
                    t.get(k)
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| bad(format!("taps[{i}].{k} is not a string")))
                };
                Ok(Tap {
                    port: field("port")?,
                    file: field("file")?,
                })
            })
            .collect()
    }

    /// `ports[].rate_gbps` of the port named `port`.
    pub fn port_rate_gbps(&self, port: &str) -> Option<f64> {
        self.json
            .get("ports")?
            .as_array()?
            .iter()
            .find(|p| p.get("name").and_then(Value::as_str) == Some(port))?
            .get("rate_gbps")?
            .as_f64()
    }

    /// The scenario's name (`scenario`), when the summary has one.
    pub fn scenario(&self) -> Option<&str> {
        self.json.get("scenario").and_then(Value::as_str)
    }
}

/// What kind of input a command-line argument is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `-`: one capture on standard input.
    Stdin,
    /// One capture file.
    File,
    /// A directory of captures.
    Captures,
    /// A rocesim run directory.
    Run,
}

impl InputKind {
    /// As the reports name it: `stdin`, `file`, `captures`, `run`.
    pub fn name(self) -> &'static str {
        match self {
            InputKind::Stdin => "stdin",
            InputKind::File => "file",
            InputKind::Captures => "captures",
            InputKind::Run => "run",
        }
    }
}

/// One command-line input and the captures it stands for.
#[derive(Debug, Clone)]
pub struct Input {
    /// As given on the command line.
    pub arg: PathBuf,
    pub kind: InputKind,
    /// The captures, in the order they are analyzed.
    pub files: Vec<PathBuf>,
    /// The run's summary, for a run directory.
    pub run: Option<RunSummary>,
}

impl Input {
    /// What `arg` is: `-`, a directory (a run directory when it holds
    /// `summary.json`) or a file (whose contents the capture reader
    /// checks).
    pub fn resolve(arg: &Path) -> Result<Input, InputError> {
        let input = |kind, files, run| Input {
            arg: arg.to_path_buf(),
            kind,
            files,
            run,
        };
        if is_stdin(arg) {
            return Ok(input(InputKind::Stdin, vec![arg.to_path_buf()], None));
        }
        if !arg.is_dir() {
            return Ok(input(InputKind::File, vec![arg.to_path_buf()], None));
        }
        let summary = arg.join("summary.json");
        if summary.is_file() {
            let run = RunSummary::read(summary)?;
            let taps = run.taps()?;
            if taps.is_empty() {
                return Err(InputError::RunWithoutCaptures {
                    dir: arg.to_path_buf(),
                });
            }
            let mut files = Vec::with_capacity(taps.len());
            for t in &taps {
                let path = arg.join(&t.file);
                if !path.is_file() {
                    return Err(InputError::MissingTap {
                        path,
                        summary: run.path.clone(),
                    });
                }
                files.push(path);
            }
            return Ok(input(InputKind::Run, files, Some(run)));
        }
        let read_err = |source| InputError::Read {
            path: arg.to_path_buf(),
            source,
        };
        let mut names = Vec::new();
        for entry in std::fs::read_dir(arg).map_err(read_err)? {
            let entry = entry.map_err(read_err)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_capture_name(&name) && entry.path().is_file() {
                names.push(name);
            }
        }
        if names.is_empty() {
            return Err(InputError::NoCaptures {
                dir: arg.to_path_buf(),
            });
        }
        names.sort();
        let files = names.into_iter().map(|n| arg.join(n)).collect();
        Ok(input(InputKind::Captures, files, None))
    }

    /// The speed of the ports a run's taps were at, when the summary gives
    /// it; an error when they differ.
    pub fn link_speed_gbps(&self) -> Result<Option<f64>, InputError> {
        let Some(run) = &self.run else {
            return Ok(None);
        };
        let rates: Vec<(String, f64)> = run
            .taps()?
            .into_iter()
            .filter_map(|t| run.port_rate_gbps(&t.port).map(|r| (t.port, r)))
            .collect();
        let Some(&(_, first)) = rates.first() else {
            return Ok(None);
        };
        if rates.iter().all(|(_, r)| *r == first) {
            return Ok(Some(first));
        }
        Err(InputError::MixedSpeeds {
            dir: self.arg.clone(),
            speeds: rates
                .iter()
                .map(|(p, r)| format!("{p} {r} Gb/s"))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// Whether a file name in a directory is taken for a capture.
pub fn is_capture_name(name: &str) -> bool {
    !name.starts_with('.') && CAPTURE_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// The inputs of one command, resolved.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub list: Vec<Input>,
}

impl Inputs {
    pub fn resolve<P: AsRef<Path>>(args: &[P]) -> Result<Inputs, InputError> {
        Ok(Inputs {
            list: args
                .iter()
                .map(|a| Input::resolve(a.as_ref()))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Every capture, in order.
    pub fn files(&self) -> Vec<PathBuf> {
        self.list.iter().flat_map(|i| i.files.clone()).collect()
    }

    /// The run's summary when the inputs are one run directory.
    pub fn run(&self) -> Option<&RunSummary> {
        match self.list.as_slice() {
            [one] => one.run.as_ref(),
            _ => None,
        }
    }

    /// The link speed the inputs state (their tapped ports'), when all that
    /// state one agree.
    pub fn link_speed_gbps(&self) -> Result<Option<f64>, InputError> {
        let mut speed = None;
        for i in &self.list {
            if let Some(s) = i.link_speed_gbps()? {
                if speed.is_some_and(|k| k != s) {
                    return Err(InputError::MixedSpeeds {
                        dir: i.arg.clone(),
                        speeds: format!("{} Gb/s here, {} Gb/s before", s, speed.unwrap_or(s)),
                    });
                }
                speed = Some(s);
            }
        }
        Ok(speed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_names_by_suffix() {
        for n in [
            "eth0.pcap",
            "a.pcapng",
            "x.cap",
            "s1.pcap.gz",
            "b.pcapng.gz",
        ] {
            assert!(is_capture_name(n), "{n}");
        }
        for n in [
            "ports.csv",
            "summary.json",
            "qps.png",
            ".x.pcap.tmp",
            ".hidden.pcap",
        ] {
            assert!(!is_capture_name(n), "{n}");
        }
    }

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("roce-pcap-inputs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_directory_is_its_captures_in_name_order() {
        let d = dir("caps");
        for n in ["eth1.pcap", "eth0.pcap.gz", "notes.txt"] {
            std::fs::write(d.join(n), b"x").unwrap();
        }
        let i = Input::resolve(&d).unwrap();
        assert_eq!(i.kind, InputKind::Captures);
        assert_eq!(i.files, [d.join("eth0.pcap.gz"), d.join("eth1.pcap")]);
        std::fs::remove_file(d.join("eth0.pcap.gz")).unwrap();
        std::fs::remove_file(d.join("eth1.pcap")).unwrap();
        let e = Input::resolve(&d).unwrap_err().to_string();
        assert!(e.contains("no captures in this directory"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_run_directory_is_its_taps_in_summary_order() {
        let d = dir("run");
        let summary = |taps: &str, rates: (f64, f64)| {
            format!(
                r#"{{"scenario": "s", "ports": [{{"name": "h.eth0", "rate_gbps": {}}}, {{"name": "h.eth1", "rate_gbps": {}}}], "taps": {taps}}}"#,
                rates.0, rates.1
            )
        };
        let two = r#"[{"port": "h.eth1", "file": "b.pcap"}, {"port": "h.eth0", "file": "a.pcap"}]"#;
        std::fs::write(d.join("summary.json"), summary(two, (100.0, 100.0))).unwrap();
        let e = Input::resolve(&d).unwrap_err().to_string();
        assert!(
            e.contains("b.pcap: listed in taps[]") && e.contains("missing"),
            "{e}"
        );
        std::fs::write(d.join("a.pcap"), b"x").unwrap();
        std::fs::write(d.join("b.pcap"), b"x").unwrap();
        let i = Input::resolve(&d).unwrap();
        assert_eq!(i.kind, InputKind::Run);
        assert_eq!(i.files, [d.join("b.pcap"), d.join("a.pcap")]);
        assert_eq!(i.link_speed_gbps().unwrap(), Some(100.0));
        assert_eq!(i.run.as_ref().unwrap().scenario(), Some("s"));

        std::fs::write(d.join("summary.json"), summary(two, (100.0, 25.0))).unwrap();
        let e = Input::resolve(&d)
            .unwrap()
            .link_speed_gbps()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("h.eth1 25 Gb/s, h.eth0 100 Gb/s") && e.contains("--link-speed"),
            "{e}"
        );

        std::fs::write(d.join("summary.json"), summary("[]", (100.0, 100.0))).unwrap();
        let e = Input::resolve(&d).unwrap_err().to_string();
        assert!(e.contains("run directory without captures"), "{e}");

        std::fs::write(d.join("summary.json"), "{\"taps\": 3").unwrap();
        let e = Input::resolve(&d).unwrap_err().to_string();
        assert!(e.contains("summary.json: not a rocesim summary"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
