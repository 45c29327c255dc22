//! Self-contained HTML reports: `analyze --html FILE` and `compare --html
//! FILE`. One file that needs nothing else: the style is in the page, the
//! plots are inline SVG, nothing is fetched and no script runs, so it reads
//! the same offline, from a mail attachment or from a CI artifact.
//!
//! ```text
//!  analyze:  summary line, files, request flows, PFC, bond slaves and QP map, findings, plots,
//!            and for a rocesim run directory the simulator's own summary.json tables (run.rs)
//!  compare:  sides, flows (goodput/messages; loss/congestion/slave), slaves, PFC, notes, plots,
//!            and each run directory's summary.json tables
//! ```

mod analyze;
mod run;

use std::fmt::Write;

pub use self::analyze::analyze_page;

use crate::compare::Comparison;
use crate::compare::table::{
    FLOW_LOSS_TITLE, FLOW_RATE_TITLE, NO_PFC, PFC_TITLE, SLAVES_TITLE, flow_loss_rows,
    flow_rate_rows, pfc_table_rows, side_rows, slave_table_rows,
};
use crate::flags::Analyzed;
use crate::plot::PlotError;
use crate::plot::compare::{A_COLOR, B_COLOR};

/// `&`, `<`, `>`, `"` and `'` as entities.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A page being written: sections in order, then [`Page::finish`].
struct Page {
    title: String,
    body: String,
    toc: Vec<(String, String)>,
}

impl Page {
    fn new(title: &str) -> Page {
        Page {
            title: title.to_string(),
            body: String::new(),
            toc: Vec::new(),
        }
    }

    /// A section heading, listed in the contents.
    fn h2(&mut self, id: &str, text: &str) {
        self.toc.push((id.to_string(), text.to_string()));
        let _ = writeln!(self.body, "<h2 id=\"{id}\">{}</h2>", escape(text));
    }

    fn h3(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h3>{}</h3>", escape(text));
    }

    fn p(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    /// Items of a list, each with an optional CSS class.
    fn list(&mut self, items: &[(Option<&str>, String)]) {
        self.body.push_str("<ul>\n");
        for (class, text) in items {
            match class {
                Some(c) => {
                    let _ = writeln!(self.body, "<li class=\"{c}\">{}</li>", escape(text));
                }
                None => {
                    let _ = writeln!(self.body, "<li>{}</li>", escape(text));
                }
            }
        }
        self.body.push_str("</ul>\n");
    }

    /// Rows of cells, the first row the header.
    fn table(&mut self, rows: &[Vec<String>]) {
        let Some((head, rest)) = rows.split_first() else {
            return;
        };
        self.body
            .push_str("<div class=\"wide\"><table>\n<thead><tr>");
        for h in head {
            let _ = write!(self.body, "<th>{}</th>", escape(h));
        }
        self.body.push_str("</tr></thead>\n<tbody>\n");
        for r in rest {
            self.body.push_str("<tr>");
            for c in r {
                let _ = write!(self.body, "<td>{}</td>", escape(c));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</tbody></table></div>\n");
    }

    /// A plot (SVG text from plotters, which escapes its own text) with its
    /// caption.
    fn figure(&mut self, svg: &str, caption: &str) {
        let _ = writeln!(
            self.body,
            "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
            svg.trim(),
            escape(caption)
        );
    }

    fn finish(self) -> String {
        let mut toc = String::new();
        for (id, text) in &self.toc {
            let _ = write!(toc, "<li><a href=\"#{id}\">{}</a></li>", escape(text));
        }
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<style>\n{style}</style>\n</head>\n<body>\n\
             <h1>{title}</h1>\n<nav><ul>{toc}</ul></nav>\n{body}\
             <footer>Written by roce-pcap {version}. Self-contained: no scripts, no external resources.</footer>\n\
             </body>\n</html>\n",
            title = escape(&self.title),
            body = self.body,
            version = env!("CARGO_PKG_VERSION"),
            style = style(),
        )
    }
}

const STYLE: &str = "\
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { font-size: 1.05em; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.3em 1.2em; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; }
tbody tr:nth-child(even) { background: #fafafa; }
td:first-child, th:first-child { text-align: left; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
.error { color: #b00020; } .warning { color: #a65e00; } .info { color: #555; }
.a { color: A_COLOR; font-weight: bold; } .b { color: B_COLOR; font-weight: bold; }
footer { margin-top: 3em; font-size: 0.8em; color: #777; }
";

fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// The page of `compare --html`: the tables of the text report, the
/// pictures of `compare --out`, the run summaries of run directories.
pub fn compare_page(
    a: &Analyzed,
    b: &Analyzed,
    c: &Comparison,
    flow: Option<usize>,
) -> Result<String, PlotError> {
    let mut page = Page::new(&format!(
        "roce-pcap compare: {} and {}",
        c.a.input, c.b.input
    ));
    page.p(&c.match_line());
    let _ = writeln!(
        page.body,
        "<p>A is <span class=\"a\">blue</span> and B is <span class=\"b\">orange</span> in every plot.</p>"
    );
    page.h2("sides", "Sides");
    page.table(&side_rows(c));
    page.h2("flows", "Flows");
    if c.flows.is_empty() {
        page.p("No RoCE request flows on either side.");
    } else {
        page.h3(FLOW_RATE_TITLE);
        page.table(&flow_rate_rows(c));
        page.h3(FLOW_LOSS_TITLE);
        page.table(&flow_loss_rows(c));
    }
    page.h2("slaves", "Slaves");
    page.h3(SLAVES_TITLE);
    page.table(&slave_table_rows(c));
    page.h2("pfc", "PFC / PAUSE");
    page.h3(PFC_TITLE);
    let pfc = pfc_table_rows(c);
    if pfc.is_empty() {
        page.p(NO_PFC);
    } else {
        page.table(&pfc);
    }
    if !c.notes.is_empty() {
        page.h2("notes", "Notes");
        let notes: Vec<(Option<&str>, String)> = c
            .notes
            .iter()
            .map(|n| (Some("warning"), n.clone()))
            .collect();
        page.list(&notes);
    }
    page.h2("plots", "Plots");
    let row = crate::plot::compare::tsg_row(c, flow);
    for (name, svg) in crate::plot::compare::svgs(a, b, c, flow)? {
        let caption = match name.as_str() {
            "compare_goodput" => "Goodput of all request flows over time, A and B from their own first frame.".to_string(),
            "compare_slaves" => "RoCE payload per bond slave over time: the i-th capture of A beside the i-th of B, one y scale for all.".to_string(),
            "compare_tsg" => match row {
                Some(r) => format!("PSN time-sequence of flow #{r} of the flow tables, from its first packet on each side."),
                None => "PSN time-sequence: no flow.".to_string(),
            },
            "compare_pfc" => "Paused intervals per capture, sender and priority: A's rows, then B's.".to_string(),
            _ => "ECN-CE marked packets and CNPs per second, A and B.".to_string(),
        };
        page.figure(&svg, &caption);
    }
    for (label, s) in [("A", a), ("B", b)] {
        if let Some(run) = s.inputs.run() {
            run::sections(
                &mut page,
                &format!("run-{}", label.to_lowercase()),
                &format!("{label}: "),
                run,
            );
        }
    }
    Ok(page.finish())
}

fn style() -> String {
    STYLE
        .replace("A_COLOR", &hex(A_COLOR))
        .replace("B_COLOR", &hex(B_COLOR))
}
