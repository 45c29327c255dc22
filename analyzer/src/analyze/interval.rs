//! Summaries while a capture streams in (`analyze --interval 1s`): every
//! interval of capture time, what each request flow did in it.
//!
//! ```text
//!  merged events ──▶ before(ts): ts past the interval's end? ──yes──▶ per flow: counters now - counters then
//!                    (then the flow table takes the event)                  └─▶ IntervalReport ──▶ the caller
//! ```
//!
//! Intervals are cut on the frames' timestamps, from the first frame, so
//! the same capture gives the same summaries whether it is read from a
//! file or from a live pipe; a live pipe shows an interval as soon as the
//! first frame after it arrives. The state is one set of counters per flow
//! (what it had at the last cut): nothing per packet, no second pass.
//! Intervals without frames are reported as one quiet stretch.

use roce_capture::human::{plural, rate, table};

use super::flow::Flow;
use super::flow_table::FlowTable;
use super::model::flow_label;

/// What one request flow did in one interval.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalFlow {
    /// The flow's number in the final report (`qps[].id`).
    pub id: usize,
    /// `src:requester_qpn -> dst:responder_qpn`.
    pub flow: String,
    pub packets: u64,
    /// First-transmission payload over the interval, Gb/s.
    pub goodput_gbps: f64,
    pub retransmitted_packets: u64,
    pub naks: u64,
    pub cnps: u64,
    pub ecn_ce_packets: u64,
}

/// One interval: from `start_ns` to `end_ns` since the first frame.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalReport {
    pub start_ns: u64,
    pub end_ns: u64,
    /// The interval asked for (what the times are written in units of).
    pub every_ns: u64,
    /// The flows with packets in the interval, by number.
    pub flows: Vec<IntervalFlow>,
    /// No frame at all came in this stretch (several intervals at once).
    pub quiet: bool,
}

impl IntervalReport {
    /// As `analyze --interval` prints it: a line, then a table of the
    /// flows that had packets.
    pub fn text(&self) -> String {
        let (div, unit) = match self.every_ns {
            n if n >= 1_000_000_000 => (1e9, "s"),
            n if n >= 1_000_000 => (1e6, "ms"),
            n if n >= 1_000 => (1e3, "µs"),
            _ => (1.0, "ns"),
        };
        let t = |ns: u64| ns as f64 / div;
        let span = format!("[{:.3}-{:.3} {unit}]", t(self.start_ns), t(self.end_ns));
        if self.quiet {
            return format!("{span} no RoCE or PAUSE frames\n");
        }
        if self.flows.is_empty() {
            return format!("{span} no RoCE requests\n");
        }
        let sum = |f: fn(&IntervalFlow) -> u64| self.flows.iter().map(f).sum::<u64>();
        let mut out = format!(
            "{span} {}, {} goodput, {} retransmitted, {}, {}\n",
            plural(self.flows.len() as u64, "flow"),
            rate(self.flows.iter().map(|f| f.goodput_gbps).sum()),
            sum(|f| f.retransmitted_packets),
            plural(sum(|f| f.naks), "NAK"),
            plural(sum(|f| f.cnps), "CNP")
        );
        let mut rows = vec![
            [
                "#", "flow", "goodput", "packets", "retx", "NAKs", "CNPs", "CE",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for f in &self.flows {
            rows.push(vec![
                f.id.to_string(),
                f.flow.clone(),
                rate(f.goodput_gbps),
                f.packets.to_string(),
                f.retransmitted_packets.to_string(),
                f.naks.to_string(),
                f.cnps.to_string(),
                f.ecn_ce_packets.to_string(),
            ]);
        }
        for line in table(&rows).lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// The counters of a flow that an interval reports the growth of.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    packets: u64,
    goodput_bytes: u64,
    retransmitted: u64,
    naks: u64,
    cnps: u64,
    ce: u64,
}

impl Counters {
    fn of(f: &Flow) -> Counters {
        Counters {
            packets: f.packets,
            goodput_bytes: f.goodput_bytes,
            retransmitted: f.retransmitted_packets,
            naks: f.naks.values().sum(),
            cnps: f.cnps,
            ce: f.ecn_ce_packets,
        }
    }
}

/// Cuts the merged stream into intervals and reports each.
pub(crate) struct IntervalTracker<'a> {
    every_ns: u64,
    origin: Option<u64>,
    /// The end of the current interval (absolute ns).
    end: u64,
    /// Counters of each flow at the last cut.
    then: Vec<Counters>,
    /// Only flows whose responder or requester QPN is this.
    qp: Option<u32>,
    /// A frame came since the last cut.
    pending: bool,
    last_ts: u64,
    out: &'a mut dyn FnMut(&IntervalReport),
}

impl<'a> IntervalTracker<'a> {
    pub fn new(
        every_ns: u64,
        qp: Option<u32>,
        out: &'a mut dyn FnMut(&IntervalReport),
    ) -> IntervalTracker<'a> {
        IntervalTracker {
            every_ns: every_ns.max(1),
            origin: None,
            end: 0,
            then: Vec::new(),
            qp,
            pending: false,
            last_ts: 0,
            out,
        }
    }

    /// Called with each frame's time before the flow table takes it: cuts
    /// the intervals that ended before it.
    pub fn before(&mut self, ts: u64, table: &FlowTable) {
        let origin = *self.origin.get_or_insert_with(|| {
            self.end = ts.saturating_add(self.every_ns);
            ts
        });
        if ts >= self.end {
            self.cut(self.end - self.every_ns, self.end, table);
            let skipped = (ts - self.end) / self.every_ns;
            if skipped > 0 {
                let quiet_end = self.end + skipped * self.every_ns;
                (self.out)(&IntervalReport {
                    start_ns: self.end - origin,
                    end_ns: quiet_end - origin,
                    every_ns: self.every_ns,
                    flows: Vec::new(),
                    quiet: true,
                });
                self.end = quiet_end;
            }
            self.end += self.every_ns;
        }
        self.pending = true;
        self.last_ts = self.last_ts.max(ts);
    }

    /// At the end of the stream: the interval in progress, up to the last
    /// frame.
    pub fn finish(&mut self, table: &FlowTable) {
        if self.pending {
            let start = self.end - self.every_ns;
            self.cut(start, self.last_ts.max(start + 1), table);
        }
    }

    fn cut(&mut self, start: u64, end: u64, table: &FlowTable) {
        let origin = self.origin.unwrap_or(start);
        let width = (end - start).max(1) as f64;
        self.then.resize(table.flows.len(), Counters::default());
        let mut flows = Vec::new();
        for (id, (f, then)) in table.flows.iter().zip(&mut self.then).enumerate() {
            let now = Counters::of(f);
            let packets = now.packets - then.packets;
            let wanted = self
                .qp
                .is_none_or(|q| f.key.qpn == q || f.requester_qpn == Some(q));
            if packets > 0 && wanted {
                flows.push(IntervalFlow {
                    id,
                    flow: flow_label(f.key.src, f.requester_qpn, f.key.dst, f.key.qpn),
                    packets,
                    goodput_gbps: (now.goodput_bytes - then.goodput_bytes) as f64 * 8.0 / width,
                    retransmitted_packets: now.retransmitted - then.retransmitted,
                    naks: now.naks - then.naks,
                    cnps: now.cnps - then.cnps,
                    ecn_ce_packets: now.ce - then.ce,
                });
            }
            *then = now;
        }
        (self.out)(&IntervalReport {
            start_ns: start - origin,
            end_ns: end - origin,
            every_ns: self.every_ns,
            flows,
            quiet: false,
        });
        self.pending = false;
    }
}
