//! The `analyze` subcommand: flags, output to stdout or a file renamed
//! into place, warnings on stderr.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::Outcome;
use crate::export::Format;
use crate::flags::{AnalysisFailed, AnalysisFlags, FlagError, after_help, parse_duration};

/// `roce-pcap analyze --help`, after the flags and before the exit status.
const ANALYZE_EXAMPLES: &str = "\
Examples (from the repository root; the first after `rocesim run scenarios/lag_hash.toml`):
  roce-pcap analyze runs/lag_hash/hostA.eth0.pcap runs/lag_hash/hostA.eth1.pcap
  roce-pcap analyze traces/analyze_slave0.pcapng traces/analyze_slave1.pcap.gz --format json --qp 0x12
  roce-pcap analyze runs/lag_hash --html runs/lag_hash/report.html
  tcpdump -i eth0 -U -w - | roce-pcap analyze - --interval 1s";

/// Arguments of `roce-pcap analyze`.
#[derive(Debug, clap::Args)]
#[command(after_help = after_help(ANALYZE_EXAMPLES, "report", "analyzed"))]
pub struct Args {
    #[command(flatten)]
    pub analysis: AnalysisFlags,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the report here instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print a short per-QP summary of every interval of capture time (e.g. 1s,
    /// 100ms) while the captures stream in, then the full report at the end;
    /// with --format json or csv the report needs -o FILE.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub interval: Option<u64>,
    /// Also write a self-contained HTML report (tables, inline SVG plots; for
    /// a rocesim run directory also its summary.json tables) here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Errors of the command: the analysis (or a flag), or writing the output.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Analysis(#[from] AnalysisFailed),
    #[error(transparent)]
    Plot(#[from] crate::plot::PlotError),
    #[error(transparent)]
    Flag(#[from] FlagError),
    #[error("writing {what}")]
    Output {
        what: String,
        #[source]
        source: io::Error,
    },
}

/// Writes through `f` to `path` via a temporary file in the same
/// directory, renamed into place only when everything was written, so a
/// failed run never leaves half a report. Devices and FIFOs are written in
/// place.
pub(crate) fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    // A device, FIFO or socket (`-o /dev/null`, `-o >(gzip > r.gz)`) is
    // written in place: renaming a temp file over it would replace the
    // device node itself with a regular file.
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            let mut w = BufWriter::new(std::fs::OpenOptions::new().write(true).open(path)?);
            f(&mut w)?;
            return w.flush();
        }
    }
    // Through a symlink, replace the file it points at, not the link.
    let resolved = std::fs::canonicalize(path).ok();
    let path = resolved.as_deref().unwrap_or(path);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut w = BufWriter::new(std::fs::File::create(&tmp)?);
        f(&mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

pub fn run(args: &Args) -> Result<Outcome, CliError> {
    if args.interval.is_some() && args.format != Format::Table && args.output.is_none() {
        return Err(FlagError {
            flag: "--interval",
            message: "the summaries go to stdout, where a json or csv report would be mixed with them: give -o FILE".into(),
        }
        .into());
    }
    let mut print = |r: &crate::analyze::IntervalReport| {
        let mut out = io::stdout().lock();
        // A closed pipe shows when the report is written.
        let _ = out
            .write_all(r.text().as_bytes())
            .and_then(|()| out.flush());
    };
    let every = args.interval.map(|ns| {
        (
            ns,
            &mut print as &mut dyn FnMut(&crate::analyze::IntervalReport),
        )
    });
    let keep = crate::flags::Keep {
        series: args.html.is_some(),
        ..Default::default()
    };
    let analyzed = args.analysis.analyze_as(keep, every)?;
    if args.interval.is_some() && args.output.is_none() {
        // A closed pipe shows when the report is written.
        let _ = writeln!(io::stdout());
    }
    if let Some(path) = &args.html {
        let page = crate::html::analyze_page(&analyzed)?;
        write_atomically(path, |w| w.write_all(page.as_bytes())).map_err(|source| {
            CliError::Output {
                what: path.display().to_string(),
                source,
            }
        })?;
    }
    let analysis = analyzed.analysis;
    let exporter = args.format.exporter();
    match &args.output {
        Some(path) => {
            write_atomically(path, |w| exporter.write(&analysis.report, w)).map_err(|source| {
                CliError::Output {
                    what: path.display().to_string(),
                    source,
                }
            })?
        }
        None => {
            let stdout = io::stdout();
            let mut w = BufWriter::new(stdout.lock());
            exporter
                .write(&analysis.report, &mut w)
                .and_then(|_| w.flush())
                .map_err(|source| CliError::Output {
                    what: "stdout".into(),
                    source,
                })?;
        }
    }
    for w in &analysis.warnings {
        eprintln!("roce-pcap: warning: {w}");
    }
    Ok(analysis.outcome())
}

#[cfg(test)]
mod write_tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn special_files_are_written_in_place_not_replaced() {
        let dir = std::env::temp_dir().join(format!("roce-pcap-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("out.fifo");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipping: mkfifo is not available");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_atomically(&fifo, |w| w.write_all(b"report\n")).unwrap();
        // Checked before joining: had the FIFO been renamed over, the reader
        // would wait on it forever.
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert_eq!(reader.join().unwrap(), "report\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn regular_files_and_symlinks_are_replaced_atomically() {
        let dir = std::env::temp_dir().join(format!("roce-pcap-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("report.json");
        std::fs::write(&target, "old").unwrap();
        let link = dir.join("latest.json");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomically(&link, |w| w.write_all(b"new")).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
