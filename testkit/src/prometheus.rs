//! Prometheus's own tools as the independent readers of a run's
//! `counters.prom` and `sysfs/`: `promtool check metrics` (Debian package
//! `prometheus`) and a real node_exporter (`prometheus-node-exporter`)
//! started on 127.0.0.1 and scraped with a plain HTTP/1.0 GET.
//!
//! ```text
//!  let Some(p) = promtool() else { return };         // skip or fail (ci)
//!  check_metrics(p, &run.join("counters.prom"));       // promtool's lint and parse
//!  let Some(ne) = NodeExporter::start(&["--path.sysfs=...", ...]) else { return };
//!  let m = parse(&ne.scrape());                        // every sample, labels sorted
//!  value(&m, "node_infiniband_state_id", &[("device", "mlx5_0")])
//! ```

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::ci::skip;

/// The first of `names` that runs with `--version`.
fn find(names: &[&'static str]) -> Option<&'static str> {
    names.iter().copied().find(|n| {
        Command::new(n)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// `promtool`, if installed (else [`skip`]).
pub fn promtool() -> Option<&'static str> {
    find(&["promtool"]).or_else(|| skip("promtool is not installed (Debian package prometheus)"))
}

/// `promtool check metrics < file`: fails the test with promtool's words
/// if it finds a problem (a lint finding included).
pub fn check_metrics(promtool: &str, file: &Path) {
    let input = std::fs::File::open(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let out = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(input)
        .output()
        .expect("run promtool");
    assert!(
        out.status.success(),
        "promtool check metrics {}: exit {:?}\n{}{}",
        file.display(),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// node_exporter (`prometheus-node-exporter` as Debian names it, or
/// `node_exporter`), if installed (else [`skip`]).
pub fn node_exporter() -> Option<&'static str> {
    find(&["prometheus-node-exporter", "node_exporter"]).or_else(|| {
        skip("node_exporter is not installed (Debian package prometheus-node-exporter)")
    })
}

/// A node_exporter listening on 127.0.0.1, stopped when dropped.
pub struct NodeExporter {
    child: Child,
    port: u16,
}

impl NodeExporter {
    /// Starts [`node_exporter`] with `args` on a free port of 127.0.0.1
    /// and waits until it answers; `None` if it is not installed (else
    /// [`skip`]). Fails the test if it exits or does not answer in 20 s.
    pub fn start(args: &[String]) -> Option<NodeExporter> {
        let bin = node_exporter()?;
        // A port the kernel just handed out and took back is free for a
        // moment; good enough for a test.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port on 127.0.0.1")
            .port();
        let child = Command::new(bin)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start node_exporter");
        let mut ne = NodeExporter { child, port };
        let start = Instant::now();
        loop {
            if let Some(status) = ne.child.try_wait().expect("wait on node_exporter") {
                let mut err = String::new();
                if let Some(mut e) = ne.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                panic!("node_exporter {args:?} exited ({status}):\n{err}");
            }
            if ne.get("/metrics").is_ok() {
                return Some(ne);
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "node_exporter {args:?} does not answer on 127.0.0.1:{port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `GET path` over HTTP/1.0: the body of a 200 answer.
    fn get(&self, path: &str) -> Result<String, String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        write!(
            s,
            "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/plain;version=0.0.4\r\n\r\n"
        )
        .map_err(|e| e.to_string())?;
        let mut text = String::new();
        s.read_to_string(&mut text).map_err(|e| e.to_string())?;
        let (head, body) = text.split_once("\r\n\r\n").ok_or("no HTTP header")?;
        let status = head.lines().next().unwrap_or_default();
        if status.split_whitespace().nth(1) != Some("200") {
            return Err(format!("answer {status}"));
        }
        Ok(body.to_string())
    }

    /// The `/metrics` page.
    pub fn scrape(&self) -> String {
        self.get("/metrics")
            .unwrap_or_else(|e| panic!("scraping node_exporter: {e}"))
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One sample of an exposition: metric name, labels, value.
pub type Sample = (String, BTreeMap<String, String>, f64);

/// Every sample of a text exposition (comments skipped). Label values
/// with escapes or commas are not expected here and not supported.
pub fn parse(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (series, value) = line.rsplit_once(' ').expect("`series value`");
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("value in {line:?}"));
        let (name, labels) = match series.split_once('{') {
            Some((n, rest)) => {
                let body = rest.strip_suffix('}').expect("closing brace");
                let labels = body
                    .split(',')
                    .filter(|kv| !kv.is_empty())
                    .map(|kv| {
                        let (k, v) = kv.split_once('=').expect("label=value");
                        (k.to_string(), v.trim_matches('"').to_string())
                    })
                    .collect();
                (n.to_string(), labels)
            }
            None => (series.to_string(), BTreeMap::new()),
        };
        out.push((name, labels, value));
    }
    out
}

/// The value of the one sample of `name` whose labels include `labels`;
/// fails the test if there is none or more than one.
pub fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let found: Vec<f64> = samples
        .iter()
        .filter(|(n, l, _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.get(*k).is_some_and(|x| x == v))
        })
        .map(|s| s.2)
        .collect();
    assert_eq!(found.len(), 1, "{name}{labels:?}: {found:?}");
    found[0]
}
